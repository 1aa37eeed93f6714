/**
 * The token issuance limit's one exhaustion episode (spec: Authentication > Token
 * issuance rule 3; Limits: "20 requests per minute per source IP; 1-minute fixed
 * window"): timed bursts of token requests until a 429, the wait its Retry-After
 * advises, and a second burst. Started once per run, by the first issuance-limit
 * check that needs it or by the rate-limit suite beside its own episodes (so the
 * waits overlap); the issuance-limit checks judge it with judge.ts.
 */
import type { TokenRequestOptions } from '../../auth/types.js';
import type { CheckContext, CheckDefinition, CheckTag } from '../../engine/index.js';
import { episode, excludedBy, planned, renewExpiredProbe } from '../../engine/index.js';
import type { HttpResponse } from '../../http/index.js';
import { retryAfterMs } from '../../auth/token-response.js';
import { isObject } from '../errors.js';
import { RATE_LIMIT_HEADERS } from '../rate-limit.js';
import { scopeOf } from '../scopes.js';
import { EARLY_RETRY_DELAY_MS, earlyRetryDelayMs, judgeIssuanceBurst, refusedBy, type BurstFigures, type Timed, type Verdict } from './judge.js';

/** The scope of the token requests (any scope the clients hold). */
const SCOPE = scopeOf('MedicationRequest', 'rs');

/** The tags of the check that needs the whole episode (burst, wait, second burst): whoever starts it beside other work asks whether the profile runs such a check. */
export const ISSUANCE_RECOVERY_TAGS: readonly CheckTag[] = ['exhausts-issuance-limit', 'waits'];
/** The checks that judge the wait and the second burst (issuanceRecovery). */
const ISSUANCE_RECOVERY_CHECKS: readonly string[] = ['issuance-limit.window-recovers', 'issuance-limit.at-most-limit-per-window'];
/** The checks that judge the issuance episode: another suite starts it beside its own only when the run executes one. */
export const ISSUANCE_EPISODE_CHECKS: readonly string[] = [
  'issuance-limit.excess-429',
  ...ISSUANCE_RECOVERY_CHECKS,
  'issuance-limit.forwarding-headers-not-trusted',
  'issuance-limit.early-retry-429',
  'issuance-limit.early-retry-extends-reset',
];

/** One token request: its timing and answer. */
export interface TokenHit extends Timed {
  res: HttpResponse;
  /** The client (config role) that sent it. */
  role: string;
  /** Sent with made-up forwarding headers (forwardingHeaders). */
  forwarded?: boolean;
  /** The endpoint's X-RateLimit-Remaining, when an integer. */
  remaining?: number;
}

export interface IssuanceBurst {
  hits: TokenHit[];
  /** Every 429 (requests in flight when the first came may be refused too). */
  refusals: TokenHit[];
  issued: number;
  sent: number;
  /** From the first send to the last response, ms. */
  spanMs: number;
  concurrency: number;
  /** Spread over the window (the first try) or sent at once. */
  spread: boolean;
}

/** Most requests in flight at once. */
const BATCH = 10;
/** The share of the window the first burst is spread over. */
const SPREAD = 0.8;

/** A token response that issued a token. */
export function issued(res: HttpResponse): boolean {
  return res.status >= 200 && res.status < 300 && isObject(res.json) && typeof res.json.access_token === 'string';
}

/** The roles the bursts rotate over: the limit is per source IP, not per client. */
function rolesOf(ctx: CheckContext): string[] {
  return [...new Set(ctx.config.clients.map((c) => c.role))];
}

/**
 * The forwarding headers an episode request carries: a different made-up client address (documentation
 * ranges, RFC 5737) in X-Forwarded-For, X-Real-IP and Forwarded on each request, so a limit keyed on what
 * the client writes never binds. None when the config declares a trusted proxy that sets them itself.
 */
export function forwardingHeaders(ctx: CheckContext, n: number): Record<string, string> | undefined {
  if (ctx.config.sourceAddress?.trustedProxy) return undefined;
  const host = 1 + (n % 254);
  return { 'x-forwarded-for': `203.0.113.${host}`, 'x-real-ip': `198.51.100.${host}`, forwarded: `for=192.0.2.${host};proto=https` };
}

/** The episode's requests so far (each one's forwarding headers differ). */
let spoofCount = 0;

/** How the episode sends a token request: inside its section, the section's own request (TokenBroker.alone). */
type Send = (role: string, opts: TokenRequestOptions) => Promise<HttpResponse>;

async function tokenHit(ctx: CheckContext, role: string, send: Send): Promise<TokenHit> {
  const headers = forwardingHeaders(ctx, spoofCount++);
  const sentAt = Date.now();
  const res = await send(role, { scopes: [SCOPE], pace: false, expect429: true, ...(headers ? { headers } : {}) });
  // "The response carries `access_token`": a success without one breaks the rule, in a burst as anywhere.
  if (res.status >= 200 && res.status < 300 && !issued(res))
    ctx.fail(`a valid token request of client ${role} (scope ${SCOPE}) in the issuance burst answered ${res.status} without an access_token string`, {
      requirement: 'auth.token-response-access-token',
      expected: 'access_token: <string>',
      actual: isObject(res.json) ? Object.keys(res.json) : res.text.slice(0, 80),
      exchange: res.exchange.id,
    });
  const remaining = res.headers[RATE_LIMIT_HEADERS.remaining];
  return {
    sentAt,
    receivedAt: Date.now(),
    status: res.status,
    res,
    role,
    ...(headers ? { forwarded: true } : {}),
    ...(remaining !== undefined && /^\s*\d+\s*$/.test(remaining) ? { remaining: Number(remaining) } : {}),
  };
}

function summarize(hits: TokenHit[], concurrency: number, spread: boolean): IssuanceBurst {
  const t0 = hits[0]?.sentAt ?? Date.now();
  return {
    hits,
    concurrency,
    spread,
    refusals: hits.filter((h) => h.res.status === 429),
    issued: hits.filter((h) => issued(h.res)).length,
    sent: hits.length,
    spanMs: hits.length ? Math.max(...hits.map((h) => h.receivedAt)) - t0 : 0,
  };
}

/**
 * Up to `max` token requests until a refusal, paced `intervalMs` apart at the most (0: as
 * fast as allowed), several in flight only while the endpoint's X-RateLimit-Remaining says
 * it has room: one at a time near the limit or without that header, so no request is in
 * flight when the 429 comes and none extends the window by retrying sooner than its
 * Retry-After.
 */
async function burst(ctx: CheckContext, max: number, intervalMs: number, send: Send): Promise<IssuanceBurst> {
  const roles = rolesOf(ctx);
  const hits: TokenHit[] = [];
  const start = Date.now();
  const inFlight = new Set<Promise<TokenHit>>();
  // The least X-RateLimit-Remaining answered so far. Any request the endpoint counted after that answer
  // is still in flight (its answer would say less), so at least `least - in flight` tokens are left:
  // another request goes out only while that leaves one for it. The request that meets the exhausted
  // limit then leaves after every earlier answer, the one that said 0 among them, whatever order the
  // answers arrive in (a `room` from the latest answer alone let it leave beside the last token's
  // request when answers crossed, and a 503 there could not be judged).
  let least: number | undefined;
  const mayGo = () => inFlight.size === 0 || (least !== undefined && inFlight.size < BATCH && least - inFlight.size >= 1);
  let widest = 0;
  for (let i = 0; i < max && !hits.some(refusedBy); i++) {
    while (!mayGo()) await Promise.race(inFlight);
    if (hits.some(refusedBy)) break;
    const due = start + i * intervalMs - Date.now();
    if (due > 0) await ctx.sleep(due);
    const p: Promise<TokenHit> = tokenHit(ctx, roles[i % roles.length]!, send).then((h) => {
      hits[i] = h;
      inFlight.delete(p);
      if (h.remaining !== undefined) least = Math.min(least ?? h.remaining, h.remaining);
      return h;
    });
    // A failure while the loop sleeps is handled by the next race (or the final wait), not left unhandled.
    p.catch(() => undefined);
    inFlight.add(p);
    widest = Math.max(widest, inFlight.size);
  }
  await Promise.all(inFlight);
  return summarize(hits.filter(Boolean), widest, intervalMs > 0);
}

export interface IssuanceEpisode {
  /** The judged burst (the faster re-send when the first could not fill a window). */
  first: IssuanceBurst;
  verdict: Verdict;
  attempts: Array<{ spread: boolean; figures: BurstFigures; message?: string }>;
  /** The early retry after the first burst's 429, when the section judges no recovery (else it follows the second burst). */
  earlyRetry?: EarlyRetry;
  /** Why that early retry got no answer (a network failure, a timeout): the early-retry checks end in error, nothing else does. */
  earlyRetryError?: unknown;
}

/**
 * The episode's one token request sent before a 429's Retry-After elapses, on purpose (Retry rule 1:
 * "retrying sooner gives another 429 and extends the reset time"): after the last burst of the section,
 * so no window a burst is judged in is moved by it.
 */
export interface EarlyRetry {
  /** The 429 it follows: the burst's refusal answered last. */
  refused: TokenHit;
  retry: TokenHit;
  /**
   * Sent at once (a profile that waits for nothing: quick): too soon after the 429 for whole-second
   * headers to show a moved reset. Else EARLY_RETRY_DELAY_MS after it (at most half of its Retry-After
   * less a second: a wait rounded up to whole seconds may end a second early).
   */
  atOnce: boolean;
}

export interface Recovery {
  /** The wait before the second burst, ms. */
  waitMs: number;
  /** Retry-After of the refusals, as sent ('' when none had one). */
  header: string;
  advised: boolean;
  /** The 429 whose Retry-After elapses last (the wait honours it). */
  waitedFor: TokenHit;
  /** The token request after the wait; absent when Retry-After asked for more than three windows (not waited out). */
  res?: HttpResponse;
  /** The second burst: the request after the wait, then `limit` more at once. */
  second?: IssuanceBurst;
  /** The early retry after the second burst's 429. */
  earlyRetry?: EarlyRetry;
  earlyRetryError?: unknown;
}

const SECTION_KEY = 'issuance-limit.section';
const SECTION_RUN_KEY = 'issuance-limit.section-run';
const RECOVERY_KEY = 'issuance-limit.recovery';

/**
 * The run's one issuance exhaustion: the first burst until 429, then (when the run judges it)
 * the wait it advises and the second burst. It starts once per run: beside the paced checks once
 * none still to run may ask for a token (ISSUANCE_EARLY), else by the first check that needs it or
 * by the rate-limit suite beside its own episodes, so the window is waited out once and overlaps
 * the other waits. The token endpoint is the episode's from the first burst to the end of the
 * second (TokenBroker.alone): a token request of anything else meanwhile waits, so none lands in
 * a window the episode counts or retries sooner than its Retry-After.
 */
export function issuanceEpisode(ctx: CheckContext): Promise<IssuanceEpisode> {
  return startSection(ctx).first;
}

export function issuanceRecovery(ctx: CheckContext): Promise<Recovery | undefined> {
  const section = startSection(ctx);
  // A recovery the section did not include (the run judged none when it started): after it, on its own.
  return section.recovery ?? episode(ctx.shared, RECOVERY_KEY, async () => recover(ctx, await section.first, (role, opts) => ctx.tokens.request(role, opts)));
}

/** CheckDefinition.startEarly of the issuance checks: the whole episode beside the paced checks, when the run judges its recovery (else at its turn, as the quick profile's burst at once). */
export const ISSUANCE_EARLY: NonNullable<CheckDefinition['startEarly']> = {
  roles: () => [],
  afterTokens: true,
  start: async (ctx) => {
    if (!recoveryJudged(ctx)) return;
    const section = startSection(ctx);
    await Promise.allSettled([section.first, section.recovery]);
  },
};

const AFTER_KEY = 'issuance-limit.after';

/**
 * Makes the issuance episode, when it has not started yet, wait for `before` first: the tokens of
 * the rate-limit suite's key episodes (else an exhausted endpoint would hold up their first requests).
 */
export function issuanceAfter(ctx: Pick<CheckContext, 'shared'>, before: Promise<unknown>): void {
  const list = (ctx.shared.get(AFTER_KEY) as Promise<unknown>[] | undefined) ?? [];
  list.push(before);
  ctx.shared.set(AFTER_KEY, list);
}

interface Section {
  first: Promise<IssuanceEpisode>;
  /** Undefined when the section ends with the first burst. */
  recovery?: Promise<Recovery | undefined>;
}

function startSection(ctx: CheckContext): Section {
  const known = ctx.shared.get(SECTION_KEY) as Section | undefined;
  if (known) return known;
  const withRecovery = recoveryJudged(ctx);
  let firstDone!: (p: Promise<IssuanceEpisode>) => void;
  const first = new Promise<IssuanceEpisode>((resolve) => {
    firstDone = resolve;
  });
  const run = episode(ctx.shared, SECTION_RUN_KEY, async () => {
    // What other episodes need issued first (issuanceAfter), then the new token after the probe
    // token's expiry, before the bursts exhaust issuance for a window.
    await Promise.allSettled((ctx.shared.get(AFTER_KEY) as Promise<unknown>[] | undefined) ?? []);
    await renewExpiredProbe(ctx);
    // The tokens checks hold for their requests (covering tokens) that would expire in the section's
    // shadow are renewed first: the section ends with the endpoint exhausted for a window, and a
    // check needing a new one meanwhile would wait for that window (a main window lost in a run).
    await ctx.tokens.renewCovering(sectionShadowMs(ctx, withRecovery));
    return ctx.tokens.alone(async (send) => {
      // The early retry comes after the section's last burst: after the first when no recovery is judged.
      const burstDone = firstBurst(ctx, send).then(async (ep) => (withRecovery ? ep : { ...ep, ...(await earlyRetry(ctx, ep.first, send)) }));
      firstDone(burstDone);
      const ep = await burstDone;
      if (!withRecovery) return undefined;
      const recovery = await recover(ctx, ep, send);
      return recovery?.second ? { ...recovery, ...(await earlyRetry(ctx, recovery.second, send)) } : recovery;
    });
  });
  // A failure before the first burst (the probe's renewal cannot fail: it settles undefined) reaches the burst's waiters too.
  // After the burst began, `first` already follows it and ignores this; the rejected promise is handled here either way
  // (an unhandled one ends the process: a run whose deadline passed inside the burst crashed so).
  run.catch((e: unknown) => {
    const failed = Promise.reject(e);
    failed.catch(() => undefined);
    firstDone(failed);
  });
  first.catch(() => undefined);
  const section: Section = { first, ...(withRecovery ? { recovery: run } : {}) };
  ctx.shared.set(SECTION_KEY, section);
  return section;
}

/**
 * How long the section and the exhausted window after it last, about: the first burst (spread over
 * SPREAD of a window when the recovery is judged, else at once), the Retry-After wait (a window) and
 * the second burst, then the window it exhausts; plus a request timeout of slack. A first burst too
 * slow to fill a window waits one more (rare: not counted).
 */
function sectionShadowMs(ctx: CheckContext, withRecovery: boolean): number {
  const windowMs = ctx.limits.windowSec * 1000;
  // The early retry after the last burst, and a second of the reset it moves.
  return (withRecovery ? (SPREAD + 2) * windowMs : windowMs) + EARLY_RETRY_DELAY_MS + 1000 + ctx.config.timeouts.requestMs;
}

/** Whether the early retry goes at once: the profile waits for nothing (quick). */
function retriesAtOnce(ctx: CheckContext): boolean {
  return excludedBy(ctx.profile, { tags: ['waits'] }) !== undefined;
}

/**
 * The episode's one early retry (EarlyRetry), after `b`'s last-answered 429: at once, or
 * EARLY_RETRY_DELAY_MS after it so a moved reset shows in whole seconds. Its failure is its own
 * checks' (earlyRetryError), not the bursts' judged beside it.
 */
async function earlyRetry(ctx: CheckContext, b: IssuanceBurst, send: Send): Promise<{ earlyRetry?: EarlyRetry; earlyRetryError?: unknown }> {
  try {
    const e = await sendEarlyRetry(ctx, b, send);
    return e ? { earlyRetry: e } : {};
  } catch (error) {
    return { earlyRetryError: error };
  }
}

async function sendEarlyRetry(ctx: CheckContext, b: IssuanceBurst, send: Send): Promise<EarlyRetry | undefined> {
  if (b.refusals.length === 0) return undefined;
  const refused = b.refusals.reduce((a, r) => (r.receivedAt > a.receivedAt ? r : a));
  const atOnce = retriesAtOnce(ctx);
  if (!atOnce) {
    const ms = refused.receivedAt + earlyRetryDelayMs(advisedAt(refused, ctx.limits.windowSec * 1000) - refused.receivedAt) - Date.now();
    if (ms > 0) await ctx.sleep(ms);
  }
  // The refused client sends it again: a retry in the strictest sense (a target may keep the penalty per client).
  return { refused, retry: await tokenHit(ctx, refused.role, send), atOnce };
}

/**
 * The early retry the checks judge: the one after the section's last burst. A string says why there is none.
 */
export async function issuanceEarlyRetry(ctx: CheckContext): Promise<EarlyRetry | string> {
  const section = startSection(ctx);
  if (!section.recovery) {
    const ep = await section.first;
    if (ep.earlyRetryError !== undefined) throw ep.earlyRetryError;
    return ep.earlyRetry ?? 'the burst met no 429, so no retry could come before a Retry-After (see issuance-limit.excess-429)';
  }
  const recovery = await section.recovery;
  if (!recovery) return 'the first burst met no 429 (see issuance-limit.excess-429)';
  if (!recovery.second)
    return 'no second burst: no token after the Retry-After wait, or a wait of more than three windows (see issuance-limit.window-recovers)';
  if (recovery.earlyRetryError !== undefined) throw recovery.earlyRetryError;
  return recovery.earlyRetry ?? 'the second burst met no 429 (see issuance-limit.at-most-limit-per-window)';
}

async function firstBurst(ctx: CheckContext, send: Send): Promise<IssuanceEpisode> {
  const limit = ctx.limits.tokenIssuancePerMinute;
  const windowMs = ctx.limits.windowSec * 1000;
  const attempts: IssuanceEpisode['attempts'] = [];
  let result: IssuanceEpisode | undefined;
  // The spread only leaves room for the second burst: a run that judges no recovery (the quick
  // profile, --only) sends the first at once, as the spread one's fallback does.
  for (const spread of recoveryJudged(ctx) ? [true, false] : [false]) {
    const b = await burst(ctx, 2 * limit + 1, spread ? (SPREAD * windowMs) / (2 * limit + 1) : 0, send);
    const verdict = judgeIssuanceBurst({ limit, windowMs, requests: b.hits, concurrency: b.concurrency });
    attempts.push({ spread, figures: verdict.figures, ...(verdict.verdict === 'pass' ? {} : { message: verdict.message }) });
    result = { first: b, verdict, attempts };
    if (verdict.verdict !== 'inconclusive' || !spread) break;
    // Sent at once, as many as in flight at a time and each as slow as they were: would it fit a window?
    const { medianAnswerMs } = timings(b.hits);
    const atOnceMs = Math.ceil((2 * limit + 1) / BATCH) * medianAnswerMs;
    if (atOnceMs >= windowMs) {
      attempts.push({
        spread: false,
        figures: verdict.figures,
        message: `not re-sent at once: at ${medianAnswerMs} ms per answer and ${BATCH} in flight, ${2 * limit + 1} requests need about ${(atOnceMs / 1000).toFixed(1)} s, more than one window`,
      });
      break;
    }
    // Too slow to fill a window: let its tokens leave the window, then send at once.
    const lastAnswer = Math.max(...b.hits.map((h) => h.receivedAt));
    const ms = lastAnswer + windowMs + 500 - Date.now();
    if (ms > 0) {
      ctx.waiting('token issuance: the spread burst could not fill a window; waiting a window before sending at once', ms);
      await ctx.sleep(ms);
    }
  }
  return result!;
}

/** Whether this run executes a check that judges the recovery (its profile runs such checks, and it selected one). */
function recoveryJudged(ctx: CheckContext): boolean {
  return !excludedBy(ctx.profile, { tags: [...ISSUANCE_RECOVERY_TAGS] }) && ISSUANCE_RECOVERY_CHECKS.some((id) => planned(ctx.shared, id));
}

/** When a refusal's Retry-After elapses (client clock); one window without a readable one. */
export function advisedAt(r: TokenHit, windowMs: number): number {
  return r.receivedAt + (retryAfterMs(r.res.headers['retry-after'], r.receivedAt) ?? windowMs);
}

async function recover(ctx: CheckContext, ep: IssuanceEpisode, send: Send): Promise<Recovery | undefined> {
  // The early retry's 429 too, when it followed the first burst: it may have moved the reset.
  const early = ep.earlyRetry?.retry;
  const refusals = [...ep.first.refusals, ...(early?.res.status === 429 ? [early] : [])];
  if (refusals.length === 0) return undefined;
  const windowMs = ctx.limits.windowSec * 1000;
  const limit = ctx.limits.tokenIssuancePerMinute;
  // Each 429 before the reset may extend it: wait for the latest reset any of them announced.
  const headers = refusals.map((r) => r.res.headers['retry-after']);
  const advised = headers.some((h) => h !== undefined);
  const header = headers.filter((h) => h !== undefined).join(', ');
  const waitedFor = refusals.reduce((a, b) => (advisedAt(b, windowMs) > advisedAt(a, windowMs) ? b : a));
  const waitMs = Math.max(0, advisedAt(waitedFor, windowMs) - Date.now()) + 100;
  if (waitMs > 3 * windowMs + 5000) return { waitMs, header, advised, waitedFor };
  ctx.waiting('waiting out the token issuance window', waitMs);
  await ctx.sleep(waitMs);
  const after = await tokenHit(ctx, 'main', send);
  if (!issued(after.res)) return { waitMs, header, advised, waitedFor, res: after.res };
  // The limit at once: with the request after the wait, one more than a window may issue. A
  // conforming endpoint refuses only the last to arrive, so none of them retries sooner than a Retry-After.
  const roles = rolesOf(ctx);
  const rest = await Promise.all(Array.from({ length: limit }, (_, i) => tokenHit(ctx, roles[(i + 1) % roles.length]!, send)));
  const second = summarize([after, ...rest], limit, false);
  return { waitMs, header, advised, waitedFor, res: after.res, second };
}

/** How long the requests took (median and slowest answer) and the longest pause between two sends, ms. */
export function timings(hits: readonly TokenHit[]): { medianAnswerMs: number; slowestAnswerMs: number; longestSendGapMs: number } {
  const answers = hits.map((h) => h.receivedAt - h.sentAt).sort((a, b) => a - b);
  const sends = hits.map((h) => h.sentAt).sort((a, b) => a - b);
  return {
    medianAnswerMs: answers[Math.floor(answers.length / 2)] ?? 0,
    slowestAnswerMs: answers.at(-1) ?? 0,
    longestSendGapMs: Math.max(0, ...sends.slice(1).map((t, i) => t - sends[i]!)),
  };
}
