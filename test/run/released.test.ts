/**
 * A finished run keeps nothing alive: a process that makes many runs (the fault shards, the test
 * workers) holds none of them once they end. The expiry probe's timer (a token lifetime less a
 * margin) outlived its run and held the whole runtime until it fired: at the spec's 300 s lifetime,
 * every run of the last four and a half minutes. In a child process with `--expose-gc` (exposing it
 * here would change this worker's V8 flags, which the kept code caches are checked against).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/paths.js';

// Five runs, each with a subscriber of its own (the run's events hold it, the runtime holds the events),
// made in a function whose frame (which holds the last one) is gone when it returns; then collected.
const script = `
import { runInProcess } from './src/run/in-process.ts';
import checks from './suites/discovery/checks.ts';
const one = checks.filter((c) => c.id === 'discovery.openapi-version');
async function fiveRuns() {
  const alive = [];
  for (let i = 0; i < 5; i++) {
    const subscriber = () => undefined;
    alive.push(new WeakRef(subscriber));
    await runInProcess(one, { profile: 'full', limits: { tokenLifetimeSec: 300 }, subscribers: [subscriber] });
  }
  return alive;
}
const alive = await fiveRuns();
for (let i = 0; i < 3; i++) { await new Promise((r) => setImmediate(r)); globalThis.gc(); }
process.stdout.write(JSON.stringify({ checks: one.length, alive: alive.filter((w) => w.deref() !== undefined).length }));
`;

describe('a finished run', () => {
  it('is released at once: the subscribers of five full-profile runs (300 s tokens) are collected after they end', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: PROJECT_ROOT,
      timeout: 60_000,
    });
    expect(JSON.parse(stdout)).toEqual({ checks: 1, alive: 0 });
  }, 90_000);
});
