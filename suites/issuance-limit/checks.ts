/**
 * Token issuance limit (spec: Authentication > Token issuance rule 3; Limits:
 * "20 requests per minute per source IP; 1-minute fixed window ... Excess gives 429 `HPB-00105`").
 *
 * The window is fixed, but its alignment is open: to the clock minute, from the first
 * request, or anywhere else. One episode per run, in two bursts:
 * - the first sends up to 2 x limit + 1 valid token requests spread over most of one
 *   window (at once when the run judges no recovery: the quick profile), until a 429.
 *   Within less than a window at most two fixed windows are met, so more than 2 x limit
 *   tokens is a limit too loose whatever the alignment;
 * - once every 429's Retry-After has elapsed, one request (it must get a token: the wait
 *   was long enough), then `limit` more at once. The window that follows a 429
 *   lasts at least until that 429's send + one window, so the tokens issued inside that
 *   interval belong to one window: at most `limit` of them. Spreading the first burst
 *   puts its 429 late in the window, which leaves most of that interval to the second.
 * Every send and answer is timed; a burst too slow to prove anything is re-sent faster
 * once, then the check skips with its figures. The episode itself is
 * src/service/limits/issuance.ts (the rate-limit suite starts it beside its own).
 */
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import {
  advisedAt,
  clearlyBeforeWait,
  type EarlyRetry,
  expectError,
  issuanceEarlyRetry,
  ISSUANCE_EARLY,
  ISSUANCE_RECOVERY_TAGS,
  issued,
  issuanceEpisode,
  issuanceRecovery,
  judgeIssuanceCeiling,
  judgeIssuanceFloor,
  othersThan,
  rateHeaders,
  judgeRetryAfterValue,
  judgeRetryAfterWait,
  refusedBy,
  type Timed,
  timings,
  type Verdict,
} from '../../src/service/index.js';

const area = 'issuance-limit';
const LIMIT_QUOTE = 'Token issuance | 20 requests per minute per source IP; 1-minute fixed window | `POST /auth/token`. Excess gives 429 `HPB-00105`.';
/** Seconds of slack on Retry-After beyond one window. */
const RETRY_AFTER_SLACK_S = 5;
const EARLY_RETRY_QUOTE = 'On 429, wait the number of seconds in `Retry-After`; retrying sooner gives another 429 and extends the reset time.';

/** The episode's early retry (src/service/limits/issuance.ts), attached; skips with the reason when there is none. */
async function earlyRetryOf(ctx: CheckContext): Promise<EarlyRetry> {
  const early = await issuanceEarlyRetry(ctx);
  if (typeof early === 'string') ctx.skip(early);
  ctx.attach(early.refused.res.exchange);
  ctx.attach(early.retry.res.exchange);
  return early;
}

/** "<n> ms after a 429 that said Retry-After <v>": how the retry was timed. */
function retryTiming(e: EarlyRetry): string {
  return `sent ${e.retry.sentAt - e.refused.receivedAt} ms after a 429 that said Retry-After ${e.refused.res.headers['retry-after'] ?? '(none)'}`;
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
    startEarly: ISSUANCE_EARLY,
    timeoutMs: 10 * 60_000,
    async run(ctx) {
      const ep = await issuanceEpisode(ctx);
      const b = ep.first;
      for (const r of b.refusals.slice(0, 5)) ctx.attach(r.res.exchange);
      ctx.observe('issuance-limit.burst', {
        sent: b.sent,
        issued: b.issued,
        refused: b.refusals.length,
        spanMs: b.spanMs,
        spread: b.spread,
        ...timings(b.hits),
      });
      if (ep.attempts.length > 1) ctx.observe('issuance-limit.bursts', ep.attempts);
      const refusal = b.hits.find(refusedBy);
      if (ep.verdict.verdict === 'inconclusive' && ep.attempts.length > 1) {
        ctx.skip(
          `inconclusive on this run, the target's timing left the rule unobservable: ${ep.attempts.map((a) => (a.message?.startsWith('not ') ? a.message : `${a.spread ? 'spread over a window' : 'sent at once'}: ${a.message}`)).join('; then ')}`,
        );
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
    title: "once the 429's Retry-After has elapsed, token issuance works again (a Retry-After shorter than the real wait fails)",
    area,
    level: 'MUST',
    requirements: ['issuance-limit.fixed-window', 'catalog.hpb-00105', 'rate-limit.retry-after'],
    quote: '20 requests per minute per source IP; 1-minute fixed window',
    tags: [...ISSUANCE_RECOVERY_TAGS],
    startEarly: ISSUANCE_EARLY,
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
        if (v.verdict === 'fail')
          ctx.fail(`token issuance: ${v.message}`, {
            requirement: 'issuance-limit.fixed-window',
            expected: v.expected,
            actual: v.actual,
            exchange: res.exchange.id,
          });
        if (v.verdict === 'pass') return;
      }
      ctx.check(
        issued(res),
        `after waiting ${waitS} s (${recovery.advised ? `Retry-After ${recovery.header}` : 'one window: no Retry-After'}), a token request got HTTP ${res.status}`,
        {
          requirement: 'issuance-limit.fixed-window',
          expected: '2xx with access_token',
          actual: res.status,
          exchange: res.exchange.id,
        },
      );
    },
  }),
  defineCheck({
    id: 'issuance-limit.at-most-limit-per-window',
    title:
      'one fixed issuance window issues at most the limit (20 per minute), whatever its alignment; and, when the run is the only client of its source address, no fewer',
    area,
    level: 'MUST',
    requirements: ['issuance-limit.twenty-per-minute'],
    quote: '20 requests per minute per source IP; 1-minute fixed window',
    tags: ['exhausts-issuance-limit', 'waits'],
    startEarly: ISSUANCE_EARLY,
    timeoutMs: 10 * 60_000,
    async run(ctx: CheckContext) {
      const recovery = await issuanceRecovery(ctx);
      if (!recovery) ctx.skip('the first burst met no 429 (see issuance-limit.excess-429)');
      if (!recovery.second)
        ctx.skip(
          recovery.res
            ? 'no token after the Retry-After wait (see issuance-limit.window-recovers)'
            : 'Retry-After asks for more than three windows; not waited out',
        );
      const second = recovery.second;
      for (const h of second.hits.slice(-3)) ctx.attach(h.res.exchange);
      // Any 429 of the first burst anchors the count; the last one sent leaves the most of the window after it.
      const first = await issuanceEpisode(ctx);
      const anchor = first.first.refusals.reduce((a, b) => (b.sentAt > a.sentAt ? b : a));
      const v = judgeIssuanceCeiling({ limit: ctx.limits.tokenIssuancePerMinute, windowMs: ctx.limits.windowSec * 1000, anchor, later: second.hits });
      // Throttled before the limit: the run's own token requests are the only others the window may count when the
      // config declares its source address exclusive; else other clients behind it may have used the window.
      const floor = judgeIssuanceFloor({
        limit: ctx.limits.tokenIssuancePerMinute,
        anchor,
        later: second.hits,
        others: othersThan(ctx.run.tokenRequestLog(), [anchor, ...second.hits]),
      });
      ctx.observe('issuance-limit.second-burst', { ...v.figures, sent: second.sent, spanMs: second.spanMs, floor: floor.figures });
      const refusal = second.hits.find(refusedBy);
      if (ctx.config.sourceAddress?.exclusive) settle(ctx, floor, refusal?.res.exchange.id);
      else if (floor.verdict === 'fail')
        ctx.observe(
          'issuance-limit.refused-before-limit',
          floor.figures,
          `${floor.message}; not failed: the config does not declare the source address exclusive (sourceAddress.exclusive), so other clients behind it may have used the window`,
        );
      settle(ctx, v, second.hits.at(-1)?.res.exchange.id);
    },
  }),
  defineCheck({
    id: 'issuance-limit.forwarding-headers-not-trusted',
    title:
      'token requests carrying a different X-Forwarded-For, X-Real-IP and Forwarded each still count against the one source address (unless the config declares a trusted proxy)',
    area,
    level: 'MUST',
    requirements: ['issuance-limit.twenty-per-minute', 'issuance-limit.excess-429'],
    quote: 'Token issuance is limited to 20 requests per minute per source IP.',
    tags: ['exhausts-issuance-limit'],
    startEarly: ISSUANCE_EARLY,
    // Judges the issuance episode's burst (counted as the episode's requests): none of its own.
    requests: 0,
    timeoutMs: 10 * 60_000,
    async run(ctx) {
      // The issuance episode's own burst: every request carries made-up forwarding headers, no request of its own.
      const ep = await issuanceEpisode(ctx);
      const b = ep.first;
      const forwarded = b.hits.filter((h) => h.forwarded).length;
      ctx.observe('issuance-limit.forwarded-requests', { sent: b.sent, withForwardingHeaders: forwarded, issued: b.issued, refused: b.refusals.length });
      if (ctx.config.sourceAddress?.trustedProxy)
        ctx.openChoice(
          "the config declares a trusted proxy in front of the target that sets X-Forwarded-For, X-Real-IP and Forwarded itself (sourceAddress.trustedProxy): the source address is what the proxy says, so the burst carried none of the suite's",
        );
      if (forwarded === 0) ctx.skip('no request of the issuance burst carried forwarding headers');
      if (ep.verdict.verdict === 'inconclusive') ctx.skip(`inconclusive on this run, the target's timing left the rule unobservable: ${ep.verdict.message}`);
      if (ep.verdict.verdict === 'fail' && ep.verdict.rule === 'late')
        ctx.fail(
          `every token request carried a different X-Forwarded-For, X-Real-IP and Forwarded (203.0.113.x, 198.51.100.x, 192.0.2.x), and the limit did not bind: ${ep.verdict.message}. A limit keyed on a header the client writes is no limit per source IP (unless a proxy you trust sets it: declare sourceAddress.trustedProxy)`,
          {
            requirement: 'issuance-limit.twenty-per-minute',
            expected: ep.verdict.expected,
            actual: ep.verdict.actual,
            exchange: b.hits.at(-1)?.res.exchange.id,
          },
        );
    },
  }),
  defineCheck({
    id: 'issuance-limit.early-retry-429',
    surfaces: {
      channel:
        "the token endpoint: one token request after the issuance episode's last 429 (after the second burst when the run judges the window's recovery, else after the first)",
      leftOut: ['the per-key and per-organization windows: rate-limit.early-retry-refused-and-extends-reset judges the key the exhaustion episode drives'],
    },
    title: "a token request sent before the issuance 429's Retry-After elapses gets another 429 HPB-00105, no token",
    area,
    level: 'MUST',
    requirements: ['rate-limit.early-retry-429'],
    quote: EARLY_RETRY_QUOTE,
    tags: ['exhausts-issuance-limit'],
    startEarly: ISSUANCE_EARLY,
    // The episode's one early retry (counted as the episode's requests).
    requests: 0,
    timeoutMs: 10 * 60_000,
    async run(ctx) {
      const e = await earlyRetryOf(ctx);
      const res = e.retry.res;
      // Served is a fail only clearly before the wait could have ended: a Retry-After rounded up to whole seconds may
      // end up to a second before it says, and on a loaded machine a retry sent early can arrive late.
      if (
        res.status !== 429 &&
        !clearlyBeforeWait(e.refused.receivedAt, advisedAt(e.refused, ctx.limits.windowSec * 1000) - e.refused.receivedAt, e.retry.receivedAt)
      )
        ctx.skip(
          `inconclusive on this run: the early retry was answered ${res.status} ${e.retry.receivedAt - e.refused.receivedAt} ms after a 429 that said Retry-After ${e.refused.res.headers['retry-after'] ?? '(none)'}, when a wait rounded up to whole seconds may have ended`,
        );
      ctx.check(!issued(res), `a token request ${retryTiming(e)} was issued a token (HTTP ${res.status})`, {
        requirement: 'rate-limit.early-retry-429',
        expected: '429 HPB-00105, no access_token',
        actual: res.status,
        exchange: res.exchange.id,
      });
      expectError(res, { status: 429, code: 'HPB-00105', issueCode: 'throttled', requirement: 'rate-limit.early-retry-429' });
    },
  }),
  defineCheck({
    id: 'issuance-limit.early-retry-extends-reset',
    surfaces: {
      channel:
        "the token endpoint: one token request after the issuance episode's last 429 (after the second burst when the run judges the window's recovery, else after the first)",
      leftOut: ['the per-key and per-organization windows: rate-limit.early-retry-refused-and-extends-reset judges the key the exhaustion episode drives'],
    },
    title: "a token request sent before the issuance 429's Retry-After elapses moves the reset later (X-RateLimit-Reset, else Retry-After)",
    area,
    level: 'MUST',
    requirements: ['rate-limit.early-retry-extends-reset'],
    quote: EARLY_RETRY_QUOTE,
    // It waits a second and a half after the 429 before retrying, so a moved reset shows in whole seconds.
    tags: ['exhausts-issuance-limit', 'waits'],
    startEarly: ISSUANCE_EARLY,
    requests: 0,
    timeoutMs: 10 * 60_000,
    async run(ctx) {
      const e = await earlyRetryOf(ctx);
      if (e.atOnce) ctx.skip('the early retry went at once after the 429, too soon for whole-second headers to show a moved reset');
      const res = e.retry.res;
      if (res.status !== 429) ctx.skip(`the early retry was answered ${res.status}, not 429 (see issuance-limit.early-retry-429)`);
      const { reset: resetBefore, retryAfter: waitBefore } = rateHeaders(e.refused.res);
      const { reset: resetAfter, retryAfter: waitAfter } = rateHeaders(res);
      if (resetBefore !== undefined && resetAfter !== undefined) {
        // Whole seconds rounded: a reset moved by a second or more shows as a larger value.
        ctx.check(
          resetAfter > resetBefore,
          `X-RateLimit-Reset did not move later after a token request ${retryTiming(e)} (${resetBefore} then ${resetAfter})`,
          {
            requirement: 'rate-limit.early-retry-extends-reset',
            expected: `> ${resetBefore}`,
            actual: resetAfter,
            exchange: res.exchange.id,
          },
        );
        return;
      }
      if (waitBefore === undefined || waitAfter === undefined)
        return ctx.fail('neither X-RateLimit-Reset nor Retry-After is on both 429 responses of the token endpoint', {
          requirement: 'rate-limit.early-retry-extends-reset',
          expected: 'X-RateLimit-Reset or Retry-After on both',
          actual: {
            before: { reset: e.refused.res.headers['x-ratelimit-reset'], retryAfter: e.refused.res.headers['retry-after'] },
            after: { reset: res.headers['x-ratelimit-reset'], retryAfter: res.headers['retry-after'] },
          },
          exchange: res.exchange.id,
        });
      // Each wait rounds up to whole seconds: an unmoved reset shows a gain under a second, a reset moved by at
      // least one second a gain above zero. Between the two the headers cannot tell.
      const gainMs = e.retry.receivedAt + waitAfter * 1000 - (e.refused.receivedAt + waitBefore * 1000);
      if (gainMs > 1000) return;
      if (gainMs > 0)
        ctx.skip(
          `inconclusive on this run: Retry-After ${waitBefore} s, then ${waitAfter} s ${e.retry.receivedAt - e.refused.receivedAt} ms later: a gain of ${gainMs} ms, which whole seconds cannot tell from an unmoved reset`,
        );
      ctx.fail(`the wait did not move later after a token request ${retryTiming(e)} (Retry-After ${waitBefore} s, then ${waitAfter} s)`, {
        requirement: 'rate-limit.early-retry-extends-reset',
        expected: 'a later reset',
        actual: { before: waitBefore, after: waitAfter, gainMs },
        exchange: res.exchange.id,
      });
    },
  }),
];

export default checks;
