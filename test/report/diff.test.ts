import { describe, expect, test } from 'vitest';
import type { Outcome, RunResult } from '../../src/engine/types.js';
import { buildReport, diffReports, hasRegressions, renderDiff } from '../../src/report/index.js';
import { classifyChange } from '../../src/report/diff.js';
import type { ReportDocument, RequirementOutcome } from '../../src/report/index.js';
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
    a: 'pass',
    b: 'skip',
    c: 'observation',
    d: 'fail',
    e: 'error',
    f: 'pass',
    g: 'fail',
    h: 'pass',
    i: 'fail',
    gone: 'pass',
  });
  const after = reportWith({
    a: 'fail',
    b: 'fail',
    c: 'error',
    d: 'pass',
    e: 'observation',
    f: 'skip',
    g: 'error',
    h: 'pass',
    i: 'skip',
    fresh: 'fail',
  });
  const d = diffReports(before, after);

  test('regression: pass/observation/skip -> fail/error, and pass -> skip, saying which', () => {
    expect(d.regressed).toEqual([
      { id: 'a', before: 'pass', after: 'fail', title: 'title of a', why: 'now fails' },
      { id: 'b', before: 'skip', after: 'fail', title: 'title of b', why: 'now fails' },
      { id: 'c', before: 'observation', after: 'error', title: 'title of c', why: 'now undecided (error)' },
      { id: 'f', before: 'pass', after: 'skip', title: 'title of f', why: 'no longer verified (skipped)' },
    ]);
    expect(hasRegressions(d)).toBe(true);
  });

  test('fixed: fail/error -> pass/observation', () => {
    expect(d.fixed.map((i) => i.id)).toEqual(['d', 'e']);
  });

  test('changed: fail -> error, fail -> skip are neither regressions nor fixes', () => {
    expect(d.changed.map((i) => `${i.id}:${i.before}->${i.after}`)).toEqual(['g:fail->error', 'i:fail->skip']);
  });

  test('classifyChange: losing verification is a regression, gaining it is not', () => {
    const cases: Array<[RequirementOutcome, RequirementOutcome, string]> = [
      ['pass', 'skip', 'regressed'],
      ['pass', 'error', 'regressed'],
      ['pass', 'partial', 'regressed'],
      ['pass', 'untested', 'regressed'],
      ['partial', 'skip', 'regressed'],
      ['partial', 'fail', 'regressed'],
      ['partial', 'pass', 'changed'],
      ['skip', 'pass', 'changed'],
      ['observation', 'skip', 'changed'],
      ['pass', 'observation', 'changed'],
      ['error', 'pass', 'fixed'],
      ['partial', 'partial', 'same'],
    ];
    for (const [b, a, category] of cases) expect(`${b}->${a}: ${classifyChange(b, a)}`).toBe(`${b}->${a}: ${category}`);
  });

  test('a requirement going from pass to partial regresses, and the diff says so', () => {
    const both = (second: Outcome): ReportDocument => {
      const doc = reportWith({ a: 'pass', b: second });
      for (const c of doc.checks) c.requirements = ['REQ-x'];
      doc.requirements = [
        { id: 'REQ-x', level: 'MUST', text: 'req x', section: 's', testable: true, checks: ['a', 'b'], outcome: second === 'pass' ? 'pass' : 'partial' },
      ];
      return doc;
    };
    const diff = diffReports(both('pass'), both('skip'));
    expect(diff.requirements.regressed).toEqual([
      { id: 'REQ-x', before: 'pass', after: 'partial', title: 'req x', why: 'now only partly verified (a check skipped)' },
    ]);
    expect(hasRegressions(diff)).toBe(true);
    expect(renderDiff(diff)).toContain('REQ-x  pass -> partial (now only partly verified (a check skipped))');
  });

  test('added and removed checks, unchanged checks nowhere', () => {
    expect(d.added).toEqual([{ id: 'fresh', after: 'fail', title: 'title of fresh' }]);
    expect(d.removed).toEqual([{ id: 'gone', before: 'pass', title: 'title of gone' }]);
    const all = [...d.regressed, ...d.fixed, ...d.changed, ...d.added, ...d.removed].map((i) => i.id);
    expect(all).not.toContain('h');
  });

  test('requirements follow the same rules, untested counting like skip', () => {
    expect(d.requirements.regressed.map((i) => i.id)).toEqual(['REQ-a', 'REQ-b', 'REQ-c', 'REQ-f']);
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
    expect(text).toContain('Regressed checks (4)\n  ✗ a  pass -> fail (now fails)  title of a');
    expect(text).toContain('✗ f  pass -> skip (no longer verified (skipped))  title of f');
    expect(text).toContain('Removed checks (1)\n  - gone  pass -> —');
    expect(text.trimEnd().endsWith('4 check(s) and 4 requirement(s) regressed.')).toBe(true);
  });

  test('renderDiff strips terminal control sequences from report text', () => {
    const text = renderDiff({ ...d, regressed: [{ id: 'x', before: 'pass', after: 'fail', title: 'evil \u001b[2J title' }] });
    expect(text).not.toContain('\u001b');
  });
});
