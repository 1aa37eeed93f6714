import { describe, expect, test } from 'vitest';
import { buildReport, renderMarkdown } from '../../src/report/index.js';
import { syntheticRun } from './synthetic-run.js';

describe('renderMarkdown', () => {
  const doc = buildReport(syntheticRun(240));
  const md = renderMarkdown(doc, { location: 'reports/run-1/report.html' });

  test('starts with a ❌ verdict line and the counts when checks fail', () => {
    const s = doc.summary.byOutcome;
    expect(md.split('\n')[0]).toBe(
      `## ❌ FHIR conformance: ${s.pass} passed, ${s.fail} failed, ${s.error} errors, ${s.skip} skipped, ${s.observation} observations (240 checks)`,
    );
  });

  test('✅ when nothing failed or errored', () => {
    const ok = buildReport({ ...syntheticRun(0), checks: syntheticRun(12).checks.filter((c) => c.outcome === 'pass') });
    expect(renderMarkdown(ok).split('\n')[0]).toBe('## ✅ FHIR conformance: 7 passed, 0 failed, 0 errors, 0 skipped, 0 observations (7 checks)');
  });

  test('per-area table has one row per area', () => {
    for (const [area, n] of Object.entries(doc.summary.byArea)) {
      expect(md).toContain(`| ${area.replace(/_/g, '\\_')} | ${n.pass} | ${n.fail} | ${n.error} | ${n.skip} | ${n.observation} |`);
    }
  });

  test('lists at most 25 failed/errored checks, then "… and N more"', () => {
    const problems = doc.summary.byOutcome.fail + doc.summary.byOutcome.error;
    expect(problems).toBeGreaterThan(25);
    expect(md.match(/^\| (❌|💥) \|/gm)).toHaveLength(25);
    expect(md).toContain(`… and ${problems - 25} more`);
  });

  test('groups skips by reason with counts', () => {
    const reasons = new Map<string, number>();
    for (const c of doc.checks) if (c.outcome === 'skip') reasons.set(c.message!, (reasons.get(c.message!) ?? 0) + 1);
    for (const [reason, n] of reasons) expect(md).toContain(`- ${reason} (${n}): `);
  });

  test('escapes target text: no raw HTML, no control characters, no broken table cells', () => {
    expect(md).not.toContain('<script>');
    expect(md).not.toContain('</script>');
    expect(md).toContain('&lt;/script&gt;');
    expect(md).not.toMatch(/[\u0000-\u0008\u000B-\u001F]/);
    for (const line of md.split('\n').filter((l) => l.startsWith('| ❌'))) {
      expect(line.split(/(?<!\\)\|/).length).toBe(6);
    }
  });

  test('ends with the report location', () => {
    expect(md.trimEnd().endsWith('Full report: `reports/run-1/report.html`')).toBe(true);
  });

  test('flags an interrupted run and fails its verdict', () => {
    const run = syntheticRun(4);
    run.checks = run.checks.filter((c) => c.outcome === 'pass');
    run.info.interrupted = true;
    const text = renderMarkdown(buildReport(run));
    expect(text.startsWith('## ❌')).toBe(true);
    expect(text).toContain('The run was interrupted');
  });
});
