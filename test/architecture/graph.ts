/**
 * The project's import graph, read from the sources as text: every relative
 * `import`/`export ... from`, side-effect `import '...'` and `import('...')` of src/ and
 * suites/ (type-only imports included: a
 * layer that names another's types depends on it).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { PROJECT_ROOT } from '../../src/paths.js';

export type Graph = Map<string, string[]>;

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)|(?:^|\n)\s*import\s+['"](\.{1,2}\/[^'"]+)['"]/g;

/** Every file `from` reaches through its imports (itself included; a file the graph lacks has no imports). */
export function reach(g: Graph, from: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const stack = [...from];
  while (stack.length) {
    const f = stack.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    stack.push(...(g.get(f) ?? []));
  }
  return seen;
}

/** Files (relative to the project root, `.ts`) and the project files each imports. */
export function importGraph(roots: readonly string[] = ['src', 'suites']): Graph {
  const graph: Graph = new Map();
  for (const root of roots)
    for (const file of walk(resolve(PROJECT_ROOT, root))) {
      const text = readFileSync(file, 'utf8');
      const deps = new Set<string>();
      for (const m of text.matchAll(IMPORT)) {
        const spec = (m[1] ?? m[2] ?? m[3])!;
        deps.add(relative(PROJECT_ROOT, resolve(dirname(file), spec.replace(/\.js$/, '.ts'))));
      }
      graph.set(relative(PROJECT_ROOT, file), [...deps]);
    }
  return graph;
}

/** Import cycles between files, each as the list of files around it (one per strongly connected component). */
export function cycles(graph: Graph): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1) out.push(comp.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

/** `from -> to` for every import from a file under `fromDir` into a file under one of `toDirs`. */
export function crossings(graph: Graph, fromDir: string, toDirs: readonly string[]): string[] {
  const out: string[] = [];
  for (const [file, deps] of graph)
    if (file.startsWith(`${fromDir}/`)) for (const d of deps) if (toDirs.some((t) => d.startsWith(`${t}/`))) out.push(`${file} -> ${d}`);
  return out;
}
