/**
 * The suites' in-process runner with short limits (2 s windows, 3 s tokens, 20
 * issuances per window), so waiting checks take seconds. Used by the auth,
 * issuance-limit and headers suite tests.
 */
import { runInProcess, nonConforming, type InProcessOptions } from '../../src/run/in-process.js';
import type { ChecksExport } from '../../src/engine/catalog.js';
import type { ReferenceLimits } from '../../src/reference/types.js';
import type { CheckDefinition } from '../../src/engine/check.js';
import type { CheckResult } from '../../src/engine/types.js';

export { describeResults } from '../../src/run/in-process.js';

export const TEST_LIMITS: Partial<ReferenceLimits> = {
  perKeyPerWindow: 1000,
  perOrgPerWindow: 5000,
  windowMs: 2000,
  tokenIssuancePerWindow: 20,
  tokenWindowMs: 2000,
  tokenLifetimeSec: 3,
};

export const runChecks = (checks: ChecksExport | 'all', opts: InProcessOptions = {}) => runInProcess(checks, { limits: TEST_LIMITS, ...opts });

/** Every check passes (observation checks record) on a conforming target. */
export const conforming = nonConforming;

/** The checks with these ids, in the given order; throws on an unknown id. */
export function pick(checks: readonly CheckDefinition[], ids: readonly string[]): CheckDefinition[] {
  return ids.map((id) => {
    const c = checks.find((x) => x.id === id);
    if (!c) throw new Error(`no check ${id}`);
    return c;
  });
}

/** The ids among `ids` whose result is not `fail`: empty when the fault is caught by each. */
export function notFailed(results: Map<string, CheckResult>, ids: readonly string[]): string[] {
  return ids
    .filter((id) => results.get(id)?.outcome !== 'fail')
    .map((id) => `${id}: ${results.get(id)?.outcome ?? 'not run'} ${results.get(id)?.message ?? ''}`.trim());
}
