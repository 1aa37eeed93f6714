/**
 * Token issuance limit (spec: Authentication > Token issuance rule 3; Limits:
 * "20 requests per minute per source IP; 1-minute fixed window ... Excess gives 429 `HPB-00105`").
 *
 * The window is fixed, but its alignment is open: to the clock minute, from the first
 * request, or anywhere else. One episode per run, in two bursts:
 * - the first sends up to 2 x limit + 1 valid token requests spread over most of one
 *   window, until a 429. Within less than a window at most two fixed windows are met, so
 *   more than 2 x limit tokens is a limit too loose whatever the alignment;
 * - once every 429's Retry-After has elapsed, one request (it must get a token: the wait
 *   was long enough), then `limit` more at once. The window that follows a 429
 *   lasts at least until that 429's send + one window, so the tokens issued inside that
 *   interval belong to one window: at most `limit` of them. Spreading the first burst
 *   puts its 429 late in the window, which leaves most of that interval to the second.
 * Every send and answer is timed; a burst too slow to prove anything is re-sent faster
 * once, then the check skips with its figures.
 */
import { type CheckContext, type CheckDefinition, defineCheck, episode } from '../../src/engine/index.js';
import {
  type BurstFigures, expectError, isObject, judgeIssuanceBurst, judgeIssuanceCeiling, judgeRetryAfterValue, judgeRetryAfterWait, refusedBy,
  type Timed, type Verdict,
} from '../../src/service/index.js';
import type { HttpResponse } from '../../src/http/index.js';
import { retryAfterMs } from '../../src/auth/token-response.js';

const area = 'issuance-limit';
const SCOPE = 'system/MedicationRequest.rs';
const LIMIT_QUOTE = 'Token issuance | 20 requests per minute per source IP; 1-minute fixed window | `POST /auth/token`. Excess gives 429 `HPB-00105`.';
/** Seconds of slack on Retry-After beyond one window. */
const RETRY_AFTER_SLACK_S = 5;

/** One token request: its timing and answer. */
export interface TokenHit extends Timed {
  res: HttpResponse;
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

function issued(res: HttpResponse): boolean {
  return res.status >= 200 && res.status < 300 && isObject(res.json) && typeof res.json.access_token === 'string';
}

/** The roles the bursts rotate over: the limit is per source IP, not per client. */
function rolesOf(ctx: CheckContext): string[] {
  return [...new Set(ctx.config.clients.map((c) => c.role))];
}

async function tokenHit(ctx: CheckContext, role: string): Promise<TokenHit> {
  const sentAt = Date.now();
  const res = await ctx.tokens.request(role, { scopes: [SCOPE], pace: false, expect429: true });
  if (res.status < 300 && !issued(res)) throw new Error(`a valid token request got HTTP ${res.status} without an access_token (exchange ${res.exchange.id})`);
  const remaining = res.headers['x-ratelimit-remaining'];
  return { sentAt, receivedAt: Date.now(), status: res.status, res, ...(remaining !== undefined && /^\s*\d+\s*$/.test(remaining) ? { remaining: Number(remaining) } : {}) };
}

function summarize(hits: TokenHit[], concurrency: number, spread: boolean): IssuanceBurst {
  const t0 = hits[0]?.sentAt ?? Date.now();
  return {
    hits, concurrency, spread,
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
async function burst(ctx: CheckContext, max: number, intervalMs: number): Promise<IssuanceBurst> {
  const roles = rolesOf(ctx);
  const hits: TokenHit[] = [];
  const start = Date.now();
  const inFlight = new Set<Promise<TokenHit>>();
  let room = 1;
  let widest = 0;
  for (let i = 0; i < max && !hits.some(refusedBy); i++) {
    while (inFlight.size >= room) await Promise.race(inFlight);
    if (hits.some(refusedBy)) break;
    const due = start + i * intervalMs - Date.now();
    if (due > 0) await ctx.sleep(due);
    const p: Promise<TokenHit> = tokenHit(ctx, roles[i % roles.length]!).then((h) => {
      hits[i] = h;
      inFlight.delete(p);
      room = h.remaining === undefined ? 1 : Math.max(1, Math.min(BATCH, h.remaining - 1));
      return h;
    });
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
}

const BURST_KEY = 'issuance-limit.burst';
const RECOVERY_KEY = 'issuance-limit.recovery';

/**
 * The run's one issuance exhaustion: the first burst until 429, then (when a check or
 * the scheduler asks for it) the wait it advises and the second burst. Each part starts
 * once per run, by the first check that needs it or by the rate-limit suite beside its
 * own episodes, so the window is waited out once and overlaps the other waits.
 */
export function issuanceEpisode(ctx: CheckContext): Promise<IssuanceEpisode> {
  return episode(ctx.shared, BURST_KEY, () => firstBurst(ctx));
}

export function issuanceRecovery(ctx: CheckContext): Promise<Recovery | undefined> {
  const first = issuanceEpisode(ctx);
  return episode(ctx.shared, RECOVERY_KEY, async () => recover(ctx, await first));
}

async function firstBurst(ctx: CheckContext): Promise<IssuanceEpisode> {
  const limit = ctx.limits.tokenIssuancePerMinute;
  const windowMs = ctx.limits.windowSec * 1000;
  const attempts: IssuanceEpisode['attempts'] = [];
  let result: IssuanceEpisode | undefined;
  for (const spread of [true, false]) {
    const b = await burst(ctx, 2 * limit + 1, spread ? (SPREAD * windowMs) / (2 * limit + 1) : 0);
    const verdict = judgeIssuanceBurst({ limit, windowMs, requests: b.hits, concurrency: b.concurrency });
    attempts.push({ spread, figures: verdict.figures, ...(verdict.verdict === 'pass' ? {} : { message: verdict.message }) });
    result = { first: b, verdict, attempts };
    if (verdict.verdict !== 'inconclusive' || !spread) break;
    // Sent at once, as many as in flight at a time and each as slow as they were: would it fit a window?
    const { medianAnswerMs } = timings(b.hits);
    const atOnceMs = Math.ceil((2 * limit + 1) / BATCH) * medianAnswerMs;
    if (atOnceMs >= windowMs) {
      attempts.push({ spread: false, figures: verdict.figures, message: `not re-sent at once: at ${medianAnswerMs} ms per answer and ${BATCH} in flight, ${2 * limit + 1} requests need about ${(atOnceMs / 1000).toFixed(1)} s, more than one window` });
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

/** When a refusal's Retry-After elapses (client clock); one window without a readable one. */
function advisedAt(r: TokenHit, windowMs: number): number {
  return r.receivedAt + (retryAfterMs(r.res.headers['retry-after'], r.receivedAt) ?? windowMs);
}

async function recover(ctx: CheckContext, ep: IssuanceEpisode): Promise<Recovery | undefined> {
  const refusals = ep.first.refusals;
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
  const after = await tokenHit(ctx, 'main');
  if (!issued(after.res)) return { waitMs, header, advised, waitedFor, res: after.res };
  // The limit at once: with the request after the wait, one more than a window may issue. A
  // conforming endpoint refuses only the last to arrive, so none of them retries sooner than a Retry-After.
  const roles = rolesOf(ctx);
  const rest = await Promise.all(Array.from({ length: limit }, (_, i) => tokenHit(ctx, roles[(i + 1) % roles.length]!)));
  const second = summarize([after, ...rest], limit, false);
  return { waitMs, header, advised, waitedFor, res: after.res, second };
}

/** How long the requests took (median and slowest answer) and the longest pause between two sends, ms. */
function timings(hits: readonly TokenHit[]): { medianAnswerMs: number; slowestAnswerMs: number; longestSendGapMs: number } {
  const answers = hits.map((h) => h.receivedAt - h.sentAt).sort((a, b) => a - b);
  const sends = hits.map((h) => h.sentAt).sort((a, b) => a - b);
  return {
    medianAnswerMs: answers[Math.floor(answers.length / 2)] ?? 0,
    slowestAnswerMs: answers.at(-1) ?? 0,
    longestSendGapMs: Math.max(0, ...sends.slice(1).map((t, i) => t - sends[i]!)),
  };
}

/** Turns a verdict into the outcome: a fail with its timings, an error, or a skip with the figures. */
function settle<F>(ctx: CheckContext, v: Verdict<F>, exchange?: string, skipPrefix = ''): void {
  if (v.verdict === 'fail') ctx.fail(v.message, { requirement: v.requirement, expected: v.expected, actual: v.actual, ...(exchange ? { exchange } : {}) });
  if (v.verdict === 'error') throw new Error(v.message);
  if (v.verdict === 'inconclusive') ctx.skip(`${skipPrefix}inconclusive on this run, the target's timing left the rule unobservable: ${v.message}`);
}

export const checks: CheckDefinition[] = [
  defineCheck({
    id: 'issuance-limit.excess-429',
    title: 'token requests beyond the issuance limit get 429 HPB-00105 (throttled) with Retry-After',
    area,
    level: 'MUST',
    requirements: ['issuance-limit.twenty-per-minute', 'issuance-limit.excess-429', 'errors.throttled-code', 'catalog.hpb-00105', 'rate-limit.retry-after'],
    quote: LIMIT_QUOTE,
    tags: ['exhausts-issuance-limit'],
    timeoutMs: 10 * 60_000,
    async run(ctx) {
      const ep = await issuanceEpisode(ctx);
      const b = ep.first;
      for (const r of b.refusals.slice(0, 5)) ctx.attach(r.res.exchange);
      ctx.observe('issuance-limit.burst', { sent: b.sent, issued: b.issued, refused: b.refusals.length, spanMs: b.spanMs, spread: b.spread, ...timings(b.hits) });
      if (ep.attempts.length > 1) ctx.observe('issuance-limit.bursts', ep.attempts);
      const refusal = b.hits.find(refusedBy);
      if (ep.verdict.verdict === 'inconclusive' && ep.attempts.length > 1) {
        ctx.skip(`inconclusive on this run, the target's timing left the rule unobservable: ${ep.attempts.map((a) => (a.message?.startsWith('not ') ? a.message : `${a.spread ? 'spread over a window' : 'sent at once'}: ${a.message}`)).join('; then ')}`);
      }
      settle(ctx, ep.verdict, refusal?.res.exchange.id ?? b.hits.at(-1)?.res.exchange.id);
      const res = refusal!.res;
      ctx.check(!issued(res), 'the 429 response carries an access token', { requirement: 'issuance-limit.excess-429', exchange: res.exchange.id });
      const retryAfter = res.headers['retry-after'];
      const ra = judgeRetryAfterValue(retryAfter, ctx.limits.windowSec, RETRY_AFTER_SLACK_S);
      ctx.check(ra.ok, ra.ok ? '' : ra.message, {
        requirement: 'rate-limit.retry-after',
        expected: `Retry-After: whole seconds, 1..${ctx.limits.windowSec}`,
        actual: retryAfter ?? 'absent',
        exchange: res.exchange.id,
      });
      ctx.observe('issuance-limit.retry-after', retryAfter);
      expectError(res, { status: 429, code: 'HPB-00105', issueCode: 'throttled', requirement: 'issuance-limit.excess-429' });
    },
  }),
  defineCheck({
    id: 'issuance-limit.window-recovers',
    title: 'once the 429\'s Retry-After has elapsed, token issuance works again (a Retry-After shorter than the real wait fails)',
    area,
    level: 'MUST',
    requirements: ['issuance-limit.fixed-window', 'catalog.hpb-00105', 'rate-limit.retry-after'],
    quote: '20 requests per minute per source IP; 1-minute fixed window',
    tags: ['exhausts-issuance-limit', 'waits'],
    waitWindows: 1,
    timeoutMs: 10 * 60_000,
    async run(ctx: CheckContext) {
      const recovery = await issuanceRecovery(ctx);
      if (!recovery) ctx.skip('the burst met no 429, so there is no window to recover from (see issuance-limit.excess-429)');
      ctx.observe('issuance-limit.retry-after', recovery.header || 'absent');
      const waitS = Math.round(recovery.waitMs / 1000);
      if (!recovery.res) ctx.skip(`Retry-After asks for ${waitS} s, more than three windows; not waited out`);
      const res = recovery.res;
      ctx.attach(res.exchange);
      const after: Timed = recovery.second?.hits[0] ?? { sentAt: recovery.waitedFor.receivedAt + recovery.waitMs, receivedAt: Date.now(), status: res.status };
      const raw = recovery.waitedFor.res.headers['retry-after'];
      const seconds = raw !== undefined && /^\s*\d+\s*$/.test(raw) ? Number(raw) : undefined;
      if (seconds !== undefined) {
        const v = judgeRetryAfterWait({ refused: recovery.waitedFor, retryAfterS: seconds, after: { ...after, status: issued(res) ? 200 : res.status } });
        if (v.verdict === 'fail') ctx.fail(`token issuance: ${v.message}`, { requirement: 'issuance-limit.fixed-window', expected: v.expected, actual: v.actual, exchange: res.exchange.id });
        if (v.verdict === 'pass') return;
      }
      ctx.check(issued(res), `after waiting ${waitS} s (${recovery.advised ? `Retry-After ${recovery.header}` : 'one window: no Retry-After'}), a token request got HTTP ${res.status}`, {
        requirement: 'issuance-limit.fixed-window',
        expected: '2xx with access_token',
        actual: res.status,
        exchange: res.exchange.id,
      });
    },
  }),
  defineCheck({
    id: 'issuance-limit.at-most-limit-per-window',
    title: 'one fixed issuance window issues at most the limit (20 per minute), whatever its alignment',
    area,
    level: 'MUST',
    requirements: ['issuance-limit.twenty-per-minute'],
    quote: '20 requests per minute per source IP; 1-minute fixed window',
    tags: ['exhausts-issuance-limit', 'waits'],
    timeoutMs: 10 * 60_000,
    async run(ctx: CheckContext) {
      const recovery = await issuanceRecovery(ctx);
      if (!recovery) ctx.skip('the first burst met no 429 (see issuance-limit.excess-429)');
      if (!recovery.second) ctx.skip(recovery.res ? 'no token after the Retry-After wait (see issuance-limit.window-recovers)' : 'Retry-After asks for more than three windows; not waited out');
      const second = recovery.second;
      for (const h of second.hits.slice(-3)) ctx.attach(h.res.exchange);
      // Any 429 of the first burst anchors the count; the last one sent leaves the most of the window after it.
      const first = await issuanceEpisode(ctx);
      const anchor = first.first.refusals.reduce((a, b) => (b.sentAt > a.sentAt ? b : a));
      const v = judgeIssuanceCeiling({ limit: ctx.limits.tokenIssuancePerMinute, windowMs: ctx.limits.windowSec * 1000, anchor, later: second.hits });
      ctx.observe('issuance-limit.second-burst', { ...v.figures, sent: second.sent, spanMs: second.spanMs });
      settle(ctx, v, second.hits.at(-1)?.res.exchange.id);
    },
  }),
];

export default checks;
