/**
 * Assembles the RunResult the reporters consume: run info, checks, the
 * per-requirement roll-up and the ledger of created resources.
 */
import { loadRequirements, specSha256 } from '../requirements/index.js';
import { rollupRequirement } from '../report/index.js';
import type { CheckResult, LedgerEntry, RequirementVerdict, RunInfo, RunResult } from './types.js';
import type { RunState } from '../vitest/handoff.js';
import { TOOL_VERSION } from '../version.js';

export function buildRunResult(state: RunState, endedAt = new Date()): RunResult {
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
    profile: state.options.profile ?? 'full',
    config: state.redactedConfig ?? null,
    deviations: state.deviations,
    startedAt: state.startedAt,
    endedAt: endedAt.toISOString(),
    interrupted: state.interrupted,
    exitCode: exitCodeOf(checks, state),
    ...(state.pacing ? { pacing: state.pacing } : {}),
  };
  return {
    info,
    checks,
    requirements: requirementVerdicts(checks),
    ledger: checks.flatMap((c) => c.created ?? []).sort((a: LedgerEntry, b: LedgerEntry) => a.at.localeCompare(b.at)),
    // OpenAPI vs R4 CapabilityStatement, then spec-stated vs published (R5 DocumentReference).
    divergences: [...(state.model?.divergences ?? []), ...(state.model?.specDivergences ?? [])],
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

/** 0: no check failed; 1: a check failed; 3: errors (or an interrupt) kept checks from a verdict and none failed. */
export function exitCodeOf(checks: CheckResult[], state: Pick<RunState, 'setupError' | 'interrupted'>): number {
  if (checks.some((c) => c.outcome === 'fail')) return 1;
  if (state.setupError || state.interrupted || checks.some((c) => c.outcome === 'error')) return 3;
  return 0;
}
