/**
 * summary.md: one screen for a CI job summary ($GITHUB_STEP_SUMMARY) or a PR
 * comment. Verdict line, per-area table, failed/errored checks (at most 25),
 * skips grouped by reason, where the full report is.
 */
import { renderBudget } from '../engine/budget.js';
import type { Outcome } from '../engine/types.js';
import { compareIds } from './build.js';
import { durationText, oneLine, runDurationMs } from './text.js';
import type { ReportCheck, ReportDocument } from './types.js';

export const MAX_LISTED_PROBLEMS = 25;
const MAX_SKIP_REASONS = 10;
const MAX_IDS_PER_REASON = 5;

const LABEL: Record<Outcome, string> = { pass: 'passed', fail: 'failed', error: 'errors', skip: 'skipped', observation: 'observations' };
const COLUMNS: readonly Outcome[] = ['pass', 'fail', 'error', 'skip', 'observation'];

/** Escapes target-controlled text for a Markdown table cell or line (no HTML, no formatting, no pipes). */
export function mdText(s: string, max = 300): string {
  return oneLine(s, max)
    .replace(/[\u0000-\u001F\u007F-\u009F]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/([\\`*_[\]|#~!])/g, '\\$1');
}

const code = (s: string): string => `\`${s.replace(/`/g, "'").replace(/\|/g, '\\|')}\``;

/** True when the run passed: its exit code is 0 (older reports without one: no failure, no error, not interrupted). */
export function runPassed(doc: ReportDocument): boolean {
  if (doc.run.exitCode !== undefined) return doc.run.exitCode === 0 && !doc.run.setupError;
  return doc.summary.byOutcome.fail === 0 && doc.summary.byOutcome.error === 0 && !doc.run.interrupted;
}

export interface VerdictFacts {
  exitCode: number | undefined;
  byOutcome: Record<Outcome, number>;
  total: number;
  interrupted: boolean;
  setupError?: string;
}

/**
 * The one verdict of a run, from its exit code: summary.md's heading and the CLI's
 * last line say the same. Never ✅ unless the exit code is 0.
 */
export function verdictOf(f: VerdictFacts): { icon: string; text: string } {
  const n = f.byOutcome;
  if (n.fail > 0) return { icon: '❌', text: `Not conformant: ${n.fail} of ${f.total} checks failed` };
  if (f.setupError && f.total === 0)
    return { icon: '⛔', text: f.exitCode === 2 ? 'Not run: a set-up problem to fix first' : 'Not run: the target could not be used' };
  if (f.interrupted) return { icon: '⚠️', text: `Incomplete: interrupted after ${f.total} checks` };
  if (n.error > 0 || f.exitCode !== 0)
    return { icon: '⚠️', text: `No verdict: ${n.error} errors kept checks from a verdict${f.setupError ? ' (and a set-up problem)' : ''}; none failed` };
  return { icon: '✅', text: `Conformant for this run: ${n.pass} passed, ${n.skip} skipped, ${n.observation} observations of ${f.total} checks` };
}

export function renderMarkdown(doc: ReportDocument, opts: { location?: string } = {}): string {
  const { run, summary } = doc;
  const counts = COLUMNS.map((o) => `${summary.byOutcome[o]} ${LABEL[o]}`).join(', ');
  const verdict = verdictOf({
    exitCode: run.exitCode,
    byOutcome: summary.byOutcome,
    total: summary.total,
    interrupted: run.interrupted,
    ...(run.setupError ? { setupError: run.setupError } : {}),
  });
  const icon = run.exitCode === undefined ? (runPassed(doc) ? '✅' : '❌') : verdict.icon;
  const out: string[] = [
    `## ${icon} FHIR conformance: ${counts} (${summary.total} checks)${run.exitCode === undefined ? '' : ` · exit ${run.exitCode}`}`,
    '',
    `Target ${code(run.target.baseUrl)}${run.target.embedded ? ' (embedded reference)' : ''} · profile ${code(run.profile)} · run ${code(run.runId)} · ${run.startedAt} · ${durationText(runDurationMs(run))}`,
  ];
  if (run.exitCode !== undefined) out.push('', `**${verdict.text}.**`);
  if (run.setupError) out.push('', `> ⛔ ${mdText(run.setupError, 1500)}`);
  if (run.interrupted) out.push('', '> ⚠️ **The run was interrupted**: results are incomplete.');
  if (doc.phiMasked) out.push('', '> Patient identifiers and CURPs are masked in this report.');
  const r = summary.requirements;
  out.push(
    '',
    `Requirements: ${r.pass} pass, ${r.partial ?? 0} partial (some checks skipped), ${r.fail} fail, ${r.error} error, ${r.observation} observation, ${r.skip} skipped, ${r.untested} untested.`,
  );

  out.push('', '| Area | ✅ pass | ❌ fail | 💥 error | ⏭️ skip | 👁️ observation |', '|---|---:|---:|---:|---:|---:|');
  for (const area of Object.keys(summary.byArea).sort(compareIds)) {
    const n = summary.byArea[area]!;
    out.push(`| ${mdText(area)} | ${COLUMNS.map((o) => n[o]).join(' | ')} |`);
  }

  if (run.budget) {
    out.push('', '### Requests', '', ...renderBudget(run.budget).map((l) => `- ${mdText(l, 2000)}`));
    if (run.budget.leftToFull?.length) {
      const byReason = new Map<string, string[]>();
      for (const l of run.budget.leftToFull) byReason.set(l.reason, [...(byReason.get(l.reason) ?? []), l.requirement]);
      out.push('', '<details><summary>MUST requirements left to <code>full</code></summary>', '');
      for (const [reason, ids] of byReason) out.push(`- ${mdText(reason)} (${ids.length}): ${ids.map(code).join(', ')}`);
      out.push('', '</details>');
    }
  }

  const problems = doc.checks.filter((c) => c.outcome === 'fail' || c.outcome === 'error');
  if (problems.length > 0) {
    out.push('', '### Failed and errored checks', '', '| | Check | Requirement | Message |', '|---|---|---|---|');
    for (const c of problems.slice(0, MAX_LISTED_PROBLEMS)) {
      const reqs = c.requirements.length > 0 ? c.requirements.map(mdText).join(', ') : '—';
      out.push(`| ${c.outcome === 'fail' ? '❌' : '💥'} | ${code(c.id)} ${mdText(c.title)} | ${reqs} | ${mdText(c.message ?? '')} |`);
    }
    if (problems.length > MAX_LISTED_PROBLEMS) out.push('', `… and ${problems.length - MAX_LISTED_PROBLEMS} more`);
  }

  const skips = groupSkips(doc.checks);
  if (skips.length > 0) {
    out.push('', '### Skipped checks by reason', '');
    for (const [reason, ids] of skips.slice(0, MAX_SKIP_REASONS)) {
      const listed = ids.slice(0, MAX_IDS_PER_REASON).map(code).join(', ');
      const more = ids.length > MAX_IDS_PER_REASON ? ` and ${ids.length - MAX_IDS_PER_REASON} more` : '';
      out.push(`- ${mdText(reason)} (${ids.length}): ${listed}${more}`);
    }
    if (skips.length > MAX_SKIP_REASONS) out.push(`- … and ${skips.length - MAX_SKIP_REASONS} more reasons`);
  }

  out.push('', `Full report: ${code(opts.location ?? `reports/${run.runId}/report.html`)}`, '');
  return out.join('\n');
}

/** Skip reasons, most frequent first, each with the ids it covers. */
function groupSkips(checks: ReportCheck[]): Array<[string, string[]]> {
  const byReason = new Map<string, string[]>();
  for (const c of checks) {
    if (c.outcome !== 'skip') continue;
    const reason = oneLine(c.message, 300) || 'no reason given';
    (byReason.get(reason) ?? byReason.set(reason, []).get(reason)!).push(c.id);
  }
  return [...byReason.entries()].sort((a, b) => b[1].length - a[1].length || compareIds(a[0], b[0]));
}
