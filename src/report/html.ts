/**
 * report.html: one self-contained file (inline CSS and JS, no network) for a
 * human reader. Static parts (header, summary, requirement matrix,
 * observations, ledger, divergences) are rendered here; the check list is
 * rendered by the inline script from the checks and their evidence embedded as
 * JSON (the rest of report.json is in the static parts), failures first, with
 * the details of a check built only when it is expanded (failures and errors
 * are expanded from the start). `#check-<id>` opens a check, `#req-<id>` points
 * at a requirement. A Content-Security-Policy forbids every network load and
 * allows only the one inline script, by hash.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { OUTCOMES } from '../engine/types.js';
import type { Outcome } from '../engine/types.js';
import { compareIds } from './build.js';
import { internBodies, PAGE_PASSING_BODY_CAP } from './evidence.js';
import { runPassed } from './markdown.js';
import { displayValue, durationText, oneLine, runDurationMs } from './text.js';
import type { ReportDocument, RequirementOutcome } from './types.js';

const STYLE = readFileSync(new URL('./assets/report.css', import.meta.url), 'utf8');
const SCRIPT = readFileSync(new URL('./assets/report.client.js', import.meta.url), 'utf8');
/** uPlot (MIT, about 50 kB minified) draws the run timeline; bundled in the page, nothing is fetched. */
const uplotFile = (name: string): string => readFileSync(createRequire(import.meta.url).resolve(`uplot/dist/${name}`), 'utf8');
const UPLOT_SCRIPT = uplotFile('uPlot.iife.min.js');
const UPLOT_STYLE = uplotFile('uPlot.min.css');
const TIMELINE_SCRIPT = readFileSync(new URL('./assets/timeline.client.js', import.meta.url), 'utf8');
const scriptHash = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
const CSP = `default-src 'none'; style-src 'unsafe-inline'; script-src ${[UPLOT_SCRIPT, TIMELINE_SCRIPT, SCRIPT].map(scriptHash).join(' ')}; img-src data:; base-uri 'none'; form-action 'none'`;

/** Display order: what needs attention first. */
const ORDER: readonly Outcome[] = ['fail', 'error', 'skip', 'pass', 'observation'];
const LABEL: Record<RequirementOutcome, string> = {
  pass: 'Passed',
  fail: 'Failed',
  error: 'Errors',
  skip: 'Skipped',
  observation: 'Observations',
  partial: 'Partial',
  untested: 'Untested',
};

/** Escapes text for HTML content and quoted attributes; control characters become visible `\uXXXX`. */
export function escapeHtml(s: string): string {
  return s
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** JSON safe inside <script type="application/json">: no `<`, `>` or `&` can end or confuse the element. */
export function embedJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const e = escapeHtml;
const badge = (o: RequirementOutcome): string => `<span class="badge o-${o}">${o}</span>`;
/** The fragment that opens a check in the page. */
export const checkHash = (id: string): string => `#check-${encodeURIComponent(id)}`;
/** The fragment of a requirement's row. */
export const requirementHash = (id: string): string => `#req-${encodeURIComponent(id)}`;
/** A link that opens a check (styled by `a[href^="#check-"]`). */
const checkLink = (id: string): string => `<a href="${e(checkHash(id))}">${e(id)}</a>`;

function verdictText(doc: ReportDocument): string {
  const n = doc.summary.byOutcome;
  if (n.fail > 0) return `✘ Not conformant: ${n.fail} failed`;
  if (doc.run.setupError && doc.summary.total === 0) return '⛔ Not run';
  if (doc.run.interrupted) return '⚠ Incomplete run';
  if (n.error > 0 || (doc.run.exitCode ?? 0) !== 0) return `⚠ Undecided: ${n.error} errors`;
  return '✔ Conformant for this run';
}

function header(doc: ReportDocument): string {
  const { run } = doc;
  const ok = runPassed(doc);
  const fact = (label: string, value: string, title = value): string => `<div title="${e(title)}"><b>${e(label)}</b>${e(value)}</div>`;
  const facts = [
    fact('Target', run.target.baseUrl + (run.target.embedded ? ' (embedded reference)' : '')),
    fact('Profile', run.profile),
    fact('Run id', run.runId),
    fact('Started', run.startedAt),
    fact('Ended', run.endedAt),
    fact('Duration', durationText(runDurationMs(run))),
    fact('Tool version', run.toolVersion),
    fact('Spec SHA-256', run.specSha256.slice(0, 16) + (run.specSha256.length > 16 ? '…' : ''), run.specSha256),
    ...(run.target.openapiSha256 ? [fact('OpenAPI SHA-256', `${run.target.openapiSha256.slice(0, 16)}…`, run.target.openapiSha256)] : []),
    ...(run.target.capabilitySha256 ? [fact('Capability SHA-256', `${run.target.capabilitySha256.slice(0, 16)}…`, run.target.capabilitySha256)] : []),
    ...(run.exitCode === undefined ? [] : [fact('Exit code', String(run.exitCode))]),
  ];
  const banners: string[] = [];
  if (run.setupError) banners.push(`<div class="banner warn" role="alert"><b>The run could not work.</b> ${e(run.setupError)}</div>`);
  if (run.interrupted) {
    banners.push('<div class="banner warn" role="alert"><b>Run interrupted.</b> The results below are incomplete: checks that did not run are missing.</div>');
  }
  if (run.deviations.length > 0) {
    banners.push(
      `<div class="banner warn"><b>Deviations: limits the configuration declares other than the spec's, faults and choices of the embedded reference</b><ul>${run.deviations.map((d) => `<li>${e(d)}</li>`).join('')}</ul></div>`,
    );
  }
  if (doc.phiMasked) banners.push('<div class="banner info">Patient identifiers and CURPs are masked in this report (<code>--redact-phi</code>).</div>');
  return `<header class="run">
  <div><h1>FHIR conformance report</h1><div class="facts">${facts.join('')}</div></div>
  <div class="verdict ${ok ? 'ok' : 'ko'}">${verdictText(doc)}</div>
</header>
${banners.join('\n')}`;
}

function summary(doc: ReportDocument): string {
  const s = doc.summary;
  const cards = [
    `<button type="button" class="card" data-filter-outcome=""><div class="n">${s.total}</div><div class="l">Checks</div></button>`,
    ...ORDER.map(
      (o) =>
        `<button type="button" class="card o-${o}" data-filter-outcome="${o}"><div class="n">${s.byOutcome[o]}</div><div class="l">${LABEL[o]}</div></button>`,
    ),
  ];
  const areas = Object.keys(s.byArea)
    .sort(compareIds)
    .map((area) => {
      const n = s.byArea[area]!;
      const total = OUTCOMES.reduce((t, o) => t + n[o], 0);
      const segments = ORDER.filter((o) => n[o] > 0)
        .map((o) => `<span class="o-${o}" style="width:${((n[o] / total) * 100).toFixed(3)}%" title="${n[o]} ${o}"></span>`)
        .join('');
      const counts = ORDER.filter((o) => n[o] > 0)
        .map((o) => `${n[o]} ${o}`)
        .join(' · ');
      return `<button type="button" class="name" data-filter-area="${e(area)}" title="Show the checks of ${e(area)}">${e(area)}</button><div class="bar">${segments}</div><div class="small muted nowrap">${e(counts)}</div>`;
    });
  const r = s.requirements;
  const reqLine = (['pass', 'partial', 'fail', 'error', 'observation', 'skip', 'untested'] as const)
    .map((o) => `<span class="o-${o}"><i></i>${r[o] ?? 0} ${o}</span>`)
    .join('');
  return `<section id="summary"><h2>Summary</h2>
<div class="cards">${cards.join('')}</div>
<div class="areas">${areas.join('\n')}</div>
<div class="legend">${ORDER.map((o) => `<span class="o-${o}"><i></i>${o}</span>`).join('')}</div>
<h3>Requirements</h3><div class="legend">${reqLine}</div>
</section>`;
}

function requirementMatrix(doc: ReportDocument): string {
  if (doc.requirements.length === 0)
    return '<section id="requirements"><h2>Requirement coverage</h2><p class="muted">No requirements in this run.</p></section>';
  const rows = doc.requirements.map((r) => {
    const checks = r.checks.map(checkLink).join(' ');
    const why = !r.testable && r.reason ? `<div class="small muted">Not testable: ${e(r.reason)}</div>` : '';
    return `<tr id="req-${e(r.id)}"><td class="nowrap"><a class="plink" href="${e(requirementHash(r.id))}">${e(r.id)}</a></td><td><span class="level ${e(r.level)}">${e(r.level)}</span></td><td>${e(r.text)}<div class="small muted">${e(r.section)}</div>${why}</td><td class="checks">${checks || '<span class="muted">—</span>'}</td><td>${badge(r.outcome)}</td></tr>`;
  });
  return `<section id="requirements"><h2>Requirement coverage (${doc.requirements.length})</h2>
<p class="small muted">A requirement's verdict, observation checks aside: fail if one of its checks failed, else error if one errored; pass only when all passed; partial when some passed and others skipped; skip when all skipped. Observation checks only: observation; no check: untested. A requirement's id links to its row (<code>report.html#req-&lt;id&gt;</code>; clicking it copies the link).</p>
<table class="reqs"><thead><tr><th>Requirement</th><th>Level</th><th>Text</th><th>Checks</th><th>Verdict</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table></section>`;
}

function checksSection(doc: ReportDocument): string {
  const chips = [
    `<button type="button" class="chip o-all" data-outcome="" aria-pressed="true" title="Show every outcome">all ${doc.summary.total}</button>`,
    ...ORDER.map(
      (o) =>
        `<button type="button" class="chip o-${o}" data-outcome="${o}" aria-pressed="false" title="Show only ${o} (click more outcomes to add them)">${o} ${doc.summary.byOutcome[o]}</button>`,
    ),
  ].join('');
  const areas = Object.keys(doc.summary.byArea)
    .sort(compareIds)
    .map((a) => `<option value="${e(a)}">${e(a)}</option>`)
    .join('');
  const problems = doc.checks.filter((c) => c.outcome === 'fail' || c.outcome === 'error');
  const noscript = problems
    .map(
      (c) =>
        `<tr id="check-${e(c.id)}"><td>${badge(c.outcome)}</td><td class="mono">${e(c.id)}</td><td>${e(c.title)}</td><td>${e(oneLine(c.message, 400))}</td></tr>`,
    )
    .join('');
  return `<section id="checks"><h2>Checks (${doc.summary.total})</h2>
<div class="toolbar">${chips}
<select id="check-area" aria-label="Area"><option value="">All areas</option>${areas}</select>
<input id="check-search" type="search" placeholder="Search id, title, message, requirement…" aria-label="Search checks">
<button type="button" class="btn" data-action="expand">Expand all</button><button type="button" class="btn" data-action="collapse">Collapse all</button><button type="button" class="btn" data-action="reset">Reset</button>
<span class="count" id="check-count"></span></div>
<div id="check-list"></div>
<div id="check-empty" class="empty" hidden>No check matches the filters.</div>
<noscript><p class="banner warn">The interactive check list needs JavaScript. Failed and errored checks are listed below; the complete data is in report.json.</p>
<table><tbody>${noscript}</tbody></table></noscript>
</section>`;
}

function observationsSection(doc: ReportDocument): string {
  const rows = doc.observations.map(
    (o) => `<tr><td>${checkLink(o.check)}</td><td class="mono">${e(o.key)}</td><td><pre>${e(displayValue(o.value))}</pre></td><td>${e(o.note ?? '')}</td></tr>`,
  );
  return `<section id="observations"><h2>Observations (${doc.observations.length})</h2>
<p class="small muted">What the target does where the spec leaves the behaviour open. Recorded facts, never failures.</p>
${rows.length === 0 ? '<p class="muted">None.</p>' : `<table><thead><tr><th>Check</th><th>Key</th><th>Observed value</th><th>Note</th></tr></thead><tbody>${rows.join('\n')}</tbody></table>`}
</section>`;
}

function ledgerSection(doc: ReportDocument): string {
  const rows = doc.ledger.map(
    (l) =>
      `<tr><td>${e(l.resourceType)}</td><td class="mono">${e(l.id)}</td><td class="mono">${e(l.url)}</td><td>${checkLink(l.createdBy)}</td><td class="nowrap">${e(l.at)}</td></tr>`,
  );
  return `<section id="ledger"><h2>Resources created on the target (${doc.ledger.length})</h2>
${rows.length === 0 ? '<p class="muted">None.</p>' : `<table><thead><tr><th>Type</th><th>Id</th><th>URL</th><th>Created by</th><th>At</th></tr></thead><tbody>${rows.join('\n')}</tbody></table>`}
</section>`;
}

function divergencesSection(doc: ReportDocument): string {
  return `<section id="divergences"><h2>OpenAPI / CapabilityStatement divergences (${doc.divergences.length})</h2>
${doc.divergences.length === 0 ? '<p class="muted">None found.</p>' : `<ul>${doc.divergences.map((d) => `<li>${e(d)}</li>`).join('')}</ul>`}
</section>`;
}

/** The fragment that zooms the timeline to a stretch (seconds from the run's start) on lanes, marked for a check. */
export function timelineHash(from: number, to: number, lanes: readonly string[], check?: string): string {
  const sec = (ms: number): string => String(Math.round(ms / 100) / 10);
  const key = lanes.length ? `&key=${lanes.map(encodeURIComponent).join(',')}` : '';
  return `#timeline?from=${sec(from)}&to=${sec(to)}${key}${check ? `&check=${encodeURIComponent(check)}` : ''}`;
}

function timelineSection(doc: ReportDocument): string {
  const tl = doc.timeline;
  if (!tl)
    return '<section id="timeline"><h2>Timeline</h2><p class="muted">This report has no timeline (written before format 2.1, or no check ran).</p></section>';
  const outcome = new Map(doc.checks.map((c) => [c.id, c.outcome]));
  const timing = Object.entries(tl.checks)
    .filter(([id]) => outcome.has(id))
    .sort(([a], [b]) => compareIds(a, b))
    .map(([id, span]) => {
      const lanes = span.lanes.map((i) => tl.lanes[i]?.name ?? String(i));
      const o = outcome.get(id)!;
      return `<li>${badge(o)} <a href="${e(timelineHash(span.from, span.to, lanes, id))}">${e(id)}</a> <span class="muted small">${e(durationText(span.to - span.from))}${lanes.length ? ` on ${e(lanes.join(', '))}` : ''}</span></li>`;
    });
  const swatch = (cls: string, label: string): string => `<span><i class="${cls}"></i>${e(label)}</span>`;
  return `<section id="timeline"><h2>Timeline</h2>
<p class="small muted">The run's requests over time, one chart per key (and the token endpoint, limited per source address, and requests sent without a key). The blue stepped line counts the key's requests in its trailing window against the declared ceiling (dashed red); each request is a point on it, coloured by its answer. Shaded red: the wait a <code>Retry-After</code> asked for. Purple lines at the top: tokens issued on the key, from the token request to their expiry. Bars under a chart: the suite's own waits (red: Retry-After, blue: pacing, amber: back-off, grey: a check's wait; those of no key under the chart of requests without a key). The count is over a trailing window: a target whose window restarts on the clock may let up to twice its ceiling through around a restart. Drag across a chart to zoom (all charts follow), double-click or Reset to see the whole run; hover for the exchanges at a moment. A timing check's link zooms to the stretch its evidence covers (<code>report.html#timeline?from=&lt;s&gt;&amp;to=&lt;s&gt;&amp;key=&lt;key&gt;</code>).</p>
<div class="tl-legend legend">${swatch('tl-ok', '2xx/3xx')}${swatch('tl-401', '401/403')}${swatch('tl-429', '429')}${swatch('tl-4xx', 'other 4xx')}${swatch('tl-5xx', '5xx')}${swatch('tl-none', 'no answer')}${swatch('tl-ceiling', 'declared ceiling')}${swatch('tl-retry', 'Retry-After asked')}${swatch('tl-token', 'token lifetime')}${swatch('tl-wait', "suite's wait")}</div>
<div class="toolbar tl-toolbar"><button type="button" class="btn" id="timeline-reset">Reset zoom</button><span class="count" id="timeline-range"></span></div>
<div id="timeline-charts"></div>
<div class="small mono muted" id="timeline-readout">&nbsp;</div>
${timing.length ? `<h3>Timing checks (${timing.length})</h3><ul class="tl-checks">${timing.join('')}</ul>` : ''}
<noscript><p class="muted">The timeline needs JavaScript; its data is report.json's <code>timeline</code>.</p></noscript>
</section>`;
}

/**
 * What the script needs: the checks and their evidence (and the run facts).
 * Requirements, observations, the ledger and the divergences are in the page
 * as HTML; embedding them again would only make the file bigger.
 */
export function pageData(doc: ReportDocument): Pick<ReportDocument, 'formatVersion' | 'run' | 'phiMasked' | 'summary' | 'checks' | 'exchanges' | 'bodies'> {
  // Bodies only passing checks cite are cut shorter than in report.json (which the page says); failures' evidence is whole.
  const { formatVersion, run, phiMasked, summary, checks, exchanges, bodies } = internBodies(doc, PAGE_PASSING_BODY_CAP, { slimPassing: true });
  return { formatVersion, run, ...(phiMasked === undefined ? {} : { phiMasked }), summary, checks, exchanges, bodies };
}

export function renderHtml(doc: ReportDocument): string {
  const { run } = doc;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${e(`FHIR conformance ${runPassed(doc) ? 'PASS' : 'FAIL'} · ${run.target.baseUrl} · ${run.runId}`)}</title>
<style>${UPLOT_STYLE}${STYLE}</style>
</head>
<body>
<nav class="top"><div class="inner"><span class="brand">fhir-conformance</span><a href="#summary">Summary</a><a href="#timeline">Timeline</a><a href="#checks">Checks</a><a href="#requirements">Requirements</a><a href="#observations">Observations</a><a href="#ledger">Ledger</a><a href="#divergences">Divergences</a></div></nav>
<main>
${header(doc)}
${summary(doc)}
${timelineSection(doc)}
${checksSection(doc)}
${requirementMatrix(doc)}
${observationsSection(doc)}
${ledgerSection(doc)}
${divergencesSection(doc)}
<footer>fhir-conformance ${e(run.toolVersion)} · report format ${e(doc.formatVersion)} · run ${e(run.runId)}</footer>
</main>
<script type="application/json" id="report-data">${embedJson(pageData(doc))}</script>
<script type="application/json" id="timeline-data">${embedJson(doc.timeline ?? null)}</script>
<script>${UPLOT_SCRIPT}</script>
<script>${TIMELINE_SCRIPT}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
