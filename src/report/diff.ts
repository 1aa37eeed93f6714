/**
 * Comparing two reports (release manager's view; docs/outcome-policy.md).
 *
 * For checks, keyed by id:
 *  - regressed: the outcome got worse, and the item says which way:
 *    to fail or error from anything else (skip -> fail counts: a check that
 *    could not run before and fails now is a new failure of the target), and
 *    from pass to skip, partial or untested, or from partial to skip or
 *    untested (the rule is no longer fully verified);
 *  - fixed: before was fail or error and after is pass or observation;
 *  - added / removed: the id exists in only one report (an added check that
 *    fails is listed under added, with its outcome, not as a regression);
 *  - changed: any other change of outcome, e.g. fail -> error, fail -> skip,
 *    skip -> pass, partial -> pass (not a regression, not a fix).
 * Requirements follow the same rules with `untested` treated like skip.
 */
import { compareIds } from './build.js';
import type { DiffItem, ReportDiff, ReportDocument, RequirementOutcome } from './types.js';

const BAD: ReadonlySet<RequirementOutcome> = new Set(['fail', 'error']);
const GOOD: ReadonlySet<RequirementOutcome> = new Set(['pass', 'observation']);
/** How fully a rule is verified, for outcomes that are neither failures nor observations. */
const VERIFIED: Partial<Record<RequirementOutcome, number>> = { pass: 2, partial: 1, skip: 0, untested: 0 };

type Category = 'regressed' | 'fixed' | 'changed' | 'same';

export function classifyChange(before: RequirementOutcome, after: RequirementOutcome): Category {
  if (before === after) return 'same';
  if (BAD.has(after) && !BAD.has(before)) return 'regressed';
  const b = VERIFIED[before];
  const a = VERIFIED[after];
  if (b !== undefined && a !== undefined && a < b) return 'regressed';
  if (GOOD.has(after) && BAD.has(before)) return 'fixed';
  return 'changed';
}

/** What a regression means, in a few words. */
export function regressionWhy(after: RequirementOutcome): string {
  switch (after) {
    case 'fail':
      return 'now fails';
    case 'error':
      return 'now undecided (error)';
    case 'partial':
      return 'now only partly verified (a check skipped)';
    case 'skip':
      return 'no longer verified (skipped)';
    case 'untested':
      return 'no longer tested';
    default:
      return `now ${after}`;
  }
}

interface Entry {
  id: string;
  outcome: RequirementOutcome;
  title?: string;
}

function compare(oldEntries: Entry[], newEntries: Entry[]) {
  const before = new Map(oldEntries.map((e) => [e.id, e]));
  const after = new Map(newEntries.map((e) => [e.id, e]));
  const out = { regressed: [] as DiffItem[], fixed: [] as DiffItem[], added: [] as DiffItem[], removed: [] as DiffItem[], changed: [] as DiffItem[] };
  const item = (id: string, b?: Entry, a?: Entry): DiffItem => {
    const title = a?.title ?? b?.title;
    return { id, ...(b ? { before: b.outcome } : {}), ...(a ? { after: a.outcome } : {}), ...(title === undefined ? {} : { title }) };
  };
  for (const id of [...new Set([...before.keys(), ...after.keys()])].sort(compareIds)) {
    const b = before.get(id);
    const a = after.get(id);
    if (!b) out.added.push(item(id, b, a));
    else if (!a) out.removed.push(item(id, b, a));
    else {
      const category = classifyChange(b.outcome, a.outcome);
      if (category === 'regressed') out.regressed.push({ ...item(id, b, a), why: regressionWhy(a.outcome) });
      else if (category !== 'same') out[category].push(item(id, b, a));
    }
  }
  return out;
}

export function diffReports(oldDoc: ReportDocument, newDoc: ReportDocument): ReportDiff {
  const checks = compare(oldDoc.checks.map(checkEntry), newDoc.checks.map(checkEntry));
  const reqs = compare(oldDoc.requirements.map(requirementEntry), newDoc.requirements.map(requirementEntry));
  return {
    ...checks,
    requirements: { regressed: reqs.regressed, fixed: reqs.fixed, added: reqs.added, removed: reqs.removed },
  };
}

const checkEntry = (c: { id: string; outcome: RequirementOutcome; title: string }): Entry => ({ id: c.id, outcome: c.outcome, title: c.title });
const requirementEntry = (r: { id: string; outcome: RequirementOutcome; text: string }): Entry => ({ id: r.id, outcome: r.outcome, title: r.text });

/** True when the new report is worse: what a release gate exits non-zero on. */
export function hasRegressions(d: ReportDiff): boolean {
  return d.regressed.length > 0 || d.requirements.regressed.length > 0;
}

export function renderDiff(d: ReportDiff): string {
  const out: string[] = [];
  const section = (heading: string, items: DiffItem[], mark: string): void => {
    if (items.length === 0) return;
    out.push(`${heading} (${items.length})`);
    for (const i of items) {
      const change = `${i.before ?? '—'} -> ${i.after ?? '—'}`;
      out.push(`  ${mark} ${terminalSafe(i.id, 200)}  ${change}${i.why ? ` (${i.why})` : ''}${i.title ? `  ${terminalSafe(i.title, 100)}` : ''}`);
    }
    out.push('');
  };
  section('Regressed checks', d.regressed, '✗');
  section('Fixed checks', d.fixed, '✓');
  section('Changed checks', d.changed, '~');
  section('Added checks', d.added, '+');
  section('Removed checks', d.removed, '-');
  section('Regressed requirements', d.requirements.regressed, '✗');
  section('Fixed requirements', d.requirements.fixed, '✓');
  section('Added requirements', d.requirements.added, '+');
  section('Removed requirements', d.requirements.removed, '-');
  const regressions = d.regressed.length + d.requirements.regressed.length;
  out.push(
    out.length === 0
      ? 'No differences.'
      : regressions > 0
        ? `${d.regressed.length} check(s) and ${d.requirements.regressed.length} requirement(s) regressed.`
        : 'No regressions.',
  );
  return `${out.join('\n')}\n`;
}

/** One line without control characters (no terminal escape sequences from report data). */
function terminalSafe(s: string, max: number): string {
  const line = s.replace(/[\u0000-\u001F\u007F-\u009F]+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
