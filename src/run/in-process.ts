/**
 * The run path without report files or progress, for the mutation runner and the
 * project tests: a fresh embedded reference (optionally with planted faults,
 * alternative modes or other limits), the same executor and schedule as a CLI run.
 */
import type { ChecksExport } from '../engine/catalog.js';
import type { CheckResult, Profile } from '../engine/types.js';
import type { ReferenceLimits, ReferenceModes } from '../reference/types.js';
import type { Subscriber } from '../engine/events.js';
import { runConformance } from './index.js';

export interface InProcessOptions {
  faults?: string[];
  modes?: Partial<ReferenceModes>;
  /** Reference limits (default: the embedded run's short windows). */
  limits?: Partial<ReferenceLimits>;
  profile?: Profile;
  /** Only checks whose id or title matches. */
  only?: RegExp;
  /** Only checks naming one of these requirement ids. */
  requirements?: readonly string[];
  /** Also these checks, by id, whatever requirements they name. */
  ids?: readonly string[];
  /** Target config members laid over the embedded reference's (e.g. `documentReference` declarations), or a function of its config. */
  config?: Record<string, unknown> | ((raw: Record<string, unknown>) => Record<string, unknown>);
  /** Run deadline from now, ms (default 5 minutes). */
  deadlineMs?: number;
  subscribers?: readonly Subscriber[];
  /** Cancels the run (a partial result). */
  signal?: AbortSignal;
  /** How the reference is reached (default http; `in-process`: its handler called directly, src/http/in-process.ts). */
  transport?: 'http' | 'in-process';
}

/** Executes the selected checks in schedule order; returns their results by id, in run order. */
export async function runInProcess(checks: ChecksExport | 'all', opts: InProcessOptions = {}): Promise<Map<string, CheckResult>> {
  const run = await runConformance({
    ...(checks === 'all' ? {} : { checks }),
    profile: opts.profile ?? 'full',
    reference: { faults: opts.faults ?? [], ...(opts.modes ? { modes: opts.modes } : {}), ...(opts.limits ? { limits: opts.limits } : {}) },
    ...(opts.only ? { only: opts.only } : {}),
    ...(opts.requirements ? { requirements: opts.requirements } : {}),
    ...(opts.ids ? { ids: opts.ids } : {}),
    ...(opts.config ? { configOverlay: opts.config } : {}),
    deadlineMs: opts.deadlineMs ?? 300_000,
    progress: false,
    writeReports: false,
    ...(opts.subscribers ? { subscribers: opts.subscribers } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.transport ? { transport: opts.transport } : {}),
  });
  if (run.setupError && run.results.length === 0) throw new Error(run.setupError);
  return new Map(run.results.map((r) => [r.id, r]));
}

/** `id: outcome (message)` lines, for readable assertion failures. */
export function describeResults(results: Map<string, CheckResult>): string[] {
  return [...results.values()].map((r) => `${r.id}: ${r.outcome}${r.message ? ` (${r.message.slice(0, 200)})` : ''}`);
}

/** The lines of checks that neither passed nor observed: empty on a conforming target. */
export function nonConforming(results: Map<string, CheckResult>): string[] {
  return describeResults(results).filter((line) => !/: (pass|observation)\b/.test(line));
}
