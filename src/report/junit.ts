/**
 * junit.xml for CI: one <testsuite> per area, one <testcase> per check.
 * fail -> <failure>, error -> <error>, skip -> <skipped>, observation -> a
 * passing testcase whose <system-out> holds the observed values.
 */
import { compareIds, emptyCounts } from './build.js';
import { checkCurl } from './evidence.js';
import { displayValue, runDurationMs } from './text.js';
import type { ReportCheck, ReportDocument } from './types.js';

/** Characters XML 1.0 cannot carry at all, even as character references. */
const XML_INVALID = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function visibleInvalid(ch: string): string {
  return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

export function xmlText(s: string): string {
  return s.replace(XML_INVALID, visibleInvalid).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function xmlAttr(s: string): string {
  return xmlText(s).replace(/"/g, '&quot;').replace(/'/g, '&apos;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;');
}

const seconds = (ms: number): string => (Number.isFinite(ms) ? Math.max(0, ms) / 1000 : 0).toFixed(3);

function detailBody(c: ReportCheck, curl: string | undefined): string {
  const parts: string[] = [];
  if (c.message) parts.push(c.message);
  if (c.expected !== undefined) parts.push(`Expected:\n${displayValue(c.expected)}`);
  if (c.actual !== undefined) parts.push(`Actual:\n${displayValue(c.actual)}`);
  if (c.requirements.length > 0) parts.push(`Requirements: ${c.requirements.join(', ')} (${c.level})`);
  for (const f of c.findings) {
    const lines = [`Finding${f.requirement ? ` [${f.requirement}]` : ''}: ${f.message}`];
    if (f.expected !== undefined) lines.push(`  expected: ${displayValue(f.expected)}`);
    if (f.actual !== undefined) lines.push(`  actual: ${displayValue(f.actual)}`);
    if (f.exchange) lines.push(`  exchange: ${f.exchange}`);
    parts.push(lines.join('\n'));
  }
  if (curl) parts.push(`Reproduce:\n${curl}`);
  return parts.join('\n\n');
}

function testcase(c: ReportCheck, curl: string | undefined): string {
  const open = `    <testcase classname="${xmlAttr(c.area)}" name="${xmlAttr(`${c.id} — ${c.title}`)}" time="${seconds(c.durationMs)}"`;
  const message = xmlAttr(c.message ?? c.outcome);
  switch (c.outcome) {
    case 'pass':
      return `${open}/>`;
    case 'fail':
      return `${open}>\n      <failure message="${message}" type="${xmlAttr(c.level)}">${xmlText(detailBody(c, curl))}</failure>\n    </testcase>`;
    case 'error':
      return `${open}>\n      <error message="${message}" type="error">${xmlText(detailBody(c, curl))}</error>\n    </testcase>`;
    case 'skip':
      return `${open}>\n      <skipped message="${message}"/>\n    </testcase>`;
    case 'observation': {
      const observed = c.observations.map((o) => `${o.key} = ${displayValue(o.value)}${o.note ? `\n  (${o.note})` : ''}`);
      const out = [c.message, ...observed].filter(Boolean).join('\n');
      return `${open}>\n      <system-out>${xmlText(out)}</system-out>\n    </testcase>`;
    }
  }
}

export function renderJunit(doc: ReportDocument): string {
  const { run } = doc;
  const properties = [
    ['run.id', run.runId],
    ['target', run.target.baseUrl],
    ['profile', run.profile],
    ['tool.version', run.toolVersion],
    ['spec.sha256', run.specSha256],
    ['interrupted', String(run.interrupted)],
  ]
    .map(([name, value]) => `      <property name="${xmlAttr(name!)}" value="${xmlAttr(value!)}"/>`)
    .join('\n');
  const areas = new Map<string, ReportCheck[]>();
  for (const c of doc.checks) (areas.get(c.area) ?? areas.set(c.area, []).get(c.area)!).push(c);
  const suites = [...areas.keys()].sort(compareIds).map((area) => {
    const checks = areas.get(area)!;
    const n = emptyCounts();
    for (const c of checks) n[c.outcome]++;
    const time = checks.reduce((t, c) => t + c.durationMs, 0);
    return [
      `  <testsuite name="${xmlAttr(area)}" tests="${checks.length}" failures="${n.fail}" errors="${n.error}" skipped="${n.skip}" time="${seconds(time)}" timestamp="${xmlAttr(checks[0]!.startedAt)}">`,
      `    <properties>\n${properties}\n    </properties>`,
      ...checks.map((c) => testcase(c, checkCurl(doc, c))),
      '  </testsuite>',
    ].join('\n');
  });
  const s = doc.summary.byOutcome;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${xmlAttr(`fhir-conformance ${run.profile} ${run.runId}`)}" tests="${doc.summary.total}" failures="${s.fail}" errors="${s.error}" skipped="${s.skip}" time="${seconds(runDurationMs(run))}" timestamp="${xmlAttr(run.startedAt)}">`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}
