/**
 * The R4 MedicationRequest and Encounter operations sent while a key is over
 * its limit (endpoint tables: every row lists 429 `HPB-00105`), and the R5
 * DocumentReference ones that mirror them (the per-key limit covers every
 * authenticated request), inside the
 * rate-limit suite's single exhaustion episode, unpaced and without retries.
 * Creates carry a valid body (a server that does not refuse them creates a
 * resource, which the check puts into the ledger); updates target an id that does
 * not exist, so a server that does not refuse them changes nothing.
 *
 * Why each operation is the first refusal of a fresh block, and how it is placed
 * (`sendThrottled`): Retry rule 1 says a request sooner than a 429's Retry-After
 * "gives another 429 and extends the reset time", by an amount the spec leaves open
 * (a conforming target may double the wait on every early request). So no request
 * but the episode's one deliberate early retry leaves on the key before the
 * Retry-After of its latest 429 has elapsed: each operation is sent on a key that is
 * full (X-RateLimit-Remaining 0) and not held, and is refused because the window is
 * full; its own Retry-After is waited out before the key's next request.
 *
 * Filling a sliding window costs the requests that left it since the last fill, and
 * a 429's Retry-After ends (rounded up to whole seconds) once the key's oldest
 * request has left. Filled all at once, a key frees all at once: every operation
 * would cost a full window of requests and a window of waiting. So the phase first
 * spreads the key's requests over one window in groups `tickMs` apart, then sends
 * the operations while those groups age: each wait frees about one group, a few
 * requests refill it (counted by X-RateLimit-Remaining), and the operation follows.
 * `tickMs` keeps a gap between groups wider than the slack of a target that counts
 * in steps and the time a fill and an operation take, and each operation leaves only
 * when no request of the key can leave the window before its answer: then a full key
 * is proven (judgeThrottled), and an answer other than 429 fails instead of being
 * blamed on a slot that freed. Cost at the spec's defaults (60 per minute, 1-minute
 * window, ~100 ms round trip): one window of spreading (60 requests), then per
 * operation a wait of about one group (~3 s) and 2-3 refill requests: for the 12
 * operations about 95 requests and 100 s in all.
 */
import { randomUUID } from 'node:crypto';
import type { CheckContext } from '../../src/engine/index.js';
import type { ModelOperation } from '../../src/discovery/index.js';
import {
  encounterBody,
  judgeThrottled,
  minimalResource,
  leaveBand,
  leaveLateMs,
  mayLeaveWithin,
  newMedicationRequest,
  rateHeaders,
  type ThrottledFigures,
  type Timed,
  type Verdict,
  windowSlackMs,
} from '../../src/service/index.js';
import { FAST_CONCURRENCY, fixtureKeyFor, type Hit, hit, keyTraffic, othersThan, type Probe, timed, tokenFor, wait, waitUntil } from './support.js';

const SCOPES = {
  MedicationRequest: { read: ['system/MedicationRequest.rs'], write: ['system/MedicationRequest.cru'], create: ['system/MedicationRequest.c'] },
  Encounter: { read: ['system/Encounter.rs'], write: ['system/Encounter.cru'], create: ['system/Encounter.cru'] },
  DocumentReference: { read: ['system/DocumentReference.rs'], write: ['system/DocumentReference.cru'], create: ['system/DocumentReference.cru'] },
} as const;

type Resource = keyof typeof SCOPES;

export interface ThrottledOperation {
  requirement: string;
  resource: Resource;
  /** The surface: R4 for the tables' rows, R5 for the DocumentReference surface that mirrors them. */
  release: 'R4' | 'R5';
  interaction: ModelOperation['interaction'];
  scopes: readonly string[];
  /** Fixture keys of main's organization (the key's own organization's are used: fixtureKeyFor). */
  fixtures: string[];
  /** The request, sent with `role`'s key: records of that key's organization. */
  request(ctx: CheckContext, op: ModelOperation, role: string): { method: string; url: string; body?: unknown };
}

const FIXTURE = { MedicationRequest: 'medicationRequest', Encounter: 'encounter', DocumentReference: 'documentReference' } as const;
const SLUG = { MedicationRequest: 'medication-request', Encounter: 'encounter', DocumentReference: 'document-reference' } as const;

function operationsOf(resource: Resource, release: 'R4' | 'R5' = 'R4'): ThrottledOperation[] {
  const scopes = SCOPES[resource];
  const fixture = (ctx: CheckContext, role: string, key: string) => ctx.fixture(fixtureKeyFor(role, key));
  // The subject is a patient of the key's organization.
  const body = (ctx: CheckContext, role: string, id?: string) => {
    const fields = { ...(id ? { id } : {}), subject: { reference: `Patient/${fixture(ctx, role, 'patient')}` } };
    if (resource === 'DocumentReference') return { ...minimalResource(ctx, release, resource), ...fields };
    return resource === 'Encounter' ? encounterBody(ctx, fields) : newMedicationRequest(ctx, fields);
  };
  const writeFixtures = resource === 'Encounter' ? ['patient', 'practitioner'] : ['patient'];
  const ops: Array<Omit<ThrottledOperation, 'release'>> = [
    {
      requirement: `${SLUG[resource]}.read-429`,
      resource,
      interaction: 'read',
      scopes: scopes.read,
      fixtures: [FIXTURE[resource]],
      request: (ctx, op, role) => ({ method: 'GET', url: ctx.path(op.path, { id: fixture(ctx, role, FIXTURE[resource]) }) }),
    },
    {
      requirement: `${SLUG[resource]}.search-429`,
      resource,
      interaction: 'search-type',
      scopes: scopes.read,
      fixtures: ['patient'],
      request: (ctx, op, role) => ({ method: 'GET', url: `${op.path}?patient=${encodeURIComponent(fixture(ctx, role, 'patient'))}&_count=1` }),
    },
    {
      requirement: `${SLUG[resource]}.create-429`,
      resource,
      interaction: 'create',
      scopes: scopes.create,
      fixtures: writeFixtures,
      request: (ctx, op, role) => ({ method: 'POST', url: op.path, body: body(ctx, role) }),
    },
    {
      requirement: `${SLUG[resource]}.update-429`,
      resource,
      interaction: 'update',
      scopes: scopes.write,
      fixtures: writeFixtures,
      request: (ctx, op, role) => {
        const missing = randomUUID();
        return { method: 'PUT', url: ctx.path(op.path, { id: missing }), body: body(ctx, role, missing) };
      },
    },
  ];
  return ops.map((o) => ({ ...o, release }));
}

/**
 * The tables' R4 MedicationRequest and Encounter rows, and the R5 DocumentReference surface: "The R5
 * operations mirror the R4 ones", and the per-key limit covers "every authenticated request", so a
 * target whose R5 surface escapes the limiter lets a throttled key go on there.
 */
export const THROTTLED_OPERATIONS: readonly ThrottledOperation[] = [
  ...operationsOf('MedicationRequest'),
  ...operationsOf('Encounter'),
  ...operationsOf('DocumentReference', 'R5'),
];

/** What one throttled operation got, or why it was not sent. */
export interface ThrottledAnswer {
  requirement: string;
  /** The answer judged. */
  hit?: Hit;
  /** The key's answer just before it (the fill's last). */
  before?: Hit;
  /** The judgement of `hit` (a 429 passes here; its code is judged by the check). */
  verdict?: Verdict<ThrottledFigures>;
  /** Earlier sends of the operation that were served while the key may have had room (inconclusive, sent again). */
  tries?: Hit[];
  /** Why the target cannot be asked (the operation is not published, or a fixture is missing). */
  notSent?: string;
  /** Why the operation could not be judged on a full key (no `hit`): the phase's time budget ran out. */
  unjudged?: string;
}

/** The throttled phase: what it sent and how it was paced. */
export interface ThrottlePhase {
  answers: ThrottledAnswer[];
  plan: ThrottlePlan;
  /** Probe requests sent to spread and refill the key. */
  fillers: number;
  /** Fill requests refused before X-RateLimit-Remaining said 0 (each waited out). */
  refusedFills: number;
  startedAt: number;
  endedAt: number;
  /** The key's last refusal, whose Retry-After the phase waited out. */
  lastRefusal?: Hit;
  /** The longest a group of the spread took to send, ms. */
  groupMs?: number;
  /**
   * The first request of each fill that was served: sent once the key's oldest group had left the
   * window and the last Retry-After had elapsed, with the later groups still inside (the sliding
   * window's probe, scenarios.ts slideOnRefills).
   */
  refills: Refill[];
  /**
   * Requests of each fill before an operation (its first included), in order: about one group each
   * while the groups keep their spacing; a whole window each once they have run together.
   */
  fills: number[];
}

/** A fill's first request, served, and when the Retry-After of the key's last 429 before it had elapsed. */
export interface Refill {
  hit: Hit;
  retryAfterElapsedAt?: number;
}

/** Pace of the throttled phase. */
export interface ThrottlePlan {
  /** Between two groups of the spread, ms. */
  tickMs: number;
  /** Groups in one window. */
  ticks: number;
  /** Longest the phase may take, ms: two windows and, per operation, three groups and three seconds. */
  budgetMs: number;
  /** Round trip the plan assumes, ms. */
  rttMs: number;
}

/** Sends of one operation served while the key may have had room, at most. */
const MAX_TRIES = 3;

/**
 * The least room for a fill and an operation twice between the leaves of groups that come round again: on a
 * loaded machine a fill of one group and its operation took longer than five round trips measured before
 * (a 12 s window with other runs beside it: the gaps closed and every operation waited for the whole window).
 */
const REUSED_GROUPS_ROOM_MS = 2000;

/**
 * Groups `tickMs` apart. A Retry-After, rounded up to whole seconds, ends up to a second
 * (and the 100 ms the client adds) after the group it waits for has left the window; the
 * fill and the operation that follow (five round trips) must be answered before the next
 * group may leave (its send + a window - the step slack), with 200 ms to spare. When a
 * window holds fewer groups than there are operations, the groups the operations make
 * (a fill and the operation, at most the room just said) leave in their turn a window
 * later, and the gaps between their leaves must hold a fill and an operation again: the
 * groups are spaced by that room twice (REUSED_GROUPS_ROOM_MS at least). At most half a window, so a window holds two
 * groups or more.
 */
export function throttlePlan(probe: Probe, rttMs: number, operations: number): ThrottlePlan {
  // A group's leave spans the step slack before a window after its send to `leaveLateMs` after a window after its answer:
  // the groups are spaced by what a leave may run late beyond the step slack too, so the gap between leaves stays as wide.
  const slack = windowSlackMs(probe.windowMs);
  const leaveSpanMs = Math.max(1100, 2 * slack) + (leaveLateMs(probe.windowMs) - slack);
  const room = 5 * rttMs + 300;
  const spacing = (groupsRoom: number) => Math.round(Math.min(probe.windowMs / 2, leaveSpanMs + groupsRoom));
  const once = spacing(room);
  const tickMs = Math.floor(probe.windowMs / once) >= operations ? once : spacing(Math.max(2 * room, REUSED_GROUPS_ROOM_MS));
  const ticks = Math.max(2, Math.floor(probe.windowMs / tickMs));
  return { tickMs, ticks, budgetMs: 2 * probe.windowMs + operations * 3 * (tickMs + 1000), rttMs };
}

/**
 * The first gap from `now` between the moments requests of the key may leave the window (stop
 * being counted) that is at least `needMs` wide: from `start` (`now`, or the end of a leave under
 * way) to `end` (when the next request may leave; Infinity when none is due). Leaves as in mayLeaveWithin.
 */
export function leaveGap(requests: readonly Timed[], now: number, windowMs: number, needMs: number): { start: number; end: number } {
  const bands = requests
    .map((r) => leaveBand(r, windowMs))
    .filter(([, end]) => end >= now)
    .sort((a, b) => a[0] - b[0]);
  let t = now;
  for (const [start, end] of bands) {
    if (start - t >= needMs) return { start: t, end: start };
    t = Math.max(t, end + 1);
  }
  return { start: t, end: Infinity };
}

/** The operations this target can be asked with `role`'s key: published, with their fixtures configured. */
export function sendable(ctx: CheckContext, t: ThrottledOperation, role: string): { op?: ModelOperation; notSent?: string } {
  const op = ctx.findOperation(t.resource, t.interaction, t.release);
  if (!op) return { notSent: `the target publishes no ${t.release} ${t.resource} ${t.interaction} operation` };
  const missing = t.fixtures.map((f) => fixtureKeyFor(role, f)).filter((f) => !ctx.hasFixture(f));
  if (missing.length) return { notSent: `fixture not provided: ${missing.join(', ')}` };
  return { op };
}

/** Tokens for every operation, fetched before the key is exhausted (no token request inside the episode). */
export async function operationTokens(ctx: CheckContext, role: string, validForMs: number): Promise<void> {
  const scopeSets = new Map(THROTTLED_OPERATIONS.map((t) => [t.scopes.join(' '), t.scopes]));
  for (const scopes of scopeSets.values()) await ctx.tokens.token(role, [...scopes], { validForMs });
}

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Sends each operation once on `probe`'s key as the first refusal of a fresh block
 * (see the file comment), never before the Retry-After of the key's latest refusal.
 * Starts on a key that is served (its last 429's Retry-After elapsed) and ends once the
 * Retry-After of its last refusal has elapsed. `rttMs`: the key's measured round trip.
 */
export async function sendThrottled(ctx: CheckContext, probe: Probe, rttMs: number): Promise<ThrottlePhase> {
  const todo = THROTTLED_OPERATIONS.map((t) => ({ t, ...sendable(ctx, t, probe.role) }));
  const plan = throttlePlan(probe, rttMs, todo.filter((x) => x.op).length);
  const phase: ThrottlePhase = { answers: [], plan, fillers: 0, refusedFills: 0, refills: [], fills: [], startedAt: Date.now(), endedAt: Date.now() };
  const deadline = phase.startedAt + plan.budgetMs;
  const W = probe.windowMs;
  const slack = windowSlackMs(W);
  const lifetimeMs = 0.8 * ctx.limits.tokenLifetimeSec * 1000;
  const log = () => keyTraffic(ctx, probe.role) ?? [];
  /** Free slots by the run's own count: the limit less every request of the key that may still be counted. */
  const freeSlots = () => probe.limit - log().filter((r) => r.receivedAt + W + slack > Date.now()).length;
  /** The key's latest served answer (its X-RateLimit-Remaining says what was left). */
  let lastServed: Hit | undefined;
  /**
   * The X-RateLimit-Remaining at which the key is full: 0, or more when the target refused a request
   * right after saying more was left, nothing leaving the window in between (another reading of "left").
   */
  let fullAt = 0;
  const refused = (h: Hit) => h.res.status === 429 || (h.res.status >= 400 && h.headers.retryAfter !== undefined);
  /**
   * A fill request refused: its Retry-After is waited out. Refused after the key's last served answer
   * (of its batch, else before it) said more was left, with nothing leaving the window in between, it
   * shows what that target calls full.
   */
  const fillRefused = (h: Hit) => {
    const said = lastServed?.headers.remaining;
    if (
      h.res.status === 429 &&
      said !== undefined &&
      said > fullAt &&
      !mayLeaveWithin(othersThan(log(), [lastServed!, h]), lastServed!.sentAt, h.receivedAt, W).length
    )
      fullAt = said;
    phase.lastRefusal = h;
    phase.refusedFills++;
  };
  const holdOver = async () => {
    if (phase.lastRefusal)
      await wait(
        ctx,
        waitUntil(phase.lastRefusal, probe) - Date.now(),
        "rate-limit: waiting out the Retry-After of the key's last 429 before its next request",
      );
  };
  /**
   * Sends up to `n` probes while the key has room (`room`, by its last answer), never more in flight
   * than that, the last one alone (and the first, with `firstAlone`): a refusal meets a single request.
   * Stops once the key is full or at a refusal.
   */
  const send = async (n: number, room: number, firstAlone = false): Promise<{ last?: Hit; refused?: Hit }> => {
    let last: Hit | undefined;
    for (let sent = 0; sent < n && room > 0; ) {
      const width = firstAlone && sent === 0 ? 1 : Math.max(1, Math.min(FAST_CONCURRENCY, room - 1, n - sent));
      const batch = await Promise.all(Array.from({ length: width }, () => hit(ctx, probe)));
      phase.fillers += width;
      sent += width;
      const lowest = (hits: Hit[]) => hits.reduce((a, b) => ((b.headers.remaining ?? Infinity) < (a.headers.remaining ?? Infinity) ? b : a));
      const served = batch.filter((h) => !refused(h));
      if (served.length) lastServed = lowest(served);
      const no = batch.find(refused);
      if (no) {
        fillRefused(no);
        return { refused: no };
      }
      last = lowest(batch);
      room = last.headers.remaining !== undefined ? last.headers.remaining - fullAt : Math.min(room - width, freeSlots());
    }
    return { last };
  };

  // 1. Spread: one group per tick over a window, each as large as the key has room for.
  await tokenFor(ctx, probe.role, W + 10_000);
  const share = Math.ceil(probe.limit / plan.ticks);
  for (let i = 0; i < plan.ticks; i++) {
    await wait(ctx, phase.startedAt + i * plan.tickMs - Date.now(), "rate-limit: spreading the key's requests over a window before the throttled operations");
    await holdOver();
    // Room by the run's own count; the group's first request goes alone, and the rest by what its answer says is left.
    const room = freeSlots();
    if (room <= 0) continue;
    const from = Date.now();
    await send(Math.min(share, room), room, true);
    phase.groupMs = Math.max(phase.groupMs ?? 0, Date.now() - from);
  }

  // 2. Each operation: once the last Retry-After elapsed, filled and sent in the gap before the next group may leave the window.
  const opMs = 2 * plan.rttMs + 100;
  /** How long a fill takes: the last one (at first, the spread's longest group), within half a group's spacing. */
  const fillEstimate = (measured: number) => Math.min(plan.tickMs / 2, Math.max(3 * plan.rttMs + 50, measured));
  let fillMs = fillEstimate(phase.groupMs ?? 0);
  for (const { t, op, notSent } of todo) {
    if (!op) {
      phase.answers.push({ requirement: t.requirement, notSent });
      continue;
    }
    const answer: ThrottledAnswer = { requirement: t.requirement };
    phase.answers.push(answer);
    while (!answer.hit) {
      const wake = phase.lastRefusal ? waitUntil(phase.lastRefusal, probe) : Date.now();
      if (Math.max(wake, Date.now()) >= deadline) {
        answer.unjudged =
          `not sent: the throttled operations' time budget (${s(plan.budgetMs)}: two ${s(W)} windows and ${s(3 * (plan.tickMs + 1000))} per operation) ` +
          `ran out${phase.lastRefusal?.headers.retryAfter !== undefined ? ` (the key's last 429 said Retry-After ${phase.lastRefusal.headers.retryAfter} s)` : ''}; ` +
          `${phase.refusedFills} fill request(s) were refused before X-RateLimit-Remaining said 0`;
        break;
      }
      await holdOver();
      await Promise.all([
        tokenFor(ctx, probe.role, Math.min(lifetimeMs, 2 * plan.tickMs + 10_000)),
        ctx.tokens.token(probe.role, [...t.scopes], { validForMs: Math.min(lifetimeMs, 2 * plan.tickMs + 10_000) }),
      ]);
      // A request of the key leaving the window between the fill and the operation's answer would free the slot the
      // operation meets: both go in a gap between leaves wide enough for them, at its start.
      const gap = leaveGap(log(), Date.now(), W, fillMs + opMs + 100);
      await wait(ctx, gap.start - Date.now(), "rate-limit: letting the key's next group of requests leave the window before filling it");
      // Full already when the key's last answer said nothing is left and none of its requests can have left since.
      const full = (h?: Hit): h is Hit => h?.headers.remaining !== undefined && h.headers.remaining <= fullAt;
      let before =
        full(lastServed) && !mayLeaveWithin(othersThan(log(), [lastServed]), lastServed.sentAt, Date.now() + opMs, W).length ? lastServed : undefined;
      if (!before) {
        const held = phase.lastRefusal;
        const first = await hit(ctx, probe);
        phase.fillers++;
        if (refused(first)) {
          fillRefused(first);
          continue;
        }
        lastServed = first;
        phase.refills.push({
          hit: first,
          ...(held?.headers.retryAfter !== undefined ? { retryAfterElapsedAt: held.receivedAt + held.headers.retryAfter * 1000 } : {}),
        });
        // Filled until the target says nothing is left (or, without X-RateLimit-Remaining, by the run's own count).
        const fillers = phase.fillers;
        const fill = await send(probe.limit + 1, first.headers.remaining !== undefined ? first.headers.remaining - fullAt : freeSlots());
        phase.fills.push(1 + phase.fillers - fillers);
        fillMs = fillEstimate(Date.now() - first.sentAt);
        if (fill.refused) continue;
        before = fill.last ?? first;
      }
      // Right after the fill, so the two make one group as compact as the spread's, a window after the group it
      // replaces, and the groups keep their spacing (sent at the end of the gap, the pair spanned it, and a window later
      // the gaps beside its leave were too narrow for the next fill). The Retry-After, rounded up to whole seconds,
      // ends no later for being asked sooner while the next leave is less than a second away.
      const sentAt = Date.now();
      if (mayLeaveWithin(othersThan(log(), [before]), before.sentAt, sentAt + opMs, W).length) continue;
      const res = await ctx.fhir({ role: probe.role, scopes: [...t.scopes], pace: false, retry: 'none', expect429: true, ...t.request(ctx, op, probe.role) });
      const h: Hit = { sentAt, receivedAt: Date.now(), res, headers: rateHeaders(res) };
      if (refused(h)) phase.lastRefusal = h;
      const verdict = judgeThrottled({
        requirement: t.requirement,
        limit: probe.limit,
        windowMs: W,
        op: timed(h),
        before: timed(before),
        others: othersThan(log(), [before, h]),
      });
      if (verdict.verdict === 'inconclusive' && (answer.tries?.length ?? 0) < MAX_TRIES - 1) {
        (answer.tries ??= []).push(h);
        continue;
      }
      Object.assign(answer, { hit: h, before, verdict });
    }
  }
  await holdOver();
  phase.endedAt = Date.now();
  return phase;
}
