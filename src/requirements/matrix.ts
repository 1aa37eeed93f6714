/**
 * Terminal rendering of a coverage report: per-area totals, then one line per
 * requirement (id, level, covering checks or "—", or the untestable reason).
 */
import type { CoverageReport } from './coverage.js';
import { AREAS } from './types.js';
import type { Requirement } from './types.js';

const ANSI = { red: '\x1b[31m', green: '\x1b[32m', yellow: '\x1b[33m', dim: '\x1b[2m', bold: '\x1b[1m', reset: '\x1b[0m' };
type Style = keyof typeof ANSI;

export function renderCoverageMatrix(reqs: Requirement[], report: CoverageReport, opts: { color?: boolean } = {}): string {
  const paint = (style: Style, s: string) => (opts.color ? `${ANSI[style]}${s}${ANSI.reset}` : s);
  const checksOf = new Map(report.covered.map((c) => [c.id, c.checks]));
  const areas = orderedAreas(Object.keys(report.byArea));
  const lines: string[] = [];

  const testable = reqs.filter((r) => r.testable).length;
  lines.push(
    paint(
      'bold',
      `Requirement coverage: ${reqs.length} requirements, ${testable} testable, ${report.covered.length} covered, ` +
        `${report.uncovered.length} uncovered, ${report.untestable.length} untestable, ${report.unknownRefs.length} unknown references`,
    ),
    '',
  );

  const areaWidth = Math.max(5, ...areas.map((a) => a.length));
  const num = (n: number | string) => String(n).padStart(10);
  lines.push(`${'area'.padEnd(areaWidth)}${num('total')}${num('testable')}${num('covered')}${num('uncovered')}`);
  for (const area of areas) {
    const a = report.byArea[area]!;
    const uncovered = report.uncovered.filter((id) => areaOf(reqs, id) === area).length;
    const row = `${area.padEnd(areaWidth)}${num(a.total)}${num(a.testable)}${num(a.covered)}${num(uncovered)}`;
    lines.push(uncovered > 0 ? paint('red', row) : row);
  }
  lines.push(`${'total'.padEnd(areaWidth)}${num(reqs.length)}${num(testable)}${num(report.covered.length)}${num(report.uncovered.length)}`);

  const idWidth = Math.max(...reqs.map((r) => r.id.length), 2);
  for (const area of areas) {
    lines.push('', paint('bold', area));
    for (const r of reqs.filter((q) => q.area === area)) {
      const checks = checksOf.get(r.id);
      const head = `  ${r.id.padEnd(idWidth)}  ${r.level.padEnd(11)}  `;
      if (checks) lines.push(head + paint('green', checks.join(', ')));
      else if (!r.testable) lines.push(head + paint('dim', `untestable: ${r.reason ?? ''}`));
      else lines.push(head + paint('red', '—'));
    }
  }

  if (report.unknownRefs.length > 0) {
    lines.push('', paint('bold', 'Checks naming unknown requirement ids'));
    for (const u of report.unknownRefs) lines.push(paint('yellow', `  ${u.check} -> ${u.id}`));
  }
  return lines.join('\n');
}

/** Areas in the catalog's canonical order, unknown ones last (alphabetically). */
function orderedAreas(present: string[]): string[] {
  const canonical: readonly string[] = AREAS;
  const rank = (a: string) => (canonical.includes(a) ? canonical.indexOf(a) : canonical.length);
  return [...present].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

function areaOf(reqs: Requirement[], id: string): string | undefined {
  return reqs.find((r) => r.id === id)?.area;
}
