import { describe, expect, test } from 'vitest';
import type { Outcome, RunResult } from '../../src/engine/types.js';
import { buildReport, diffReports, hasRegressions, renderDiff } from '../../src/report/index.js';
import type { ReportDocument } from '../../src/report/index.js';
import { syntheticRun } from './synthetic-run.js';

/** A report whose checks `c-<n>` have the given outcomes, all citing REQ-<n>. */
function reportWith(outcomes: Record<string, Outcome>): ReportDocument {
  const base = syntheticRun(1);
  const template = base.checks[0]!;
  const ids = Object.keys(outcomes);
  const run: RunResult = {
    ...base,
    checks: ids.map((id) => ({ ...template, id, title: `title of ${id}`, requirements: [`REQ-${id}`], outcome: outcomes[id]! })),
    requirements: ids.map((id) => ({ id: `REQ-${id}`, level: 'MUST', text: `req ${id}`, section: 's', testable: true, checks: [], outcome: 'untested' })),
  };
  return buildReport(run);
}

describe('diffReports', () => {
  const before = reportWith({
    a: 'pass', b: 'skip', c: 'observation', d: 'fail', e: 'error', f: 'pass', g: 'fail', h: 'pass', i: 'fail', gone: 'pass',
  });
  const after = reportWith({
    a: 'fail', b: 'fail', c: 'error', d: 'pass', e: 'observation', f: 'skip', g: 'error', h: 'pass', i: 'skip', fresh: 'fail',
  });
  const d = diffReports(before, after);

  test('regression: pass/observation/skip -> fail/error', () => {
    expect(d.regressed).toEqual([
      { id: 'a', before: 'pass', after: 'fail', title: 'title of a' },
      { id: 'b', before: 'skip', after: 'fail', title: 'title of b' },
      { id: 'c', before: 'observation', after: 'error', title: 'title of c' },
    ]);
    expect(hasRegressions(d)).toBe(true);
  });

  test('fixed: fail/error -> pass/observation', () => {
    expect(d.fixed.map((i) => i.id)).toEqual(['d', 'e']);
  });

  test('changed: pass -> skip, fail -> error, fail -> skip are neither regressions nor fixes', () => {
    expect(d.changed.map((i) => `${i.id}:${i.before}->${i.after}`)).toEqual(['f:pass->skip', 'g:fail->error', 'i:fail->skip']);
  });

  test('added and removed checks, unchanged checks nowhere', () => {
    expect(d.added).toEqual([{ id: 'fresh', after: 'fail', title: 'title of fresh' }]);
    expect(d.removed).toEqual([{ id: 'gone', before: 'pass', title: 'title of gone' }]);
    const all = [...d.regressed, ...d.fixed, ...d.changed, ...d.added, ...d.removed].map((i) => i.id);
    expect(all).not.toContain('h');
  });

  test('requirements follow the same rules, untested counting like skip', () => {
    expect(d.requirements.regressed.map((i) => i.id)).toEqual(['REQ-a', 'REQ-b', 'REQ-c']);
    expect(d.requirements.fixed.map((i) => i.id)).toEqual(['REQ-d', 'REQ-e']);
    expect(d.requirements.added.map((i) => i.id)).toEqual(['REQ-fresh']);
    expect(d.requirements.removed.map((i) => i.id)).toEqual(['REQ-gone']);
    const untested = reportWith({ a: 'pass' });
    untested.requirements[0]!.outcome = 'untested';
    expect(diffReports(untested, reportWith({ a: 'fail' })).requirements.regressed).toHaveLength(1);
  });

  test('identical reports: nothing, no regressions', () => {
    const same = diffReports(before, before);
    expect(hasRegressions(same)).toBe(false);
    expect(renderDiff(same)).toBe('No differences.\n');
  });

  test('renderDiff lists the sections and ends with the regression count', () => {
    const text = renderDiff(d);
    expect(text).toContain('Regressed checks (3)\n  ✗ a  pass -> fail  title of a');
    expect(text).toContain('Removed checks (1)\n  - gone  pass -> —');
    expect(text.trimEnd().endsWith('3 check(s) and 3 requirement(s) regressed.')).toBe(true);
  });

  test('renderDiff strips terminal control sequences from report text', () => {
    const text = renderDiff({ ...d, regressed: [{ id: 'x', before: 'pass', after: 'fail', title: 'evil \u001b[2J title' }] });
    expect(text).not.toContain('\u001b');
  });
});
