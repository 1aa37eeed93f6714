/**
 * src/validator-cache.ts: kept standalone modules load from V8's code cache of them, written at the
 * exit of a process that loaded one without a usable cache, and named after the code's digest.
 * Each load runs in a process of its own (V8 also keeps compiled scripts within a process).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keepModule } from '../src/validator-cache.js';

const SRC = pathToFileURL(resolve(import.meta.dirname, '../src/validator-cache.ts')).href;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kept-modules-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const caches = () =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.v8'))
    .sort();
const CODE = (n: number) =>
  `"use strict"; const h = require('node:path'); module.exports = function double(x) { return ${n} * x + h.basename('/a/b').length - 1; };`;

/** Loads the kept module `m` in a new process and calls it with `x`. */
function loadInProcess(x: number): number {
  const script = `import { createRequire } from 'node:module'; const { keptModule } = await import(${JSON.stringify(SRC)}); const f = keptModule('m', createRequire(import.meta.url), ${JSON.stringify(dir)}); process.stdout.write(String(f(Number(process.env.X))));`;
  const env = { ...process.env, NODE_OPTIONS: '', X: String(x) };
  return Number(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', env }));
}

describe('keptModule: code caches of the kept modules', () => {
  it('a process that loads a module without a cache leaves one, named after its code; the next process uses it', () => {
    keepModule('m', CODE(2), dir);
    expect(loadInProcess(5)).toBe(10);
    expect(caches()).toEqual([expect.stringMatching(/^m\.cjs\.[0-9a-f]{16}\.v8$/)]);
    const [cache] = caches();
    const made = statSync(join(dir, cache!)).mtimeMs;
    const bytes = readFileSync(join(dir, cache!));
    expect(loadInProcess(7)).toBe(14);
    expect(statSync(join(dir, cache!)).mtimeMs).toBe(made); // accepted: not written again
    expect(readFileSync(join(dir, cache!)).equals(bytes)).toBe(true);
  }, 30_000);

  it('a damaged cache is not used and is written again; the module still loads', () => {
    keepModule('m', CODE(2), dir);
    loadInProcess(1);
    const [cache] = caches();
    writeFileSync(join(dir, cache!), 'not a code cache');
    expect(loadInProcess(3)).toBe(6);
    expect(readFileSync(join(dir, cache!), 'utf8')).not.toBe('not a code cache');
  }, 30_000);

  it("new code under the name drops the old code's cache, even code of the same length", () => {
    keepModule('m', CODE(2), dir);
    loadInProcess(1);
    const [old] = caches();
    keepModule('m', CODE(3), dir);
    expect(caches()).toEqual([]);
    expect(loadInProcess(5)).toBe(15);
    expect(caches()).toHaveLength(1);
    expect(caches()).not.toContain(old);
  }, 30_000);
});
