/**
 * The one executor: runs planned checks one after another on a runtime, with
 * per-check time budgets, and publishes check-started / check-finished events.
 * The CLI, the embedded run and the mutation runner all come through here.
 */
import type { CheckDefinition } from './check.js';
import { executeCheck, startEarlyWork, whyNotRun } from './execute.js';
import { plannedCheck, type RunEvents } from './events.js';
import { planChecks, slotOf, type CatalogCheck, type Slot } from './plan.js';
import { PLANNED_KEY } from './schedule.js';
import type { Runtime } from './runtime.js';
import type { CheckResult } from './types.js';

/** Budget of a check that declares none. */
export const DEFAULT_CHECK_TIMEOUT_MS = 120_000;

/** Runs the checks in schedule order; stops early (keeping what finished) when the run is interrupted. */
export async function executePlan(
  checks: readonly (CheckDefinition | CatalogCheck)[],
  rt: Runtime,
  events: RunEvents,
  opts: { arrange?: (slot: Slot, checks: Array<CheckDefinition | CatalogCheck>) => Array<CheckDefinition | CatalogCheck> } = {},
): Promise<CheckResult[]> {
  const planned = planChecks(checks, opts.arrange);
  // Episodes shared by several checks skip the parts no executed check judges.
  rt.shared.set(PLANNED_KEY, new Set(planned.map((c) => c.id)));
  const results: CheckResult[] = [];
  const early = earlyStarter(planned, rt);
  for (const [index, check] of planned.entries()) {
    if (rt.signal.aborted) break;
    early(index);
    const info = plannedCheck(check, slotOf(check));
    events.emit({ type: 'check-started', check: info, index, total: planned.length });
    const result = await executeCheck(check, rt, { timeoutMs: check.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS });
    // A check cut short by an interrupt has no verdict of its own: the report says the run was interrupted.
    if (rt.signal.aborted && result.outcome === 'error') break;
    results.push(result);
    events.emit({
      type: 'check-finished',
      check: info,
      result,
      index,
      total: planned.length,
      stats: rt.runStats(),
      ...(early.startedBefore(check, index) ? { startedEarly: true } : {}),
    });
  }
  return results;
}

/**
 * Starts the early work of the planned checks that declare some (CheckDefinition.startEarly)
 * and will run: before check `index` runs, once no check from it up to the declaring one
 * declares one of the work's roles. The work owns those keys until it settles.
 */
function earlyStarter(
  planned: readonly CheckDefinition[],
  rt: Runtime,
): ((index: number) => void) & { startedBefore(check: CheckDefinition, index: number): boolean } {
  const pending = planned
    .map((check, at) => ({ check, at, roles: check.startEarly && !whyNotRun(check, rt) ? check.startEarly.roles(rt.config) : [] }))
    .filter((e) => e.roles.length > 0);
  /** Where each started work began: the index of the check about to run then. */
  const startedAt = new Map<CheckDefinition, number>();
  const start = (index: number) => {
    for (const e of [...pending]) {
      if (e.at < index) {
        pending.splice(pending.indexOf(e), 1); // its own turn has come: it starts its work as it runs
        continue;
      }
      if (planned.slice(index, e.at).some((c) => (c.clients ?? []).some((r) => e.roles.includes(r)))) continue;
      pending.splice(pending.indexOf(e), 1);
      startedAt.set(e.check, index);
      rt.reserveKeys(e.roles, startEarlyWork(e.check, rt));
    }
  };
  return Object.assign(start, {
    // Started before another check ran: its work overlapped theirs.
    startedBefore: (check: CheckDefinition, index: number) => (startedAt.get(check) ?? index) < index,
  });
}
