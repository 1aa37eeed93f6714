/** "Did you mean ...?" for requirement ids, check ids and areas a user mistyped. */

/** Edit distance (insertions, deletions, substitutions, adjacent transpositions), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const d: number[][] = Array.from({ length: s.length + 1 }, (_, i) => [i, ...Array<number>(t.length).fill(0)]);
  for (let j = 1; j <= t.length; j++) d[0]![j] = j;
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[s.length]![t.length]!;
}

/** The candidates nearest to `word` (at most `max`), when near enough to be a typo of it. */
export function nearest(word: string, candidates: Iterable<string>, max = 3): string[] {
  const limit = Math.max(2, Math.floor(word.length * 0.34));
  const scored: Array<[string, number]> = [];
  for (const c of new Set(candidates)) {
    // A typo of the whole, or of the start of a longer id (`discovry.metadata` for `discovery.metadata-without-auth`).
    const dist = Math.min(editDistance(word, c), c.length > word.length ? editDistance(word, c.slice(0, word.length + 1)) + 0.5 : Infinity);
    if (dist > 0 && dist <= limit) scored.push([c, dist]);
  }
  return scored
    .sort((x, y) => x[1] - y[1] || x[0].localeCompare(y[0]))
    .slice(0, max)
    .map(([c]) => c);
}

/** ` (did you mean "a" or "b"?)`, or nothing. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const near = nearest(word, candidates);
  if (near.length === 0) return '';
  return ` (did you mean ${near.map((n) => `"${n}"`).join(' or ')}?)`;
}

/** The literal text of a simple pattern like `^discovery\.metadata$` (for suggestions), or undefined. */
export function literalOf(pattern: string): string | undefined {
  const text = pattern.replace(/^\^/, '').replace(/\$$/, '').replace(/\\\./g, '.').replace(/\.\*$/, '').replace(/\\$/, '');
  return /^[A-Za-z0-9._-]+$/.test(text) ? text.replace(/\.$/, '') : undefined;
}
