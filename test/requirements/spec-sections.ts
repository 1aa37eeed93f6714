/** Test helpers that read the spec's structure. */
import { normalizeQuote } from '../../src/requirements/index.js';

/**
 * Heading path -> normalised body text. Paths are the H1 title (preamble), an
 * H2 title, or `H2 > H3`; an H2 body includes the text of its H3 subsections.
 */
export function sectionBodies(spec: string): Map<string, string> {
  const bodies = new Map<string, string[]>();
  let open: string[] = [];
  let h2 = '';
  for (const line of spec.split('\n')) {
    const m = /^(#{1,3}) (.+)$/.exec(line);
    if (!m) {
      for (const path of open) bodies.get(path)!.push(line);
      continue;
    }
    const [, hashes, title] = m as unknown as [string, string, string];
    if (hashes === '###') open = [h2, `${h2} > ${title}`];
    else {
      if (hashes === '##') h2 = title;
      open = [title];
    }
    for (const path of open) if (!bodies.has(path)) bodies.set(path, []);
  }
  return new Map([...bodies].map(([path, lines]) => [path, normalizeQuote(lines.join('\n'))]));
}

/**
 * Every statement of the spec that leaves a point open ("not shown" / "not
 * stated"): the source line and the sentence (or table cell clause) holding it.
 */
export function openPoints(spec: string): Array<{ line: string; sentence: string }> {
  const points: Array<{ line: string; sentence: string }> = [];
  for (const raw of spec.split('\n')) {
    if (!/not (shown|stated)/.test(raw)) continue;
    const line = raw.replace(/^\s*(-|\d+\.)\s+/, '');
    const cells = line.startsWith('|') ? line.split('|').map((c) => c.trim()) : [line];
    for (const cell of cells) {
      for (const sentence of cell.split(/(?<=\.)\s+/)) {
        if (/not (shown|stated)/.test(sentence)) points.push({ line: normalizeQuote(line), sentence: normalizeQuote(sentence) });
      }
    }
  }
  return points;
}

/** Catalog codes listed in the spec's two error tables. */
export function catalogCodes(spec: string): string[] {
  return [...spec.matchAll(/^\| ((?:HPB|SVC)-\d{5}) \|/gm)].map((m) => m[1]!);
}
