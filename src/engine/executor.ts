/**
 * The one executor: runs planned checks one after another on a runtime, with
 * per-check time budgets, and publishes check-started / check-finished events.
 * The CLI, the embedded run and the mutation runner all come through here.
 *
 * With a token lane (`ExecuteOptions.lane`), the order within the paced slot adapts to the
 * limits as the run meets them: a check that only talks to the token endpoint waits in a queue
 * while the issuance window has no room for it (its token requests plus a reserve for the other
 * checks' tokens), instead of holding up the main key's checks for up to a window; and while the
 * main key waits for its window, such checks (queued, or later in the slot) run in its wait.
 * Those checks use no key of early-started work, so moving them never changes what a key sees.
 * What is still queued runs at the end of the slot, before any check of a later slot.
 *
 * Work started early (CheckDefinition.startEarly) starts once the last paced check declaring one of
 * its keys has run; those checks therefore run together, where the first of them stands in plan
 * order (`gatherEarlyKeyUsers`), so one declared late in the slot does not hold the work back.
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
/** A main-key wait worth filling with token-only checks, ms. */
export const LANE_PULL_MS = 2_000;

/** What the executor asks to move token-only checks within the paced slot. */
export interface TokenLane {
  /** Token requests of a check that talks only to the token endpoint (no request with the main key), else 0. */
  tokensOf(check: CheckDefinition): number;
  /** Token requests that can be sent now without waiting for the issuance window. */
  room(): number;
  /** How long the main key's next paced request would wait now, ms. */
  mainWaitMs(): number;
  /** Token requests left free for the other checks' tokens. */
  reserve: number;
}

export interface ExecuteOptions {
  arrange?: (slot: Slot, checks: Array<CheckDefinition | CatalogCheck>) => Array<CheckDefinition | CatalogCheck>;
  lane?: TokenLane;
}

/** Runs the checks in schedule order; stops early (keeping what finished) when the run is interrupted. */
export async function executePlan(
  checks: readonly (CheckDefinition | CatalogCheck)[],
  rt: Runtime,
  events: RunEvents,
  opts: ExecuteOptions = {},
): Promise<CheckResult[]> {
  const planned = gatherEarlyKeyUsers(planChecks(checks, opts.arrange), earlyWorkRoles(checks, rt));
  // Episodes shared by several checks skip the parts no executed check judges.
  rt.shared.set(PLANNED_KEY, new Set(planned.map((c) => c.id)));
  const results: CheckResult[] = [];
  const early = earlyStarter(planned, rt, opts.lane);
  const next = opts.lane ? laneOrder(planned, rt, opts.lane) : inOrder(planned.length);
  for (let position = 0; ; position++) {
    if (rt.signal.aborted) break;
    const step = next();
    if (!step) break;
    const { index, cursor } = step;
    const check = planned[index]!;
    // Early work starts from the first check not run yet in plan order (moved checks use none of its keys).
    early(cursor, index);
    const info = plannedCheck(check, slotOf(check));
    events.emit({ type: 'check-started', check: info, index: position, total: planned.length });
    const result = await executeCheck(check, rt, { timeoutMs: check.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS });
    // A check cut short by an interrupt has no verdict of its own: the report says the run was interrupted.
    if (rt.signal.aborted && result.outcome === 'error') break;
    results.push(result);
    events.emit({
      type: 'check-finished',
      check: info,
      result,
      index: position,
      total: planned.length,
      stats: rt.runStats(),
      ...(early.startedBefore(check, index) ? { startedEarly: true } : {}),
    });
  }
  return results;
}

/** The next check to run: its plan index, and the first plan index not run yet. */
export type Step = { index: number; cursor: number };

function inOrder(n: number): () => Step | undefined {
  let i = 0;
  return () => (i < n ? { index: i, cursor: i++ } : undefined);
}

/**
 * Whether a check may ask for a token of its own: one that does not take covering tokens
 * (CheckDefinition.coveringTokens), or one the token lane's estimate says talks to the token endpoint.
 */
export function tokenAsker(check: CheckDefinition, lane?: Pick<TokenLane, 'tokensOf'>): boolean {
  return check.coveringTokens !== true || (lane?.tokensOf(check) ?? 0) > 0;
}

/** A paced check that will run and may ask for a token of its own (tokenAsker). */
function pacedAsker(check: CheckDefinition, rt: Runtime, lane?: Pick<TokenLane, 'tokensOf'>): boolean {
  return slotOf(check) === 'paced' && tokenAsker(check, lane) && !whyNotRun(check, rt);
}

/** The keys of the early work that will run (CheckDefinition.startEarly of checks not skipped). */
function earlyWorkRoles(checks: readonly CheckDefinition[], rt: Runtime): Set<string> {
  return new Set(checks.flatMap((c) => (c.startEarly && !whyNotRun(c, rt) ? c.startEarly.roles(rt.config) : [])));
}

/**
 * The plan with its paced checks that declare one of `roles` (and start no early work) moved up to
 * the first of them, in their order: the early work on those keys starts once the last has run
 * (exported for the tests). A check using such a key without declaring it still waits for the work
 * to end (Runtime.reserveKeys), so moving never exposes it to a driven key.
 */
export function gatherEarlyKeyUsers<T extends CheckDefinition>(planned: readonly T[], roles: ReadonlySet<string>): T[] {
  const uses = (c: T) => slotOf(c) === 'paced' && !c.startEarly && (c.clients ?? []).some((r) => roles.has(r));
  const first = planned.findIndex(uses);
  if (first === -1) return [...planned];
  const later = planned.filter((c, i) => i > first && uses(c));
  const rest = planned.filter((c, i) => i > first && !uses(c));
  return [...planned.slice(0, first + 1), ...later, ...rest];
}

/** Plan order, with the paced slot's token-only checks moved as the module comment says. */
function laneOrder(planned: readonly CheckDefinition[], rt: Runtime, lane: TokenLane): () => Step | undefined {
  const earlyRoles = earlyWorkRoles(planned, rt);
  const movable = (c: CheckDefinition) => slotOf(c) === 'paced' && !c.startEarly && !whyNotRun(c, rt) && !(c.clients ?? []).some((r) => earlyRoles.has(r));
  return laneSequence(
    planned.map((c) => {
      const tokens = movable(c) ? lane.tokensOf(c) : 0;
      return { paced: slotOf(c) === 'paced', tokens, asks: tokens === 0 && pacedAsker(c, rt) };
    }),
    lane,
  );
}

/**
 * The order of `laneOrder` over plan entries (`paced`: in the paced slot; `tokens`: the token
 * requests of a movable token-only check, else 0; `asks`: a paced check that may ask for tokens of
 * exact scopes, for which the reserve is kept), asking `lane` at each step: exported for the tests.
 */
export function laneSequence(
  entries: ReadonlyArray<{ paced: boolean; tokens: number; asks?: boolean }>,
  lane: Pick<TokenLane, 'room' | 'mainWaitMs' | 'reserve'>,
): () => Step | undefined {
  const done = new Set<number>();
  const queued: number[] = [];
  let cursor = 0;
  // The reserve is kept for the tokens of the checks that may ask for one besides the token-only
  // ones (`asks`: exact-scope checks); once none is left to run, token-only checks may use it all.
  // (Unmarked, a paced check that is not token-only counts as one that may ask.)
  const asks = (e: (typeof entries)[number]) => e.paced && e.tokens === 0 && e.asks !== false;
  const reserve = () => (entries.some((e, i) => asks(e) && !done.has(i)) ? lane.reserve : 0);
  const fits = (i: number) => lane.room() >= entries[i]!.tokens + reserve();
  const take = (i: number): Step => {
    done.add(i);
    const q = queued.indexOf(i);
    if (q >= 0) queued.splice(q, 1);
    return { index: i, cursor };
  };
  return () => {
    for (;;) {
      while (done.has(cursor)) cursor++;
      if (cursor >= entries.length) return queued.length ? take(queued[0]!) : undefined;
      const { paced, tokens } = entries[cursor]!;
      // The slot ends: what is still queued runs first (waiting for the issuance window if it must).
      if (!paced && queued.length) return take(queued[0]!);
      if (tokens > 0) {
        if (fits(cursor)) return take(cursor);
        queued.push(cursor);
        done.add(cursor); // out of the plan order: taken from the queue
        continue;
      }
      if (paced) {
        const ready = queued.find(fits);
        if (ready !== undefined) return take(ready);
        if (lane.mainWaitMs() > LANE_PULL_MS) {
          for (let j = cursor + 1; j < entries.length && entries[j]!.paced; j++) if (entries[j]!.tokens > 0 && !done.has(j) && fits(j)) return take(j);
        }
      }
      return take(cursor);
    }
  };
}

/**
 * Starts the early work of the planned checks that declare some (CheckDefinition.startEarly)
 * and will run: before check `index` runs (`cursor`: the first not run yet in plan order), once
 * no check from the cursor up to the declaring one declares one of the work's roles. The work owns
 * those keys until it settles. Work on the token endpoint (`afterTokens`) starts once no paced
 * check still to run may ask for a token (tokenAsker).
 */
function earlyStarter(
  planned: readonly CheckDefinition[],
  rt: Runtime,
  lane?: Pick<TokenLane, 'tokensOf'>,
): ((cursor: number, index: number) => void) & { startedBefore(check: CheckDefinition, index: number): boolean } {
  const pending = planned
    .map((check, at) => {
      const runs = check.startEarly !== undefined && !whyNotRun(check, rt);
      return { check, at, roles: runs ? check.startEarly!.roles(rt.config) : [], afterTokens: runs && check.startEarly!.afterTokens === true };
    })
    .filter((e) => e.roles.length > 0 || e.afterTokens);
  const askers = planned.map((c) => pacedAsker(c, rt, lane));
  /** The plan indices of the checks run (or about to run) so far. */
  const ran = new Set<number>();
  /** Where each started work began: the index of the check about to run then. */
  const startedAt = new Map<CheckDefinition, number>();
  const start = (cursor: number, index: number) => {
    for (const e of [...pending]) {
      if (e.at < cursor) {
        pending.splice(pending.indexOf(e), 1); // its own turn has come: it starts its work as it runs
        continue;
      }
      const held = e.afterTokens
        ? askers.some((asks, i) => asks && !ran.has(i))
        : planned.slice(cursor, e.at).some((c) => (c.clients ?? []).some((r) => e.roles.includes(r)));
      if (held) continue;
      pending.splice(pending.indexOf(e), 1);
      startedAt.set(e.check, cursor);
      rt.reserveKeys(e.roles, startEarlyWork(e.check, rt));
    }
    ran.add(index);
  };
  return Object.assign(start, {
    // Started before another check ran: its work overlapped theirs.
    startedBefore: (check: CheckDefinition, index: number) => (startedAt.get(check) ?? index) < index,
  });
}
