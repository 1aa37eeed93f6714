/** The run's events: the pacing figures and the report writer are subscribers. */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunEvents, plannedCheck } from '../../src/engine/events.js';
import { pacingCollector } from '../../src/engine/pacing-collector.js';
import type { RunStats } from '../../src/engine/schedule.js';
import type { CheckResult } from '../../src/engine/types.js';
import { runConformance } from '../../src/run/index.js';

const stats = (requests: number, paced: number): RunStats => ({
  requests,
  unplanned429: 0,
  pacedByClient: { main: paced },
  tokenRequests: 2,
  limits: { perKeyPerWindow: 60, windowSec: 60, tokenLifetimeSec: 300, tokenIssuancePerWindow: 20 },
});
const result = (id: string, outcome: CheckResult['outcome']) => ({ id, outcome }) as CheckResult;

describe('pacingCollector', () => {
  it('keeps the latest traffic and the wait windows of the checks that ran', () => {
    const events = new RunEvents();
    const pacing = pacingCollector();
    events.subscribe(pacing.subscriber);
    expect(pacing.figures(1000)).toBeUndefined();
    const finish = (id: string, outcome: CheckResult['outcome'], waitWindows: number | undefined, s: RunStats, index: number) =>
      events.emit({
        type: 'check-finished',
        check: plannedCheck({ id, title: id, area: 'rate-limit', ...(waitWindows !== undefined ? { waitWindows } : {}) }, 'exhausting'),
        result: result(id, outcome),
        index,
        total: 3,
        stats: s,
      });
    finish('rate-limit.a', 'pass', 1, stats(10, 8), 0);
    finish('rate-limit.b', 'skip', 3, stats(20, 18), 1); // skipped: its waits were not spent
    finish('rate-limit.c', 'pass', 1.5, stats(130, 120), 2);
    const f = pacing.figures(300_000)!;
    expect(f.requests).toBe(130);
    expect(f.pacedRequests).toBe(120);
    // 120 paced at 60 a minute = 120 s, plus the largest wait of a check that ran (1.5 windows = 90 s); the token lifetime (300 s) bounds.
    expect(f.requiredWaitsS).toBe(90);
    expect(f.boundS).toBe(300);
    expect(f.boundBy).toBe('token lifetime');
  });
});

describe('run-finished', () => {
  it('carries the run result reporters consume; the report writer is a subscriber', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fhirc-events-'));
    try {
      const seen: string[] = [];
      const run = await runConformance({
        profile: 'quick',
        only: '^discovery\\.metadata',
        progress: false,
        reportsRoot: dir,
        subscribers: [
          (e) => {
            if (e.type === 'run-finished') seen.push(`${e.result.info.profile}:${e.result.checks.length}:${e.result.info.exitCode}`);
          },
        ],
      });
      expect(run.results.length).toBeGreaterThan(0);
      expect(seen).toEqual([`quick:${run.results.length}:0`]);
      expect(run.reportDir).toBeDefined();
      expect(existsSync(join(run.reportDir!, 'report.json'))).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
