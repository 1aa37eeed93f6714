/**
 * bin/run-cache.js: a checkout runs its sources transpiled into node_modules/.cache/fhir-conformance/run,
 * and the modules a run imports bundled into a directory of their own (bundles/<key>). The bundle must
 * keep one instance of every module (nothing it imports is outside it; it is made under a temporary
 * name and renamed whole), and each module must find what lies beside its source (its `import.meta.url` is its
 * path in the bundle's layout).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type Graph, reach } from '../architecture/graph.js';
// @ts-expect-error plain JavaScript module of the bin, without types
import { prepareRunCache } from '../../bin/run-cache.js';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);
const CACHE = join(ROOT, 'node_modules', '.cache', 'fhir-conformance');

/** Every JavaScript file of the bundle directory and what it imports by a relative specifier (static and dynamic string literals), as absolute paths. */
function bundleGraph(dir: string): Graph {
  const graph: Graph = new Map();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.js')) continue;
    const file = join(entry.parentPath, entry.name);
    const text = readFileSync(file, 'utf8');
    graph.set(
      file,
      [...text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)].map((m) => resolve(dirname(file), m[1]!)),
    );
  }
  return graph;
}

/** What a run imports by computed paths: the CLI, each suite's checks, each fault module. */
function entries(dir: string): string[] {
  return [
    'src/cli.js',
    ...readdirSync(join(ROOT, 'suites'))
      .filter((f) => existsSync(join(ROOT, 'suites', f, 'checks.ts')))
      .map((f) => `suites/${f}/checks.js`),
    ...readdirSync(join(ROOT, 'src/reference/faults'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => `src/reference/faults/${f.replace(/\.ts$/, '.js')}`),
  ].map((rel) => join(dir, rel));
}

describe('the run cache of a checkout', () => {
  it('runs a bundle of its own directory: the entries at their own paths, the shared modules in its chunks, nothing imported from outside', async () => {
    const dir = (await prepareRunCache(ROOT)) as string;
    expect(relative(CACHE, dir)).toMatch(/^bundles\/[0-9a-f]{24}$/);
    const roots = entries(dir);
    const seen = reach(bundleGraph(dir), roots);
    for (const file of seen) expect(existsSync(file), relative(dir, file)).toBe(true);
    const strays = [...seen].filter((f) => !roots.includes(f) && !relative(dir, f).startsWith('chunks/'));
    expect(strays.map((f) => relative(dir, f))).toEqual([]);
    expect([...seen].filter((f) => f.includes('/chunks/')).length).toBeGreaterThan(5);
    // The per-file outputs stay as they were (they run when there is no bundle): the CLI there imports its modules one by one.
    expect(readFileSync(join(CACHE, 'run', 'src', 'cli.js'), 'utf8')).toContain('from "./errors.js"');
    // What modules read beside themselves is in the bundle's layout: assets, schemas, their own text.
    for (const rel of ['src/report/assets/report.css', 'src/config/config.schema.json', 'fhir-schemas/r4.schema.json', 'src/fhir/schema-source.js']) {
      expect(existsSync(join(dir, rel)), rel).toBe(true);
    }
  });

  it("each bundled module's import.meta.url is its path in the bundle's layout: no chunk asks for its own URL", async () => {
    const dir = (await prepareRunCache(ROOT)) as string;
    const chunks = readdirSync(join(dir, 'chunks')).map((f) => join(dir, 'chunks', f));
    for (const file of chunks) expect(readFileSync(file, 'utf8').includes('import.meta.url'), relative(dir, file)).toBe(false);
    const all = chunks.map((f) => readFileSync(f, 'utf8')).join('\n');
    expect(all).toContain(JSON.stringify(`file://${join(dir, 'src', 'paths.js')}`));
  });

  it('the same sources give the same bundle directory, made again by nobody', async () => {
    const a = (await prepareRunCache(ROOT)) as string;
    const made = readFileSync(join(a, 'src', 'cli.js'), 'utf8');
    const b = (await prepareRunCache(ROOT)) as string;
    expect(b).toBe(a);
    expect(readFileSync(join(b, 'src', 'cli.js'), 'utf8')).toBe(made);
  });

  it('also holds the run as one CommonJS script: the sources, the ES-module-only packages and those every start loads inside, the other CommonJS packages required, each suite registered at its URL in the layout (relative to the script)', async () => {
    const dir = (await prepareRunCache(ROOT)) as string;
    const script = readFileSync(join(dir, 'run.cjs'), 'utf8');
    expect(script).not.toContain('import.meta.url');
    // Relocatable: each module's URL is found from the script's own directory when it runs (a bundle
    // directory here, an installed package's dist/ for the build's copy).
    expect(script).not.toContain(pathToFileURL(ROOT).href);
    // Nothing relative is loaded at run time: one instance of every module.
    expect([...script.matchAll(/require\("(\.[^"]*)"\)/g)].map((m) => m[1])).toEqual([]);
    expect([...script.matchAll(/\bimport\("(\.[^"]*)"\)/g)].map((m) => m[1])).toEqual([]);
    const required = new Set([...script.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]!.split('/')[0]));
    // ajv's standalone code requires ajv's own files: the run must use that same copy.
    expect(required.has('ajv')).toBe(true);
    expect(required.has('jose')).toBe(false);
    expect(required.has('json-schema-faker')).toBe(false);
    // Loaded by every start: inside, with the script's code cache. Of undici, its files, not its index.
    expect(required.has('commander')).toBe(false);
    expect(required.has('@apidevtools')).toBe(false);
    expect([...script.matchAll(/require\("(undici[^"]*)"\)/g)].map((m) => m[1])).toEqual(['undici']);
    expect(script).toContain('// node_modules/undici/lib/dispatcher/agent.js');
    for (const folder of readdirSync(join(ROOT, 'suites')).filter((f) => existsSync(join(ROOT, 'suites', f, 'checks.ts')))) {
      expect(script, folder).toContain(`__fhirConformanceUrl(${JSON.stringify(`suites/${folder}/checks.js`)})`);
    }
  });
});
