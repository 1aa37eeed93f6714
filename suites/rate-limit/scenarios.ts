/**
 * The exhaustion episodes of the suite, started together once per run so that
 * their waits overlap (each runs detached from the check that starts it; the
 * checks attach the exchanges their verdicts rest on):
 *
 * - Excess, on the throttle key (`extra` when configured), once the run has left the
 *   key and its organization's other keys idle for a window: two requests, a gap
 *   of over a second, a burst until 429, an early retry (the episode's only request
 *   sent before a Retry-After elapsed), a request of `main` (another key of the
 *   organization), a request once the early retry's Retry-After has elapsed, then
 *   every R4 MedicationRequest and Encounter operation, each the first refusal of a
 *   fresh block on the refilled key (operations.ts). In a sliding window that counts
 *   refused requests, the first 429 displaces the oldest request and the early retry
 *   the second: the gap makes the reset move by whole seconds, so X-RateLimit-Reset can show it.
 * - Sliding. On the throttle key, the excess episode's throttled operations judge it: each
 *   refill goes once the key's oldest group of requests has left the window, with the later
 *   groups still inside (slideOnRefills), so it sends no request of its own. Only when no
 *   refill could be judged (or on the `second-org` key while the excess episode drives
 *   another, beside it) the sliding episode runs: half the limit, about half a window later
 *   the rest until 429, then a request once the first half has left the window.
 * - The token issuance episode of the issuance-limit suite, once every token the
 *   two episodes use has been issued (issuance is refused for a window after it);
 *   after the key episodes when their tokens would not outlive them.
 *
 * Every request is timed; the judges (judge.ts) decide from those timings. A burst
 * that could not fill a window (or a probe too late to tell) is re-sent once with
 * more requests in flight; a second inconclusive try makes the checks skip with the
 * figures of both. Each episode ends with its key served again.
 */
import type { ResolvedConfig } from '../../src/config/index.js';
import { type CheckContext, type CheckDefinition, episode, excludedBy, planned } from '../../src/engine/index.js';
import { ISSUANCE_EPISODE_CHECKS, ISSUANCE_RECOVERY_TAGS, issuanceAfter, issuanceEpisode, issuanceRecovery } from '../../src/service/index.js';
import { type Refill, THROTTLED_OPERATIONS, operationTokens, sendThrottled, sendable, type ThrottledAnswer, type ThrottlePhase } from './operations.js';
import {
  type BurstFigures,
  earlyRetryDelayMs,
  judgeKeyBurst,
  judgeSlide,
  type SlideFigures,
  type Timed,
  type Verdict,
  windowSlackMs,
} from '../../src/service/index.js';
import {
  type Burst,
  BURST_CONCURRENCY,
  burstBound,
  burstUntil429,
  FAST_CONCURRENCY,
  type Hit,
  hit,
  keyTraffic,
  organizationSiblings,
  type Probe,
  PROBE_SCOPES,
  probeFor,
  quietKey,
  recover,
  ROTATION_SCOPES,
  rotationProbe,
  throttleRole,
  throttleRoleOf,
  timed,
  othersThan,
  tokenFor,
  trafficBefore,
  wait,
  waitUntil,
} from './support.js';

const EXCESS_KEY = 'rate-limit.excess-scenario';
/** The check that judges the throttled operations (operations-check.ts, which imports this file). */
const OPERATIONS_CHECK = 'rate-limit.operations-429';

/** One try at filling the key's window: its figures and how it ended. */
export interface Attempt {
  concurrency: number;
  figures: BurstFigures;
  message?: string;
  slide?: SlideFigures;
}

export interface ExcessScenario {
  probe: Probe;
  /** The two requests before the gap (of the judged attempt). */
  spaced: Hit[];
  burst: Burst;
  /** The verdict on the judged attempt: spaced requests and burst, against the key's ceiling. */
  verdict: Verdict;
  /** Every attempt (a second, faster one when the first could not fill a window). */
  attempts: Attempt[];
  /** A retry sent before the first 429's Retry-After elapsed. */
  earlyRetry?: Hit;
  /** A request of `main` (another key of the organization) while the throttled key is refused. */
  otherKey?: Hit;
  /** Every R4 MedicationRequest and Encounter operation, each sent on the full key once the last Retry-After elapsed. */
  operations?: ThrottledAnswer[];
  /** How the operations were sent (operations.ts). */
  throttle?: ThrottlePhase;
  /** The 429 whose Retry-After elapses last: the wait before `afterWait` honours it. */
  waitedFor?: Hit;
  /** The request sent once the last 429's Retry-After had elapsed. */
  afterWait?: Hit;
  /** How long the scenario waited after the last 429, ms. */
  waitedMs?: number;
}

/** The gap before the burst: over one second, so a reset moved across it changes X-RateLimit-Reset. */
export const GAP_MS = 1200;
/** Slack between a moment the client computed and the send it schedules, ms. */
const SCHEDULE_SLACK_MS = 100;

const TOKENS_KEY = 'rate-limit.tokens';
const SLIDING_KEY = 'rate-limit.sliding-scenario';

/** The excess scenario, run once per run (with the other episodes); later checks reuse its result. */
export function excessScenario(ctx: CheckContext): Promise<ExcessScenario> {
  startEpisodes(ctx);
  return ctx.shared.get(EXCESS_KEY) as Promise<ExcessScenario>;
}

/** The sliding-window scenario, run once per run (with the other episodes). */
export function slidingScenario(ctx: CheckContext): Promise<SlidingScenario> {
  startEpisodes(ctx);
  return ctx.shared.get(SLIDING_KEY) as Promise<SlidingScenario>;
}

/**
 * The key of the sliding scenario: the excess scenario's when that is another organization's
 * (both run beside the paced checks, one after the other); else the second organization's when
 * configured, so it runs beside the excess one; else the excess one's.
 */
export function slidingRole(ctx: CheckContext): string {
  const throttled = throttleRole(ctx);
  if (throttled === 'second-org') return throttled;
  return ctx.config.clients.some((c) => c.role === 'second-org') && ctx.hasFixture('otherOrgMedicationRequest') ? 'second-org' : throttled;
}

/**
 * The keys the key episodes may drive from the start of the paced checks (CheckDefinition.startEarly):
 * both on another organization's key, whose ceilings the main key's traffic never meets; none
 * when they drive a key of main's organization (they wait for the exhausting slot, main quiet).
 */
export function earlyRoles(config: Pick<ResolvedConfig, 'clients' | 'fixtures'>): string[] {
  return throttleRoleOf(config) === 'second-org' ? ['second-org'] : [];
}

/** The key episodes, started early (beside the paced checks): settles once both have ended. */
export function startKeyEpisodes(ctx: CheckContext): Promise<unknown> {
  startEpisodes(ctx, { issuance: false });
  return Promise.allSettled([ctx.shared.get(EXCESS_KEY), ctx.shared.get(SLIDING_KEY)]);
}

/** CheckDefinition.startEarly of the checks that judge the key episodes. */
export const KEY_EPISODES_EARLY: NonNullable<CheckDefinition['startEarly']> = { roles: earlyRoles, start: startKeyEpisodes };

/**
 * How long the key episodes last when their first try is conclusive, ms: the sliding one 2.5
 * windows and its bursts; the excess one about as long when the target extends an early retry's
 * wait by little (a window of quiet, a Retry-After, a window spreading the key, then the operations).
 * Tokens that do not outlive the excess one (its operations, or a target that doubles the wait) are
 * renewed when they are used, outside the timed requests (normally after the issuance episode beside these has ended).
 */
function episodesMs(ctx: CheckContext): number {
  return 3 * ctx.limits.windowSec * 1000 + 30_000;
}

/** Token validity the episodes ask for: as long as they last, within the token lifetime. */
function validForMs(ctx: CheckContext, ms: number): number {
  return Math.min(ms, 0.8 * ctx.limits.tokenLifetimeSec * 1000);
}

/**
 * Starts the key episodes once per run, and (`issuance`, when a check of the exhausting slot
 * asks) the issuance episode beside them. Started early, the key episodes leave the issuance
 * episode to the exhausting slot: an exhausted token endpoint would hold up the paced checks.
 */
function startEpisodes(ctx: CheckContext, opts: { issuance: boolean } = { issuance: true }): void {
  if (!ctx.shared.has(EXCESS_KEY)) startKeys(ctx);
  if (opts.issuance && !ctx.shared.has(ISSUANCE_STARTED_KEY) && issuanceRunsToo(ctx)) {
    ctx.shared.set(ISSUANCE_STARTED_KEY, true);
    startIssuance(ctx);
  }
}

const ISSUANCE_STARTED_KEY = 'rate-limit.issuance-started';

function startKeys(ctx: CheckContext): void {
  const excessProbe = probeFor(ctx, throttleRole(ctx));
  const slidingProbe = probeFor(ctx, slidingRole(ctx));
  const ready = episode(ctx.shared, TOKENS_KEY, () => episodeTokens(ctx, [excessProbe, slidingProbe]));
  const excess = episode(ctx.shared, EXCESS_KEY, async () => {
    await ready;
    return runExcess(ctx, excessProbe);
  });
  const sameKey = slidingProbe.role === excessProbe.role;
  const sliding = episode(ctx.shared, SLIDING_KEY, async () => {
    if (!sameKey) {
      await ready;
      return runSliding(ctx, slidingProbe);
    }
    // On the same key, after the excess episode: its throttled operations' refills judge the window when
    // they can (no request of its own), and its burst the ceiling; the sliding episode runs when either could not.
    const e = await excess;
    const r = e.throttle && e.verdict.verdict !== 'inconclusive' ? slideOnRefills(keyTraffic(ctx, e.probe.role) ?? [], e.throttle.refills, e.probe) : undefined;
    return r ? onRefills(e, r) : runSliding(ctx, slidingProbe);
  });
  // The issuance episode, wherever it starts (beside the paced checks, or startIssuance), first lets
  // these episodes have their tokens; after the episodes themselves when those tokens would not outlive them.
  issuanceAfter(ctx, tokensOutlive(ctx) ? ready : Promise.allSettled([excess, sliding]));
}

/** Whether the key episodes' tokens are asked valid for as long as the episodes last. */
function tokensOutlive(ctx: CheckContext): boolean {
  return validForMs(ctx, episodesMs(ctx)) >= episodesMs(ctx);
}

/**
 * The issuance episode, beside the key episodes when their tokens outlive what is left of them
 * (renewed first when the key episodes started early); else after them, since an exhausted token
 * endpoint would hold up every token they renew mid-burst.
 */
function startIssuance(ctx: CheckContext): void {
  const keys = Promise.allSettled([ctx.shared.get(EXCESS_KEY), ctx.shared.get(SLIDING_KEY)]);
  const probes = [probeFor(ctx, throttleRole(ctx)), probeFor(ctx, slidingRole(ctx))];
  const start = tokensOutlive(ctx) ? (ctx.shared.get(TOKENS_KEY) as Promise<void>).then(() => episodeTokens(ctx, probes)) : keys;
  void start.then(
    () => {
      issuanceEpisode(ctx);
      issuanceRecovery(ctx);
    },
    () => undefined,
  );
}

/**
 * Whether the issuance episode starts beside these: when the profile runs the issuance
 * recovery check and the run executes a check that judges the episode (a run that selected
 * no issuance check, with --only or --requirements, spends no burst it does not judge).
 */
function issuanceRunsToo(ctx: CheckContext): boolean {
  return !excludedBy(ctx.profile, { tags: [...ISSUANCE_RECOVERY_TAGS] }) && ISSUANCE_EPISODE_CHECKS.some((id) => planned(ctx.shared, id));
}

/**
 * Every token the episodes use, issued before any key or the issuance limit is
 * exhausted and valid for the episodes' length when the lifetime allows (else
 * renewed before each phase, outside its timed requests).
 */
async function episodeTokens(ctx: CheckContext, probes: Probe[]): Promise<void> {
  const ms = validForMs(ctx, episodesMs(ctx));
  // And main's when the excess episode sends its request (another key of the throttled key's organization):
  // never otherwise, since the key episodes may run beside checks that cut main's key set (auth.key-set-unreachable-refused).
  const roles = new Set([...probes.map((p) => p.role), ...siblingOf(ctx, probes[0]!.role)]);
  for (const role of roles) await ctx.tokens.token(role, PROBE_SCOPES, { validForMs: ms });
  await operationTokens(ctx, probes[0]!.role, ms);
}

/** The key of the throttled key's organization the excess episode sends one request with (main first), if any. */
function siblingOf(ctx: CheckContext, role: string): string[] {
  const siblings = organizationSiblings(ctx, role);
  const sibling = siblings.includes('main') ? 'main' : siblings[0];
  return sibling ? [sibling] : [];
}

/** Time for one attempt's burst and what follows it (the early retry), ms. */
function phaseMs(probe: Probe): number {
  return probe.windowMs + 10_000;
}

async function runExcess(ctx: CheckContext, probe: Probe): Promise<ExcessScenario> {
  const attempts: Attempt[] = [];
  let scenario: ExcessScenario | undefined;
  for (const concurrency of [BURST_CONCURRENCY, FAST_CONCURRENCY]) {
    const first = await quietKey(ctx, probe);
    const traffic = trafficBefore(ctx, probe.role, first.sentAt);
    const second = await hit(ctx, probe);
    await tokenFor(ctx, probe.role, validForMs(ctx, phaseMs(probe)));
    // Every other request of the burst with another token of the key (rate-limit.per-key-across-tokens).
    const rotate = rotationProbe(ctx, probe);
    if (rotate) await ctx.tokens.token(probe.role, ROTATION_SCOPES, { validForMs: validForMs(ctx, phaseMs(probe)) });
    await ctx.sleep(Math.max(0, first.sentAt + GAP_MS - Date.now()));
    const burst = await burstUntil429(ctx, probe, burstBound(probe) - 2, concurrency, second, rotate);
    const verdict = judgeKeyBurst({
      limit: probe.limit,
      windowMs: probe.windowMs,
      requests: [first, second, ...burst.hits].map(timed),
      ...traffic,
      concurrency,
    });
    attempts.push({ concurrency, figures: verdict.figures, ...(verdict.verdict === 'pass' ? {} : { message: verdict.message }) });
    scenario = { probe, spaced: [first, second], burst, verdict, attempts };
    if (verdict.verdict !== 'inconclusive' || concurrency === FAST_CONCURRENCY) break;
    await wait(
      ctx,
      burst.endedAt + probe.windowMs + SCHEDULE_SLACK_MS - Date.now(),
      'rate-limit: the burst could not fill a window; letting it leave before re-sending it faster',
    );
  }
  const s = scenario!;
  const refused = s.burst.refused;
  if (!refused) return s;

  await ctx.sleep(earlyRetryDelayMs((refused.headers.retryAfter ?? 2) * 1000));
  // The one request sent before Retry-After on purpose (rate-limit.early-retry-refused-and-extends-reset).
  s.earlyRetry = await hit(ctx, probe, { earlyRetry: true });
  // Another key of the key's organization, when the config has one (main for extra).
  const [sibling] = siblingOf(ctx, probe.role);
  if (sibling) s.otherKey = await hit(ctx, probeFor(ctx, sibling));

  const refusals = [...s.burst.hits, s.earlyRetry].filter((h) => h.res.status === 429);
  if (refusals.length === 0) return s;
  const last = refusals.reduce((a, b) => (waitUntil(b, probe) > waitUntil(a, probe) ? b : a));
  s.waitedFor = last;
  await wait(ctx, waitUntil(last, probe) - Date.now(), 'rate-limit: waiting the Retry-After of the last 429');
  s.waitedMs = Date.now() - last.receivedAt;
  s.afterWait = await hit(ctx, probe);
  const served = await recover(ctx, probe, s.afterWait);
  if (served.res.status === 429) {
    s.operations = THROTTLED_OPERATIONS.map((t) => {
      const { notSent } = sendable(ctx, t, probe.role);
      return {
        requirement: t.requirement,
        ...(notSent
          ? { notSent }
          : { unjudged: 'not sent: the key was not served again after the Retry-After of its last 429 (see rate-limit.served-after-retry-after)' }),
      };
    });
    return s;
  }
  // Every operation as the first refusal of a fresh block: nothing leaves on the key before a Retry-After elapses.
  // Only when this run judges them (a run selecting other rate-limit checks spares the window it takes).
  if (!planned(ctx.shared, OPERATIONS_CHECK)) return s;
  s.throttle = await sendThrottled(ctx, probe, roundTripMs(s.burst.hits));
  s.operations = s.throttle.answers;
  if (s.throttle.lastRefusal) await recover(ctx, probe, s.throttle.lastRefusal);
  return s;
}

/** The sliding window judged on the throttled operations' refills. */
export interface RefillSlide {
  /** The verdict: the first refill that failed, else the last that passed. */
  slide: Verdict<SlideFigures>;
  /** The refill that verdict rests on. */
  after: Hit;
  /** Refills judged, and how many of them passed. */
  judged: number;
  passed: number;
}

/**
 * The throttled operations' refills as sliding-window probes. Each fill's first served request
 * goes once the key's oldest requests have left the window and the last Retry-After has elapsed,
 * while the groups spread after them are still inside: a sliding window then has at most the limit
 * less those groups left (judgeSlide, with `first` the key's requests that certainly left within
 * the last three windows and `second` those that may still count). A fixed window reports a fresh
 * window at the first refill after its reset, which falls within one window of any refill. Refused
 * refills are not judged (a window that counts refused requests may still be full). Undefined when
 * no refill could be judged either way (the sliding episode then runs).
 */
export function slideOnRefills(log: readonly Timed[], refills: readonly Refill[], probe: Pick<Probe, 'limit' | 'windowMs'>): RefillSlide | undefined {
  const W = probe.windowMs;
  const slack = windowSlackMs(W);
  const verdicts: Array<{ v: Verdict<SlideFigures>; after: Hit }> = [];
  for (const { hit: after, retryAfterElapsedAt } of refills) {
    if (after.res.status >= 400) continue;
    const others = othersThan(log, [after]).filter((r) => r.sentAt < after.sentAt);
    const first = others.filter((r) => r.receivedAt + W + slack <= after.sentAt && r.receivedAt >= after.sentAt - 3 * W);
    const second = others.filter((r) => r.receivedAt + W + slack > after.sentAt);
    if (!first.some((r) => r.status !== undefined && r.status < 400)) continue;
    const v = judgeSlide({
      limit: probe.limit,
      windowMs: W,
      first,
      second,
      after: timed(after),
      ...(retryAfterElapsedAt !== undefined ? { retryAfterElapsedAt } : {}),
    });
    if (v.verdict === 'pass' || v.verdict === 'fail') verdicts.push({ v, after });
  }
  const failed = verdicts.find((x) => x.v.verdict === 'fail');
  const chosen = failed ?? verdicts.at(-1);
  if (!chosen) return undefined;
  return { slide: chosen.v, after: chosen.after, judged: verdicts.length, passed: verdicts.filter((x) => x.v.verdict === 'pass').length };
}

/** The sliding scenario as the excess episode's refills judged it (no request of its own). */
function onRefills(e: ExcessScenario, r: RefillSlide): SlidingScenario {
  const none = { hits: [], startedAt: r.after.sentAt, endedAt: r.after.sentAt, concurrency: 1 };
  return { probe: e.probe, first: [], second: none, verdict: e.verdict, after: r.after, slide: r.slide, attempts: e.attempts, onRefills: r };
}

/** The key's round trip: the median of a burst's send-to-answer times, ms. */
function roundTripMs(hits: readonly Hit[]): number {
  const d = hits.map((h) => h.receivedAt - h.sentAt).sort((a, b) => a - b);
  return d.length ? d[Math.floor(d.length / 2)]! : 100;
}

export interface SlidingScenario {
  probe: Probe;
  first: Hit[];
  second: Burst;
  /** The two halves judged against the key's ceiling (early, late, status). */
  verdict: Verdict;
  /** The request sent once the first half had left the window. */
  after?: Hit;
  /** The probe judged: did capacity return only as requests left? */
  slide?: Verdict<SlideFigures>;
  attempts: Attempt[];
  /**
   * Set when the excess episode's throttled operations judged the window (slideOnRefills): no
   * halves were sent; `verdict` is the excess burst's against the key's ceiling, `slide` the refills'.
   */
  onRefills?: RefillSlide;
}

/** The sliding-window episode on `probe`'s key (exported for the simulation tests). */
export async function runSliding(ctx: CheckContext, probe: Probe): Promise<SlidingScenario> {
  const attempts: Attempt[] = [];
  let scenario: SlidingScenario | undefined;
  for (const concurrency of [BURST_CONCURRENCY, FAST_CONCURRENCY]) {
    const s = await slideOnce(ctx, probe, concurrency);
    scenario = s;
    attempts.push({
      concurrency,
      figures: s.verdict.figures,
      ...(s.slide ? { slide: s.slide.figures } : {}),
      ...(s.slide && s.slide.verdict !== 'pass' ? { message: s.slide.message } : s.verdict.verdict !== 'pass' ? { message: s.verdict.message } : {}),
    });
    const inconclusive = s.verdict.verdict === 'inconclusive' || s.slide?.verdict === 'inconclusive';
    if (!inconclusive || concurrency === FAST_CONCURRENCY) break;
    const lastSent = Math.max(...[...s.first, ...s.second.hits, ...(s.after ? [s.after] : [])].map((h) => h.receivedAt));
    await wait(
      ctx,
      lastSent + probe.windowMs + SCHEDULE_SLACK_MS - Date.now(),
      'rate-limit: the sliding-window try was inconclusive; letting its requests leave before re-sending faster',
    );
  }
  return { ...scenario!, attempts };
}

/**
 * When the second half starts, from the first request: about half a window, placed so that
 * the second half (as fast as the first) fills the window before the first half leaves it,
 * and is still inside it when the probe comes (after the first half left and a
 * Retry-After rounded up to whole seconds elapsed).
 */
export function secondHalfOffset(first: readonly Hit[], windowMs: number): number {
  const spanA = Math.max(...first.map((h) => h.receivedAt)) - first[0]!.sentAt;
  const lo = Math.max(spanA + windowSlackMs(windowMs), 1000) + 200;
  const hi = windowMs - spanA;
  return hi > lo ? (lo + hi) / 2 : windowMs / 2;
}

/**
 * Half the limit; about half a window after the first of them, the rest until 429; once
 * the first half has left the window (and the 429's Retry-After has elapsed), one
 * probe whose X-RateLimit-Remaining shows whether the second half still counts.
 */
async function slideOnce(ctx: CheckContext, probe: Probe, concurrency: number): Promise<SlidingScenario> {
  await tokenFor(ctx, probe.role, validForMs(ctx, probe.windowMs + 10_000));
  const quiet = await quietKey(ctx, probe);
  const traffic = trafficBefore(ctx, probe.role, quiet.sentAt);
  const half = Math.floor(probe.limit / 2);
  const rest = await burstUntil429(ctx, probe, half - 1, concurrency, quiet);
  const first = [quiet, ...rest.hits];
  const judge = (second: Hit[]) =>
    judgeKeyBurst({ limit: probe.limit, windowMs: probe.windowMs, requests: [...first, ...second].map(timed), ...traffic, concurrency });
  if (rest.refused) return { probe, first, second: { hits: [], startedAt: Date.now(), endedAt: Date.now(), concurrency }, verdict: judge([]), attempts: [] };

  await Promise.all([
    tokenFor(ctx, probe.role, validForMs(ctx, probe.windowMs + 10_000)),
    wait(ctx, quiet.sentAt + secondHalfOffset(first, probe.windowMs) - Date.now(), 'rate-limit: about half a window between the two halves'),
  ]);
  const second = await burstUntil429(ctx, probe, burstBound(probe) - first.length, concurrency, first.at(-1));
  const scenario: SlidingScenario = { probe, first, second, verdict: judge(second.hits), attempts: [] };
  if (scenario.verdict.verdict !== 'pass' || second.refused?.res.status !== 429) return scenario;

  // The first half has left the window, and every 429's Retry-After (whole seconds) has elapsed.
  const firstDone = Math.max(...first.map((h) => h.receivedAt));
  const refusals = second.hits.filter((h) => h.res.status === 429);
  const retryAfterElapsedAt = Math.max(...refusals.map((h) => waitUntil(h, probe)));
  const until = Math.max(firstDone + probe.windowMs + windowSlackMs(probe.windowMs) + SCHEDULE_SLACK_MS, retryAfterElapsedAt);
  await Promise.all([
    tokenFor(ctx, probe.role, validForMs(ctx, until - Date.now() + 10_000)),
    wait(ctx, until - Date.now(), 'rate-limit: waiting for the first half to leave the window'),
  ]);
  const after = await hit(ctx, probe);
  scenario.after = after;
  scenario.slide = judgeSlide({
    limit: probe.limit,
    windowMs: probe.windowMs,
    first: first.map(timed),
    second: second.hits.map(timed),
    after: timed(after),
    ...(refusals.every((h) => h.headers.retryAfter !== undefined)
      ? { retryAfterElapsedAt: Math.max(...refusals.map((h) => h.receivedAt + h.headers.retryAfter! * 1000)) }
      : {}),
  });
  await recover(ctx, probe, after);
  return scenario;
}
