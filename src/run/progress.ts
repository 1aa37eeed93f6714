/**
 * Progress on stderr, as a subscriber of the run's events. It knows check tags,
 * slots and outcomes, never particular check ids.
 * - Plain lines (CI logs, pipes): a `▸ area` line as the run reaches an area, with
 *   the checks done so far and their outcomes; a line per failure or error; long waits.
 * - Live (a terminal): one status line redrawn in place (log-update): checks done/total,
 *   outcomes so far, the current check, a rate-limit wait with its countdown, elapsed
 *   and an ETA; failures and errors are printed above it as they happen.
 * Then the closing lines: counts, pacing figures, a setup problem, the reports, the verdict.
 */
import type { PlannedCheck, RunEvent, Subscriber } from '../engine/events.js';
import { OUTCOMES, type Outcome, type RunResult } from '../engine/types.js';
import { renderPacing } from '../engine/schedule.js';
import { redactString } from '../redact.js';
import { verdictOf } from '../report/markdown.js';

/** Waits shorter than this are not worth a line. */
const MIN_WAIT_MS = 1000;
const REDRAW_MS = 250;
const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

const zero = (): Record<Outcome, number> => Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;

function problemLine(r: { outcome: Outcome; id: string; message?: string }): string {
  return `  ${r.outcome.toUpperCase()} ${r.id}: ${redactString(r.message ?? '')}`.slice(0, 300);
}

function waitLine(e: { ms: number; client?: string; reason: string }): string {
  return `  … waiting ${(e.ms / 1000).toFixed(1)} s${e.client ? ` (${e.client})` : ''}: ${redactString(e.reason)}`;
}

/** `pass 12 · fail 1 · error 0 · skip 3` (observations only when there are some). */
function countsText(n: Record<Outcome, number>): string {
  return (['pass', 'fail', 'error', 'skip', 'observation'] as const)
    .filter((o) => o !== 'observation' || n[o] > 0)
    .map((o) => `${o} ${n[o]}`)
    .join(' · ');
}

export function clock(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

/** Plain lines, for logs: `▸ area (done/total · counts)`, failures, errors, long waits. */
export function progressLines(out: (line: string) => void): Subscriber {
  let area = '';
  const counts = zero();
  return (e: RunEvent) => {
    switch (e.type) {
      case 'check-finished': {
        const r = e.result;
        counts[r.outcome]++;
        if (r.area !== area) {
          area = r.area;
          out(`▸ ${r.area}  (${e.index + 1}/${e.total} checks done · ${countsText(counts)})`);
        }
        if (r.outcome === 'fail' || r.outcome === 'error') out(problemLine(r));
        break;
      }
      case 'wait':
        if (e.ms >= MIN_WAIT_MS) out(waitLine(e));
        break;
      default:
        break;
    }
  };
}

/**
 * Expected duration of the checks still to run, from the mean duration of finished
 * checks of the same kind (slot and whether the check waits); undefined before any finished.
 */
export class Eta {
  private readonly byKind = new Map<string, { n: number; ms: number }>();
  private all = { n: 0, ms: 0 };

  private static kind(c: PlannedCheck): string {
    return `${c.slot}${c.tags.includes('waits') ? ':waits' : ''}`;
  }

  record(c: PlannedCheck, ms: number): void {
    const k = Eta.kind(c);
    const s = this.byKind.get(k) ?? { n: 0, ms: 0 };
    this.byKind.set(k, { n: s.n + 1, ms: s.ms + ms });
    this.all = { n: this.all.n + 1, ms: this.all.ms + ms };
  }

  /**
   * `rest` starts with the check under way (running for `currentElapsedMs`) when there is one.
   * `guessed`: some kinds still to run have no finished sample (e.g. the late exhausting checks),
   * so the figure is a floor rather than an estimate.
   */
  remainingMs(rest: readonly PlannedCheck[], currentElapsedMs?: number): { ms: number; guessed: boolean } | undefined {
    if (this.all.n === 0) return undefined;
    const mean = this.all.ms / this.all.n;
    let ms = 0;
    let guessed = false;
    rest.forEach((c, i) => {
      const s = this.byKind.get(Eta.kind(c));
      if (!s) guessed = true;
      const expected = s ? s.ms / s.n : mean;
      ms += i === 0 && currentElapsedMs !== undefined ? Math.max(0, expected - currentElapsedMs) : expected;
    });
    return { ms, guessed };
  }
}

/**
 * The live status line of a terminal run, and a way to print lines above it. log-update (and the
 * terminal packages it pulls in, about 60 ms to load) is loaded here, by a terminal run only.
 */
export async function liveProgress(
  stream: NodeJS.WriteStream = process.stderr,
): Promise<{ subscriber: Subscriber; print: (line: string) => void; stop: () => void }> {
  const { createLogUpdate } = await import('log-update');
  const log = createLogUpdate(stream);
  const started = Date.now();
  const counts = zero();
  const eta = new Eta();
  let planned: readonly PlannedCheck[] = [];
  let done = 0;
  let current: { check: PlannedCheck; index: number; at: number } | undefined;
  let wait: { until: number; client?: string; reason: string } | undefined;
  let frame = 0;
  let stopped = false;

  const status = (): string => {
    const now = Date.now();
    const parts = [`${SPINNER[frame++ % SPINNER.length]} ${done}/${planned.length || '?'} checks`, countsText(counts)];
    if (current) parts.push(current.check.id);
    if (wait && wait.until > now)
      parts.push(`waiting ${Math.ceil((wait.until - now) / 1000)} s${wait.client ? ` (${wait.client})` : ''}: ${redactString(wait.reason)}`);
    parts.push(clock(now - started));
    const rest = current ? planned.slice(current.index) : planned.slice(done);
    const left = eta.remainingMs(rest, current ? now - current.at : undefined);
    if (left !== undefined) parts.push(`${left.guessed ? '≥' : '~'}${clock(left.ms)} left`);
    const line = parts.join(' · ');
    const width = stream.columns || 120;
    return line.length > width - 1 ? `${line.slice(0, width - 2)}…` : line;
  };
  const render = () => {
    if (!stopped) log(status());
  };
  const timer = setInterval(render, REDRAW_MS);
  timer.unref();

  const print = (line: string) => {
    if (stopped) return void stream.write(`${line}\n`);
    log.clear();
    stream.write(`${line}\n`);
    render();
  };
  const stop = () => {
    if (stopped) return;
    clearInterval(timer);
    log.clear();
    log.done();
    stopped = true;
  };

  const subscriber: Subscriber = (e) => {
    switch (e.type) {
      case 'run-started':
        planned = e.planned;
        break;
      case 'check-started':
        current = { check: e.check, index: e.index, at: Date.now() };
        break;
      case 'check-finished': {
        counts[e.result.outcome]++;
        done = e.index + 1;
        eta.record(e.check, current?.check.id === e.check.id ? Date.now() - current.at : (e.result.durationMs ?? 0));
        current = undefined;
        wait = undefined;
        if (e.result.outcome === 'fail' || e.result.outcome === 'error') print(problemLine(e.result));
        break;
      }
      case 'wait':
        wait = { until: Date.now() + e.ms, reason: e.reason, ...(e.client ? { client: e.client } : {}) };
        break;
      case 'run-finished':
        stop();
        return;
      default:
        return;
    }
    render();
  };
  return { subscriber, print, stop };
}

/** The closing counts and pacing figures. */
export function summaryLines(result: RunResult): string[] {
  const counts = zero();
  for (const c of result.checks) counts[c.outcome]++;
  const lines = [`\n${result.checks.length} checks: ${OUTCOMES.map((o) => `${o} ${counts[o]}`).join(' · ')}`];
  if (result.info.pacing) lines.push(renderPacing(result.info.pacing));
  return lines;
}

/** The verdict line: what the exit code says, in words. Never ✅ unless the exit code is 0. */
export function verdictLine(result: RunResult): string {
  const byOutcome = zero();
  for (const c of result.checks) byOutcome[c.outcome]++;
  const exitCode = result.info.exitCode ?? 3;
  const v = verdictOf({
    exitCode,
    byOutcome,
    total: result.checks.length,
    interrupted: result.info.interrupted,
    ...(result.info.setupError ? { setupError: result.info.setupError } : {}),
  });
  return `${v.icon} ${v.text} (exit ${exitCode})`;
}

/** Printed even with --quiet: a setup problem, where the reports are, and the verdict line last. */
export function closingLines(result: RunResult, reportDir: string | undefined, setupError: string | undefined): string[] {
  const lines: string[] = [];
  if (setupError) lines.push(`\n${redactString(setupError)}\n`);
  if (reportDir) lines.push(`reports: ${reportDir}`);
  lines.push(verdictLine(result));
  return lines;
}
