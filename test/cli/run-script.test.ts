/**
 * bin/run-script.js: a checkout's run script runs with a V8 code cache per command beside it,
 * made at the end of a process that had none (or one V8 rejected), used by the next.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error plain JavaScript module of the bin, without types
import { cacheFileOf, loadScript } from '../../bin/run-script.js';

/** Loads `file` and runs its main, as the bin does. */
const runScript = (file: string, argv: string[]): Promise<number> => loadScript(file, argv)();

const dirs: string[] = [];
function scriptFile(body: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'run-script-'));
  dirs.push(dir);
  const file = join(dir, 'run.cjs');
  writeFileSync(file, body);
  return file;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  delete process.env.FHIR_CONFORMANCE_CODE_CACHE;
});

/** The cache file of `command` beside `file` (named after the process's flags too: vitest's worker has some). */
const cacheOf = (file: string, command: string): string => cacheFileOf(file, [command]) as string;

const SCRIPT = `const path = require('node:path');
exports.main = async (argv) => { const f = (n) => n * 2; return f(argv.length) + (path.basename(__filename) === 'run.cjs' ? 1 : 100); };`;

describe('loadScript', () => {
  it("names a process's cache after its flags: processes with other flags keep their own", async () => {
    const file = scriptFile(SCRIPT);
    const { execFileSync } = await import('node:child_process');
    const runner = new URL('../../bin/run-script.js', import.meta.url).href;
    const code = `const { loadScript } = await import(${JSON.stringify(runner)}); process.exitCode = (await loadScript(${JSON.stringify(file)}, ['run'])()) === 3 ? 0 : 1;`;
    const env = { ...process.env, NODE_OPTIONS: '' };
    execFileSync(process.execPath, ['--input-type=module', '-e', code], { env });
    execFileSync(process.execPath, ['--max-semi-space-size=32', '--input-type=module', '-e', code], { env });
    const names = readdirSync(dirname(file))
      .filter((n) => n.endsWith('.v8'))
      .sort();
    // One cache per set of flags (--input-type=module, then with --max-semi-space-size too).
    expect(names).toHaveLength(2);
    for (const n of names) expect(n).toMatch(/^run\.cjs\.run\.[0-9a-f]{12}\.v8$/);
  });

  it("returns main's exit code; a process without a cache leaves one for its command, which the next accepts", async () => {
    const file = scriptFile(SCRIPT);
    expect(await runScript(file, ['run', '--profile', 'quick'])).toBe(7);
    const cache = cacheOf(file, 'run');
    expect(existsSync(cache)).toBe(true);
    const made = readFileSync(cache);
    expect(await runScript(file, ['run'])).toBe(3);
    expect(readFileSync(cache).equals(made)).toBe(true); // accepted, not made again
    expect(await runScript(file, ['faults'])).toBe(3);
    expect(existsSync(cacheOf(file, 'faults'))).toBe(true);
    expect(await runScript(file, ['--help'])).toBe(3);
    expect(existsSync(cacheOf(file, 'other'))).toBe(true);
  });

  it('a cache made by a short run is made again by a run that used more than twice its CPU, not by one of its size', async () => {
    // Spins for argv[1] ms of CPU (not of wall time: a loaded machine would stretch the one, not the other).
    const file = scriptFile(
      `exports.main = async (argv) => { const from = process.cpuUsage(); let x = 0; for (;;) { x++; const u = process.cpuUsage(from); if ((u.user + u.system) / 1000 >= Number(argv[1])) break; } return x > 0 ? 0 : 1; };`,
    );
    const cache = cacheOf(file, 'run');
    const maker = () => Number(readFileSync(`${cache}.cpu`, 'utf8'));
    expect(await runScript(file, ['run', '40'])).toBe(0);
    const short = maker();
    expect(short).toBeGreaterThan(0);
    expect(await runScript(file, ['run', '40'])).toBe(0);
    expect(maker()).toBe(short); // a run of its size keeps it
    expect(await runScript(file, ['run', String(Math.max(400, 6 * short))])).toBe(0);
    expect(maker()).toBeGreaterThan(2 * short); // made again by the longer run
  });

  it('makes a damaged cache again, and the script still runs', async () => {
    const file = scriptFile(SCRIPT);
    const cache = cacheOf(file, 'run');
    writeFileSync(cache, 'not a code cache');
    expect(await runScript(file, ['run'])).toBe(3);
    expect(readFileSync(cache, 'utf8')).not.toBe('not a code cache');
  });

  it('keeps no cache with FHIR_CONFORMANCE_CODE_CACHE=0', async () => {
    const file = scriptFile(SCRIPT);
    process.env.FHIR_CONFORMANCE_CODE_CACHE = '0';
    expect(await runScript(file, ['run'])).toBe(3);
    expect(readdirSync(dirname(file)).filter((n) => n.endsWith('.v8'))).toEqual([]);
  });

  it('loadScript throws before running anything for a script that does not load or has no main (the bin then runs the ES modules)', () => {
    expect(() => loadScript(scriptFile('exports.main = async () => {'), ['run'])).toThrow(SyntaxError);
    expect(() => loadScript(scriptFile('exports.notMain = 1;'), ['run'])).toThrow(/exports no main/);
    let ran = false;
    const file = scriptFile(SCRIPT.replace('exports.main = async (argv) => {', 'exports.main = async (argv) => { globalThis.__ranMain = true;'));
    const run = loadScript(file, ['run']);
    ran = (globalThis as { __ranMain?: boolean }).__ranMain === true;
    expect(ran).toBe(false);
    return run().then((code: number) => {
      expect(code).toBe(3);
      expect((globalThis as { __ranMain?: boolean }).__ranMain).toBe(true);
      delete (globalThis as { __ranMain?: boolean }).__ranMain;
    });
  });
});
