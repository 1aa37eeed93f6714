/**
 * bin/run-cache.js: a checkout runs its sources transpiled into node_modules/.cache/fhir-conformance/run,
 * with the modules a run imports bundled over them. The bundle must keep one instance of every
 * module (no import reaches a per-file output that is also inside a chunk), and each module must
 * find what lies beside its source (its `import.meta.url` is its per-file output's).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain JavaScript module of the bin, without types
import { prepareRunCache } from '../../bin/run-cache.js';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);

/** Relative module specifiers a file imports (static and dynamic string literals). */
function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)].map((m) => m[1]!);
  return specs.map((s) => resolve(dirname(file), s));
}

describe('the run cache of a checkout', () => {
  it('bundles the run: entries at their own paths, the shared modules in chunks, nothing imported twice', async () => {
    const dir = (await prepareRunCache(ROOT)) as string;
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { bundle?: string; files: Record<string, string> };
    expect(manifest.bundle).toMatch(/^[0-9a-f]{64}$/);
    // Entries: what a run imports by a computed path.
    const entries = [
      'src/cli.js',
      ...readdirSync(join(ROOT, 'suites'))
        .filter((f) => existsSync(join(ROOT, 'suites', f, 'checks.ts')))
        .map((f) => `suites/${f}/checks.js`),
      ...readdirSync(join(ROOT, 'src/reference/faults'))
        .filter((f) => f.endsWith('.ts'))
        .map((f) => `src/reference/faults/${f.replace(/\.ts$/, '.js')}`),
    ].map((rel) => join(dir, rel));
    // Everything reachable from the entries by relative imports is an entry or a chunk of this bundle.
    const seen = new Set<string>();
    const queue = [...entries];
    while (queue.length) {
      const file = queue.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      expect(existsSync(file), relative(dir, file)).toBe(true);
      queue.push(...relativeImports(file));
    }
    const strays = [...seen].filter((f) => !entries.includes(f) && !relative(dir, f).startsWith('chunks/'));
    expect(strays.map((f) => relative(dir, f))).toEqual([]);
    expect([...seen].filter((f) => f.includes('/chunks/')).length).toBeGreaterThan(5);
  });

  it("each bundled module's import.meta.url is its per-file output's: no chunk asks for its own URL", async () => {
    const dir = (await prepareRunCache(ROOT)) as string;
    const chunks = readdirSync(join(dir, 'chunks')).map((f) => join(dir, 'chunks', f));
    for (const file of chunks) expect(readFileSync(file, 'utf8').includes('import.meta.url'), relative(dir, file)).toBe(false);
    // paths.ts as bundled knows the run cache's src/ folder (its per-file location), hence the package root.
    const all = chunks.map((f) => readFileSync(f, 'utf8')).join('\n');
    expect(all).toContain(JSON.stringify(`file://${join(dir, 'src', 'paths.js')}`));
  });
});
