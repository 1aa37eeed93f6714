/**
 * Which requirements the registered checks cover, and which check references
 * name no requirement.
 */
import type { Requirement } from './types.js';

export interface CoverageReport {
  /** Requirements named by at least one check, in catalog order. */
  covered: Array<{ id: string; checks: string[] }>;
  /** Testable requirements no check names. */
  uncovered: string[];
  /** Check references to ids absent from the catalog. */
  unknownRefs: Array<{ check: string; id: string }>;
  /** Requirements with `testable: false`. */
  untestable: string[];
  byArea: Record<string, { total: number; testable: number; covered: number }>;
}

export function coverage(reqs: Requirement[], checks: Array<{ id: string; requirements: string[] }>): CoverageReport {
  const known = new Set(reqs.map((r) => r.id));
  const checksByReq = new Map<string, string[]>();
  const unknownRefs: CoverageReport['unknownRefs'] = [];
  for (const check of checks) {
    for (const id of new Set(check.requirements)) {
      if (!known.has(id)) {
        unknownRefs.push({ check: check.id, id });
        continue;
      }
      const list = checksByReq.get(id) ?? [];
      if (!list.includes(check.id)) list.push(check.id);
      checksByReq.set(id, list);
    }
  }

  const report: CoverageReport = { covered: [], uncovered: [], unknownRefs, untestable: [], byArea: {} };
  for (const r of reqs) {
    const area = (report.byArea[r.area] ??= { total: 0, testable: 0, covered: 0 });
    area.total++;
    if (r.testable) area.testable++;
    else report.untestable.push(r.id);
    const by = checksByReq.get(r.id);
    if (by) {
      report.covered.push({ id: r.id, checks: by });
      area.covered++;
    } else if (r.testable) {
      report.uncovered.push(r.id);
    }
  }
  return report;
}
