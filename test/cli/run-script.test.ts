/**
 * bin/run-script.js: a checkout's run script runs with a V8 code cache per command beside it,
 * made at the end of a process that had none (or one V8 rejected), used by the next.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error plain JavaScript module of the bin, without types
import { runScript } from '../../bin/run-script.js';

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

const SCRIPT = `const path = require('node:path');
exports.main = async (argv) => { const f = (n) => n * 2; return f(argv.length) + (path.basename(__filename) === 'run.cjs' ? 1 : 100); };`;

describe('runScript', () => {
  it("returns main's exit code; a process without a cache leaves one for its command, which the next accepts", async () => {
    const file = scriptFile(SCRIPT);
    expect(await runScript(file, ['run', '--profile', 'quick'])).toBe(7);
    const cache = `${file}.run.v8`;
    expect(existsSync(cache)).toBe(true);
    const made = readFileSync(cache);
    expect(await runScript(file, ['run'])).toBe(3);
    expect(readFileSync(cache).equals(made)).toBe(true); // accepted, not made again
    expect(await runScript(file, ['faults'])).toBe(3);
    expect(existsSync(`${file}.faults.v8`)).toBe(true);
    expect(await runScript(file, ['--help'])).toBe(3);
    expect(existsSync(`${file}.other.v8`)).toBe(true);
  });

  it('makes a damaged cache again, and the script still runs', async () => {
    const file = scriptFile(SCRIPT);
    writeFileSync(`${file}.run.v8`, 'not a code cache');
    expect(await runScript(file, ['run'])).toBe(3);
    expect(readFileSync(`${file}.run.v8`, 'utf8')).not.toBe('not a code cache');
  });

  it('keeps no cache with FHIR_CONFORMANCE_CODE_CACHE=0', async () => {
    const file = scriptFile(SCRIPT);
    process.env.FHIR_CONFORMANCE_CODE_CACHE = '0';
    expect(await runScript(file, ['run'])).toBe(3);
    expect(existsSync(`${file}.run.v8`)).toBe(false);
  });
});
