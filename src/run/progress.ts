/**
 * Progress on stderr, as a subscriber of the run's events: a line per area as the
 * run reaches it, a line per failure or error, long waits, and the closing summary.
 * It only consumes events.
 */
import type { RunEvent } from '../engine/events.js';
import { OUTCOMES, type Outcome, type RunResult } from '../engine/types.js';
import { renderPacing } from '../engine/schedule.js';
import { redactString } from '../redact.js';

/** Waits shorter than this are not worth a line. */
const MIN_WAIT_MS = 1000;

export function progressLines(out: (line: string) => void): (e: RunEvent) => void {
  let area = '';
  return (e) => {
    switch (e.type) {
      case 'check-finished': {
        const r = e.result;
        if (r.area !== area) {
          area = r.area;
          out(`▸ ${r.area}`);
        }
        if (r.outcome === 'fail' || r.outcome === 'error') out(`  ${r.outcome.toUpperCase()} ${r.id}: ${redactString(r.message ?? '')}`.slice(0, 300));
        break;
      }
      case 'wait':
        if (e.ms >= MIN_WAIT_MS) out(`  … waiting ${(e.ms / 1000).toFixed(1)} s${e.client ? ` (${e.client})` : ''}: ${redactString(e.reason)}`);
        break;
      default:
        break;
    }
  };
}

/** The closing lines: counts, pacing figures, a setup problem, where the reports are. */
export function summaryLines(result: RunResult, reportDir: string | undefined, setupError: string | undefined): string[] {
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const c of result.checks) counts[c.outcome]++;
  const lines = [`\n${result.checks.length} checks: ${OUTCOMES.map((o) => `${o} ${counts[o]}`).join(' · ')}`];
  if (result.info.pacing) lines.push(renderPacing(result.info.pacing));
  if (setupError) lines.push(`setup: ${redactString(setupError)}`);
  if (reportDir) lines.push(`reports: ${reportDir}`);
  return lines;
}
