import { describe, expect, test } from 'vitest';
import { createHash } from 'node:crypto';
import { buildReport, renderHtml } from '../../src/report/index.js';
import { pageData, timelineHash } from '../../src/report/html.js';
import { syntheticRun } from './synthetic-run.js';
import { internBodies, PAGE_PASSING_BODY_CAP } from '../../src/report/evidence.js';

const EMBED = /<script type="application\/json" id="report-data">([\s\S]*?)<\/script>/;

describe('renderHtml', () => {
  const doc = buildReport(syntheticRun(80));
  const html = renderHtml(doc);

  test('target text never closes a script or opens markup', () => {
    // The page data, the timeline data, uPlot, the timeline script, the report script.
    expect(html.match(/<\/script/gi)).toHaveLength(5);
    expect(html).not.toContain('<script>alert(1)');
    expect(html).not.toMatch(/<!--/);
    expect(html).toContain('x&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; ]]&gt;');
    expect(html).toContain('\\u0001\\u001b[31m &quot;quote&quot; &#39;apos&#39;');
  });

  test('embeds the checks and their evidence as JSON that parses back to the document', () => {
    const embedded = EMBED.exec(html)![1]!;
    expect(embedded).not.toMatch(/[<>&]/);
    const data = JSON.parse(embedded);
    expect(data).toEqual(JSON.parse(JSON.stringify(pageData(doc))));
    // The page cuts bodies only passing checks cite at PAGE_PASSING_BODY_CAP; the rest is the document's.
    const page = internBodies(doc, PAGE_PASSING_BODY_CAP, { slimPassing: true });
    expect(data.checks).toEqual(JSON.parse(JSON.stringify(page.checks)));
    expect(data.exchanges).toEqual(JSON.parse(JSON.stringify(page.exchanges)));
    expect(data.bodies).toEqual(page.bodies);
    // Exchanges only passing checks cite leave out the constant request headers and the response's date;
    // those of failed or errored checks keep every header report.json has.
    const failing = new Set(doc.checks.filter((c) => c.outcome === 'fail' || c.outcome === 'error').flatMap((c) => c.evidence));
    const passingOnly = Object.keys(doc.exchanges).filter((id) => !failing.has(id));
    expect(passingOnly.length).toBeGreaterThan(0);
    for (const id of passingOnly) {
      expect(Object.keys(data.exchanges[id].request.headers ?? {})).not.toContain('user-agent');
      expect(Object.keys(data.exchanges[id].response?.headers ?? {})).not.toContain('date');
    }
    for (const id of failing) expect(data.exchanges[id].request.headers).toEqual(doc.exchanges[id]!.request.headers);
    // With those headers recorded: gone from a passing-only exchange of the page, kept for a failing one; hop-by-hop ones gone from both.
    const withHeaders = structuredClone(doc);
    const [pass, fail] = [passingOnly[0]!, [...failing][0]!];
    for (const id of [pass, fail]) {
      const x = withHeaders.exchanges[id]!;
      x.request.headers = { ...x.request.headers, 'user-agent': 'fhir-conformance/0.1', 'accept-encoding': 'gzip' };
      if (x.response) x.response.headers = { ...x.response.headers, date: 'Sat, 28 Nov 2026 12:00:00 GMT', connection: 'keep-alive' };
    }
    const slim = pageData(withHeaders).exchanges;
    expect(slim[pass]!.request.headers).not.toHaveProperty('user-agent');
    expect(slim[pass]!.request.headers).not.toHaveProperty('accept-encoding');
    expect(slim[pass]!.response?.headers).not.toHaveProperty('date');
    expect(slim[fail]!.request.headers).toHaveProperty('user-agent');
    expect(slim[fail]!.response?.headers).toHaveProperty('date');
    for (const id of [pass, fail]) expect(slim[id]!.response?.headers).not.toHaveProperty('connection');
    expect(internBodies(withHeaders).exchanges[pass]!.request.headers).toHaveProperty('user-agent');
    // The rest is in the page as HTML, not embedded a second time.
    expect(Object.keys(data)).not.toContain('requirements');
  });

  test('is self-contained: no external resource, CSP allows only the inline script by hash', () => {
    expect(html).not.toMatch(/<link\b|<img\b|<iframe\b|\bsrc=|@import|url\(/i);
    expect(html).not.toMatch(/href="(?!#)/);
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)![1]!;
    expect(csp).toContain("default-src 'none'");
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
    expect(scripts).toHaveLength(3);
    const hashes = scripts.map((s) => `'sha256-${createHash('sha256').update(s).digest('base64')}'`);
    expect(csp).toContain(`script-src ${hashes.join(' ')};`);
    // uPlot is bundled: nothing is fetched to draw the timeline.
    expect(scripts[0]).toContain('uPlot');
  });

  test('has the header facts, summary, requirement matrix and the other sections', () => {
    expect(html).toContain('https://fhir.example.test');
    expect(html).toContain(doc.run.runId);
    expect(html).toContain('token lifetime 600 s instead of 5 minutes');
    expect(html).toContain(`✘ Not conformant: ${doc.summary.byOutcome.fail} failed`);
    for (const id of ['summary', 'checks', 'requirements', 'observations', 'ledger', 'divergences']) expect(html).toContain(`<section id="${id}">`);
    expect(html.match(/<tr id="req-REQ-\d+"><td class="nowrap"><a class="plink" href="#req-REQ-\d+">REQ-/g)).toHaveLength(doc.requirements.length);
    for (const area of Object.keys(doc.summary.byArea)) expect(html).toContain(`data-filter-area="${area}"`);
    expect(html).toContain('Not testable: not observable through the public API');
  });

  test('has the run timeline: its data embedded apart, a link to the stretch of each timing check', () => {
    expect(html).toContain('<section id="timeline">');
    expect(html).toContain('<a href="#timeline">Timeline</a>');
    const embedded = /<script type="application\/json" id="timeline-data">([\s\S]*?)<\/script>/.exec(html)![1]!;
    expect(JSON.parse(embedded)).toEqual(JSON.parse(JSON.stringify(doc.timeline)));
    const limits = doc.checks.find((c) => c.area === 'limits')!;
    expect(html).toContain(`<a href="#timeline?from=1&amp;to=28.6&amp;key=main&amp;check=${encodeURIComponent(limits.id)}">${limits.id}</a>`);
    expect(timelineHash(1000, 28_625, ['main', 'token endpoint'], 'a.b')).toBe('#timeline?from=1&to=28.6&key=main,token%20endpoint&check=a.b');
    // Not in the page data a second time.
    expect(Object.keys(pageData(doc))).not.toContain('timeline');
  });

  test('a report without a timeline (format 2.0) says so', () => {
    const { timeline: _none, ...older } = doc;
    expect(renderHtml(older)).toContain('This report has no timeline');
  });

  test('shows the interrupted banner and the PHI note when they apply', () => {
    const run = syntheticRun(5);
    run.info.interrupted = true;
    run.checks = run.checks.filter((c) => c.outcome !== 'fail');
    const page = renderHtml({ ...buildReport(run), phiMasked: true });
    expect(page).toContain('Run interrupted.');
    expect(page).toContain('⚠ Incomplete run');
    expect(page).toContain('masked in this report');
  });
});
