/** Every file and folder the README and docs/*.md name exists (a `<placeholder>` segment stands for any name). */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/paths.js';

const DOCS = [
  'README.md',
  ...readdirSync(resolve(PROJECT_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
/** Paths into the checkout; build outputs (dist/) do not exist before `npm run build`. */
const PATH = /(?<![\w/.-])(?:\.\.\/shared|src|suites|test|docs|fixtures|scripts|bin|bench)\/[\w./<>$-]*/g;

function named(text: string): string[] {
  return [...new Set([...text.matchAll(PATH)].map((m) => m[0].replace(/[.,:;)]+$/, '')))].sort();
}

/** Whether `path` exists under `dir`; a segment with `<...>` matches any entry of that form. */
function exists(path: string, dir = PROJECT_ROOT): boolean {
  const [head, ...rest] = path.split('/');
  if (head === undefined || head === '') return true;
  const here = head.includes('<')
    ? readdirSync(dir).filter((e) => new RegExp(`^${head.replace(/[.$]/g, '\\$&').replace(/<[^>]+>/g, '[^/]+')}$`).test(e))
    : [head];
  return here.some((e) => {
    const p = join(dir, e);
    if (!existsSync(p)) return false;
    return rest.length === 0 || (statSync(p).isDirectory() && exists(rest.join('/'), p));
  });
}

describe('docs/architecture.md', () => {
  it('names paths (sanity)', () => {
    const text = readFileSync(resolve(PROJECT_ROOT, 'docs/architecture.md'), 'utf8');
    expect(named(text)).toContain('src/engine/runtime.ts');
    expect(named(text).length).toBeGreaterThan(40);
  });
});

describe.each(DOCS)('%s', (doc) => {
  it('names only files and folders that exist', () => {
    const text = readFileSync(resolve(PROJECT_ROOT, doc), 'utf8');
    expect(named(text).filter((p) => !exists(p))).toEqual([]);
  });
});
