/**
 * The architecture's rules (docs/architecture.md, "Rules"), checked on the import
 * graph of src/ and suites/ (test/architecture/graph.ts):
 * - no import cycle;
 * - the engine and the HTTP layer know nothing of the service or of what sits above
 *   them: neither they nor anything they import reaches src/service, suites/, the
 *   report, the reference server, the run path, the mutation runner or the CLI;
 *   the HTTP layer does not reach the engine;
 * - the service never imports the reference server (the reference imports the service);
 * - src/ never imports suites/ (the engine loads them by path, src/engine/catalog.ts);
 * - a suite imports its own folder and src/ only, never another suite (shared code is
 *   under src/; suites/ holds no shared top-level module), and reaches the engine,
 *   the HTTP layer and the service through their index.ts;
 * - no product file imports vitest (the project's test runner, a development dependency).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/paths.js';
import { crossings, cycles, importGraph, reach } from './graph.js';

const graph = importGraph(['src', 'suites']);

const filesUnder = (dir: string) => [...graph.keys()].filter((f) => f.startsWith(`${dir}/`));
const under = (file: string, dirs: readonly string[]) => dirs.some((d) => file === d || file.startsWith(`${d}/`));

/** Where what `files` reach through their imports steps into `dirs`, as `file -> dep` lines. */
function pathsInto(files: readonly string[], dirs: readonly string[]): string[] {
  const reached = reach(graph, files);
  const out: string[] = [];
  for (const f of reached) if (!under(f, dirs)) for (const d of graph.get(f) ?? []) if (under(d, dirs)) out.push(`${f} -> ${d}`);
  return out.sort();
}

const ABOVE_ENGINE = ['src/service', 'suites', 'src/report', 'src/reference', 'src/run', 'src/mutation', 'src/cli.ts'];

describe('architecture rules', () => {
  it('the graph sees the project (sanity)', () => {
    expect(filesUnder('src/engine').length).toBeGreaterThan(5);
    expect(filesUnder('suites').length).toBeGreaterThan(20);
    expect(graph.get('src/run/index.ts')).toContain('src/engine/runtime.ts');
  });

  it('has no import cycle in src/ and suites/', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('the engine reaches nothing of the service, the suites, reports, the reference, the run path, the mutation runner or the CLI', () => {
    expect(pathsInto(filesUnder('src/engine'), ABOVE_ENGINE)).toEqual([]);
  });

  it('the HTTP layer reaches none of those, nor the engine', () => {
    expect(pathsInto(filesUnder('src/http'), [...ABOVE_ENGINE, 'src/engine'])).toEqual([]);
  });

  it('the service does not import the reference server', () => {
    expect(crossings(graph, 'src/service', ['src/reference'])).toEqual([]);
  });

  it('src/ never imports suites/', () => {
    expect(crossings(graph, 'src', ['suites'])).toEqual([]);
  });

  it('a suite imports its own folder and src/ only', () => {
    const wrong: string[] = [];
    for (const [file, deps] of graph) {
      if (!file.startsWith('suites/')) continue;
      const own = file.split('/').slice(0, 2).join('/');
      if (!own.endsWith('.ts')) for (const d of deps) if (!d.startsWith(`${own}/`) && !d.startsWith('src/')) wrong.push(`${file} -> ${d}`);
    }
    expect(wrong).toEqual([]);
    expect(filesUnder('suites').filter((f) => f.split('/').length === 2 && f.endsWith('.ts'))).toEqual([]);
  });

  it('a suite reaches the engine, the HTTP layer and the service through their index.ts', () => {
    const wrong = ['src/engine', 'src/http', 'src/service'].flatMap((layer) =>
      crossings(graph, 'suites', [layer]).filter((line) => !line.endsWith(` -> ${layer}/index.ts`)),
    );
    expect(wrong).toEqual([]);
  });

  it('no product file imports vitest', () => {
    const importsVitest = filesUnder('src').filter((f) =>
      /from\s+['"]vitest['"]|import\(\s*['"]vitest['"]/.test(readFileSync(resolve(PROJECT_ROOT, f), 'utf8')),
    );
    expect(importsVitest).toEqual([]);
  });
});
