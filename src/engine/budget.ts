/**
 * Requests are a budget. Before the run the engine knows how many requests each check
 * plans: the check's own `requests`, else the estimate measured against the embedded
 * reference (suites/request-budget.json, written by `npm run budget`), else a default.
 * After the run every report states what was sent: per area, what the shared exchanges
 * saved, and requests per covered requirement.
 *
 * The `gate` profile is a CI gate that fits in a build: of the checks that need no waiting
 * (no token lifetime, rate window or limit exhaustion), the cheapest set (by planned
 * requests, token requests weighing three times as much: 20 per minute against a key's
 * 60) that judges every MUST requirement those checks judge, and at least one check of
 * every area that has such a check. Checks whose requirements are judged by the chosen
 * ones run in `full`; the report lists the MUST requirements the gate leaves to `full`
 * and why.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { SUITES_DIR } from '../paths.js';
import { GATE_EXCLUDED_TAGS, type CheckDefinition } from './check.js';
import { planChecks, type CatalogCheck } from './plan.js';
import type { AreaRequests, CheckResult, LeftToFull, Level, Profile, RequestBudget, RequirementVerdict } from './types.js';

/** Requests a check plans when it declares none and the measured estimates do not know it. */
export const DEFAULT_PLANNED_REQUESTS = 3;
/** How much more a token request costs than a key's request (spec: 20 token requests per minute, 60 per key). */
export const TOKEN_REQUEST_WEIGHT = 3;
export const BUDGET_ESTIMATES_PATH = resolve(SUITES_DIR, 'request-budget.json');

/** A measured estimate: requests the check sent (token requests included), of which token requests and requests with the main client's key. */
export interface Estimate {
  requests: number;
  tokens: number;
  mainKey: number;
}

let estimates: Map<string, Estimate> | undefined;

/** suites/request-budget.json: `{ "checks": { "<id>": [requests, tokenRequests, mainKeyRequests] } }`; empty when absent. */
export function loadEstimates(path = BUDGET_ESTIMATES_PATH): Map<string, Estimate> {
  if (estimates && path === BUDGET_ESTIMATES_PATH) return estimates;
  const map = new Map<string, Estimate>();
  try {
    const json = JSON.parse(readFileSync(path, 'utf8')) as { checks?: Record<string, [number, number, number?]> };
    for (const [id, [requests, tokens, mainKey]] of Object.entries(json.checks ?? {})) map.set(id, { requests, tokens, mainKey: mainKey ?? requests - tokens });
  } catch {
    // no estimates: every check gets its declaration or the default
  }
  if (path === BUDGET_ESTIMATES_PATH) estimates = map;
  return map;
}

/** Requests the check plans (token requests included). */
export function plannedRequests(check: Pick<CheckDefinition, 'id' | 'requests'>): number {
  return check.requests ?? loadEstimates().get(check.id)?.requests ?? DEFAULT_PLANNED_REQUESTS;
}

/**
 * The check's cost in the gate's selection, in main-key requests: the main key's requests
 * (its per-key ceiling decides the run's wall time), token requests weighted by
 * TOKEN_REQUEST_WEIGHT, and every other request (other keys, unauthenticated) at
 * OTHER_REQUEST_WEIGHT. A declared or default count is taken as main-key requests.
 */
export function plannedCost(check: Pick<CheckDefinition, 'id' | 'requests'>): number {
  const est = check.requests === undefined ? loadEstimates().get(check.id) : undefined;
  if (!est) return plannedRequests(check);
  const others = Math.max(0, est.requests - est.tokens - est.mainKey);
  return est.mainKey + TOKEN_REQUEST_WEIGHT * est.tokens + OTHER_REQUEST_WEIGHT * others;
}

/** Weight of a request that uses neither the main key nor the token endpoint (another key's, or unauthenticated). */
export const OTHER_REQUEST_WEIGHT = 0.25;

export interface GateInput {
  /** Fixture keys the config provides. */
  fixtures: ReadonlySet<string>;
  /** Client roles the config has. */
  roles: ReadonlySet<string>;
  /** Level of each requirement id (the catalog). */
  levels: ReadonlyMap<string, Level>;
}

const measured = (check: CheckDefinition): Estimate | undefined => (check.requests === undefined ? loadEstimates().get(check.id) : undefined);

/**
 * Token requests of the issuance window a token-only check leaves free when the executor moves
 * it (src/engine/executor.ts, TokenLane): the tokens the other checks may need meanwhile (a
 * scope set's first use, a renewal), which would otherwise hold up the main key for a window.
 */
export const LANE_TOKEN_RESERVE = 3;

/** Token requests of a check that only talks to the token endpoint (no request with the main key, by its estimate), else 0. */
export function tokenOnlyRequests(check: CheckDefinition, estimate: (check: CheckDefinition) => Estimate | undefined = measured): number {
  const est = estimate(check);
  return est && est.tokens > 0 && est.mainKey === 0 ? est.tokens : 0;
}

export interface TokenSpreadLimits {
  /** The main key's ceiling per window (the pacer sends one less). */
  keyCeiling: number;
  /** Token requests allowed per window. */
  issuancePerWindow: number;
  /** Token requests the first window has already spent (the preflight's). */
  reserved: number;
  /** Whether a check runs (one the profile leaves out sends nothing); default: every check. */
  runs?: (check: CheckDefinition) => boolean;
  /** The checks' estimates (default: suites/request-budget.json, for checks that declare no `requests`). */
  estimate?: (check: CheckDefinition) => Estimate | undefined;
}

/**
 * Spreads the checks that only talk to the token endpoint (the auth checks' deliberate token
 * requests) through a slot, so that a full issuance window (20 a minute) never holds up the
 * checks of the paced key. From the plan's estimates: the other checks, in order, fill the main
 * key's windows (its ceiling less one each); each window's token requests are theirs plus the
 * token-only checks placed in it, at most the issuance limit less one; a token-only check goes
 * in the earliest window with room after the first (whose token requests, the first use of each
 * scope set, are the least certain), after the other checks that start in it (when the key waits
 * for its next window anyway). What finds no room runs at the end of the slot.
 */
export function spreadTokenChecks<T extends CheckDefinition>(ordered: readonly T[], limits: TokenSpreadLimits): T[] {
  const estimate = limits.estimate ?? measured;
  const tokenOnly = (c: T) => tokenOnlyRequests(c, estimate);
  const tokenChecks = ordered.filter((c) => tokenOnly(c) > 0 && (!limits.runs || limits.runs(c)));
  if (tokenChecks.length === 0) return [...ordered];
  const rest = ordered.filter((c) => !tokenChecks.includes(c));
  const perWindow = Math.max(1, limits.keyCeiling - 1);
  const cap = Math.max(1, limits.issuancePerWindow - 1);
  const used = new Map<number, number>([[0, limits.reserved]]);
  const windowOf: number[] = [];
  let main = 0;
  for (const c of rest) {
    const w = Math.floor(main / perWindow);
    windowOf.push(w);
    if (limits.runs && !limits.runs(c)) continue;
    const est = estimate(c);
    used.set(w, (used.get(w) ?? 0) + (est?.tokens ?? 0));
    main += est ? est.mainKey : plannedRequests(c);
  }
  const last = Math.floor(main / perWindow);
  // The key never waits for a window (a short-window reference, a high ceiling): nothing to gain.
  if (last === 0) return [...ordered];
  const placed = new Map<number, T[]>();
  const tail: T[] = [];
  // Not in the first window when there is a later one: its token requests (first uses of each scope set) are the hardest to estimate.
  let w = last >= 1 ? 1 : 0;
  for (const c of tokenChecks) {
    const t = tokenOnly(c);
    while (w <= last && (used.get(w) ?? 0) + t > cap) w++;
    if (w > last) {
      tail.push(c);
      continue;
    }
    used.set(w, (used.get(w) ?? 0) + t);
    placed.set(w, [...(placed.get(w) ?? []), c]);
  }
  const out: T[] = [];
  let emitted = -1;
  const emitUpTo = (w: number) => {
    for (; emitted < w; ) out.push(...(placed.get(++emitted) ?? []));
  };
  rest.forEach((c, i) => {
    out.push(c);
    // After the last check that starts in window w (and any window no check starts in).
    const next = windowOf[i + 1];
    if (next !== windowOf[i]) emitUpTo(next === undefined ? last : next - 1);
  });
  emitUpTo(last);
  const arranged = [...out, ...tail];
  // A reordering, never a selection: should a check go missing, the plan keeps its order.
  return arranged.length === ordered.length ? arranged : [...ordered];
}

export interface GateSelection {
  /** Why each check the gate does not run is left out (checks absent here run). */
  excluded: Map<string, string>;
  /** The MUST requirements some check judges that the gate does not, with why. */
  leftToFull: LeftToFull[];
  /** Planned requests of the checks that run. */
  planned: number;
}

const needsWaiting = (c: CheckDefinition) => GATE_EXCLUDED_TAGS.some((t) => (c.tags ?? []).includes(t));

/** The `gate` profile's checks among `checks` (see the module comment). Deterministic: ties go to plan order. */
export function selectGate(checks: readonly (CheckDefinition | CatalogCheck)[], input: GateInput): GateSelection {
  const planned = planChecks(checks);
  const isMust = (id: string) => input.levels.get(id) === 'MUST';
  const runnable = (c: CheckDefinition) => (c.fixtures ?? []).every((f) => input.fixtures.has(f)) && (c.clients ?? []).every((r) => input.roles.has(r));
  const candidates = planned.filter((c) => c.level !== 'observation' && !needsWaiting(c) && runnable(c));
  const chosen = new Set<CheckDefinition>();
  const covered = new Set<string>();
  const take = (c: CheckDefinition) => {
    chosen.add(c);
    for (const r of c.requirements) covered.add(r);
  };
  const wanted = new Set(candidates.flatMap((c) => c.requirements.filter(isMust)));
  // A conditional check may skip on a conforming target: the cover is made of the others, and a
  // conditional one judges a requirement only where no other check can.
  const conditional = (c: CheckDefinition) => (c.tags ?? []).includes('conditional');
  for (const pool of [candidates.filter((c) => !conditional(c)), candidates.filter(conditional)]) {
    // Free checks (they only read what the run saw) always run.
    for (const c of pool) if (plannedCost(c) === 0) take(c);
    for (;;) {
      let best: CheckDefinition | undefined;
      let bestScore = 0;
      for (const c of pool) {
        if (chosen.has(c)) continue;
        const gain = c.requirements.filter((r) => wanted.has(r) && !covered.has(r)).length;
        if (gain === 0) continue;
        const score = gain / Math.max(0.5, plannedCost(c));
        if (score > bestScore) (best = c), (bestScore = score);
      }
      if (!best) break;
      take(best);
    }
    // Drop a chosen check whose MUST requirements the others judge too (the costliest first; a
    // conditional check's judgement never stands in for another's).
    for (const c of [...chosen].sort((a, b) => plannedCost(b) - plannedCost(a))) {
      if (plannedCost(c) === 0) continue;
      const others = new Set([...chosen].filter((x) => x !== c && !conditional(x)).flatMap((x) => x.requirements));
      if (c.requirements.every((r) => !wanted.has(r) || others.has(r))) chosen.delete(c);
    }
    covered.clear();
    for (const c of chosen) for (const r of c.requirements) covered.add(r);
  }
  // Every area with a candidate runs at least its cheapest one.
  const areas = new Set([...chosen].map((c) => c.area));
  for (const c of [...candidates].sort((a, b) => plannedCost(a) - plannedCost(b))) {
    if (!areas.has(c.area)) areas.add(c.area), take(c);
  }

  const excluded = new Map<string, string>();
  for (const c of planned) {
    if (chosen.has(c) || !runnable(c)) continue; // a check that cannot run says why itself (a fixture or role missing)
    if (needsWaiting(c)) excluded.set(c.id, 'left to full: needs waiting/exhaustion');
    else if (c.level === 'observation') excluded.set(c.id, 'left to full: an observation (a point the spec leaves open); the gate judges rules only');
    else excluded.set(c.id, "left to full: the gate runs the cheapest checks that judge each MUST requirement, and other checks judge this one's here");
  }

  const leftToFull: LeftToFull[] = [];
  const judgedBy = new Map<string, CheckDefinition[]>();
  for (const c of planned) for (const r of c.requirements) judgedBy.set(r, [...(judgedBy.get(r) ?? []), c]);
  for (const [r, cs] of [...judgedBy].sort((a, b) => a[0].localeCompare(b[0]))) {
    if (!isMust(r) || covered.has(r)) continue;
    const reason = cs.every(needsWaiting)
      ? 'left to full: needs waiting/exhaustion'
      : cs.some((c) => !runnable(c))
        ? 'no check can run: a fixture or client role it needs is not in the config'
        : 'left to full: judged only by observation checks';
    leftToFull.push({ requirement: r, reason });
  }
  return { excluded, leftToFull, planned: [...chosen].reduce((n, c) => n + plannedRequests(c), 0) };
}

/** What a run sent, against what it planned (every report's `run.budget`). */
export function requestBudget(input: {
  profile: Profile;
  results: readonly CheckResult[];
  requirements: readonly RequirementVerdict[];
  /** Requests sent by detached episodes, by the check that started them (with its area). */
  episodeRequests: ReadonlyMap<string, { area: string; requests: number; tokenRequests: number; mainKeyRequests: number }>;
  /** Every request of the run (discovery and preflight included). */
  requests: number;
  tokenRequests: number;
  keys: RequestBudget['keys'];
  leftToFull?: LeftToFull[];
}): RequestBudget {
  const byArea: Record<string, AreaRequests> = {};
  const area = (name: string) => (byArea[name] ??= { checks: 0, planned: 0, requests: 0, shared: 0 });
  let planned = 0;
  let shared = 0;
  for (const r of input.results) {
    const a = area(r.area);
    a.checks++;
    // A check the profile left out planned nothing.
    const p = r.outcome === 'skip' && (r.stats?.requests ?? 0) === 0 ? 0 : (r.stats?.planned ?? 0);
    a.planned += p;
    planned += p;
    a.requests += r.stats?.requests ?? 0;
    a.shared += r.stats?.shared ?? 0;
    shared += r.stats?.shared ?? 0;
  }
  for (const e of input.episodeRequests.values()) area(e.area).requests += e.requests;
  const attributed = Object.values(byArea).reduce((n, a) => n + a.requests, 0);
  const coveredRequirements = input.requirements.filter((q) => q.outcome !== 'untested' && q.outcome !== 'skip').length;
  return {
    profile: input.profile,
    planned,
    requests: input.requests,
    tokenRequests: input.tokenRequests,
    shared,
    byArea: Object.fromEntries(Object.entries(byArea).sort((a, b) => a[0].localeCompare(b[0]))),
    setup: Math.max(0, input.requests - attributed),
    coveredRequirements,
    requestsPerRequirement: coveredRequirements ? Math.round((input.requests / coveredRequirements) * 100) / 100 : 0,
    keys: input.keys,
    ...(input.episodeRequests.size
      ? {
          episodes: Object.fromEntries(
            [...input.episodeRequests].map(([id, e]) => [id, { requests: e.requests, tokenRequests: e.tokenRequests, mainKeyRequests: e.mainKeyRequests }]),
          ),
        }
      : {}),
    ...(input.leftToFull ? { leftToFull: input.leftToFull } : {}),
  };
}

/** The budget in a few lines (summary.md and the end of a run's progress). */
export function renderBudget(b: RequestBudget): string[] {
  const areas = Object.entries(b.byArea)
    .filter(([, a]) => a.requests > 0 || a.shared > 0)
    .map(([name, a]) => `${name} ${a.requests}${a.shared ? ` (+${a.shared} shared)` : ''}`);
  const lines = [
    `requests (${b.profile}): ${b.requests} sent (${b.tokenRequests} to the token endpoint, ${b.setup} for discovery and set-up), ${b.planned} planned by the checks that ran, ${b.shared} answered from shared exchanges; ${b.coveredRequirements} requirements judged, ${b.requestsPerRequirement} requests per requirement`,
    `requests per area: ${areas.join(', ')}`,
    `keys: ${b.keys.roles.join(', ')} (${b.keys.reason})`,
  ];
  if (b.leftToFull?.length) lines.push(`left to full: ${b.leftToFull.length} MUST requirements (${summarizeReasons(b.leftToFull)})`);
  return lines;
}

function summarizeReasons(left: readonly LeftToFull[]): string {
  const counts = new Map<string, number>();
  for (const l of left) counts.set(l.reason, (counts.get(l.reason) ?? 0) + 1);
  return [...counts].map(([reason, n]) => `${n} ${reason.replace(/^left to full: /, '')}`).join('; ');
}
