/**
 * Assembles the RunResult the reporters consume: run info, checks, the
 * per-requirement roll-up and the ledger of created resources.
 */
import { loadRequirements, specSha256 } from '../requirements/index.js';
import { rollupRequirement } from '../report/index.js';
import type { CheckResult, LedgerEntry, Profile, RequestBudget, RequirementVerdict, RunInfo, RunResult, RunTimeline } from '../engine/types.js';
import type { OperationModel } from '../discovery/index.js';
import type { PacingFigures } from '../engine/schedule.js';
import { TOOL_VERSION } from '../version.js';

/** What a run knows about itself when it ends (or is cut short). */
export interface RunRecord {
  runId: string;
  startedAt: string;
  profile: Profile;
  baseUrl?: string;
  embedded: boolean;
  model?: OperationModel;
  /** The effective config with secrets replaced by `[redacted]`. */
  redactedConfig?: unknown;
  deviations: string[];
  results: CheckResult[];
  interrupted: boolean;
  /** A fatal problem before any check could run (unreachable target, bad config). */
  setupError?: string;
  /** The exit code of a run the preflight stopped: 2 for the user's set-up, 3 for a target that cannot be reached. */
  setupExitCode?: 2 | 3;
  pacing?: PacingFigures;
  budget?: RequestBudget;
  /** The run's requests, waits and tokens over time (src/engine/timeline-collector.ts). */
  timeline?: RunTimeline;
}

export function buildRunResult(state: RunRecord, endedAt = new Date()): RunResult {
  const checks = [...state.results].sort((a, b) => a.id.localeCompare(b.id));
  const info: RunInfo = {
    runId: state.runId,
    toolVersion: TOOL_VERSION,
    specSha256: specSha256() ?? 'unavailable',
    target: {
      baseUrl: state.baseUrl ?? '(not resolved)',
      embedded: state.embedded,
      openapiSha256: state.model?.hashes.openapi,
      capabilitySha256: state.model?.hashes.capabilityR4,
    },
    profile: state.profile,
    config: state.redactedConfig ?? null,
    deviations: state.deviations,
    startedAt: state.startedAt,
    endedAt: endedAt.toISOString(),
    interrupted: state.interrupted,
    exitCode: exitCodeOf(checks, state),
    ...(state.setupError ? { setupError: state.setupError } : {}),
    ...(state.pacing ? { pacing: state.pacing } : {}),
    ...(state.budget ? { budget: state.budget } : {}),
  };
  return {
    info,
    checks,
    requirements: requirementVerdicts(checks),
    ledger: checks.flatMap((c) => c.created ?? []).sort((a: LedgerEntry, b: LedgerEntry) => a.at.localeCompare(b.at)),
    // OpenAPI vs R4 CapabilityStatement, then spec-stated vs published (R5 DocumentReference).
    divergences: [...(state.model?.divergences ?? []), ...(state.model?.specDivergences ?? [])],
    ...(state.timeline ? { timeline: state.timeline } : {}),
  };
}

export function requirementVerdicts(checks: CheckResult[]): RequirementVerdict[] {
  const byReq = new Map<string, CheckResult[]>();
  for (const c of checks) for (const r of c.requirements) byReq.set(r, [...(byReq.get(r) ?? []), c]);
  return loadRequirements().map((r) => {
    const cs = byReq.get(r.id) ?? [];
    return {
      id: r.id,
      level: r.level,
      text: r.text,
      section: r.section,
      testable: r.testable,
      ...(r.reason ? { reason: r.reason } : {}),
      checks: cs.map((c) => c.id),
      outcome: rollupRequirement(cs.map((c) => c.outcome)),
    };
  });
}

/**
 * 0: no check failed; 1: a check failed; 2: the preflight found the user's set-up wrong;
 * 3: errors (or an interrupt) kept checks from a verdict and none failed.
 */
export function exitCodeOf(checks: CheckResult[], state: Pick<RunRecord, 'setupError' | 'interrupted' | 'setupExitCode'>): number {
  if (checks.some((c) => c.outcome === 'fail')) return 1;
  if (state.setupExitCode !== undefined) return state.setupExitCode;
  if (state.setupError || state.interrupted || checks.some((c) => c.outcome === 'error')) return 3;
  return 0;
}
