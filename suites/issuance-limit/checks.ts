/**
 * Token issuance limit (spec: Authentication > Token issuance rule 3; Limits:
 * "20 requests per minute per source IP; 1-minute fixed window ... Excess gives 429 `HPB-00105`").
 *
 * The window is fixed, but its alignment is open: to the clock minute, or from the first
 * request. A burst sent within less than one window overlaps at most two fixed windows, so
 * at most 2 x limit of its requests can succeed, whatever the alignment and whatever other
 * token requests came before. The burst therefore sends up to 2 x limit + 1 requests and
 * stops at the first 429; past the limit it sends one at a time, since each early retry may
 * extend the reset.
 */
import { defineCheck, type CheckDefinition } from '../../src/engine/check.js';
import type { CheckContext } from '../../src/engine/context.js';
import { expectError, isObject } from '../../src/engine/expect.js';
import type { HttpResponse } from '../../src/http/types.js';
import { retryAfterMs } from '../../src/auth/token-response.js';
import { episode } from '../../src/engine/schedule.js';

const area = 'issuance-limit';
const SCOPE = 'system/MedicationRequest.rs';
const LIMIT_QUOTE = 'Token issuance | 20 requests per minute per source IP; 1-minute fixed window | `POST /auth/token`. Excess gives 429 `HPB-00105`.';

interface Refusal {
  res: HttpResponse;
  receivedAt: number;
}

interface Burst {
  /** Every 429, in send order (requests in flight when the first came may be refused too). */
  refusals: Refusal[];
  /** Tokens issued by the burst. */
  issued: number;
  sent: number;
  /** From the first send to the last response, ms. */
  spanMs: number;
}

/** Most requests in flight at once: keeps the burst well inside one window on a slow target. */
const BATCH = 10;

function issued(res: HttpResponse): boolean {
  return res.status >= 200 && res.status < 300 && isObject(res.json) && typeof res.json.access_token === 'string';
}

/**
 * Valid token requests, unpaced, in parallel batches of 1, 2, 4, ... BATCH up to the limit, then
 * one at a time, until a 429 (at most 2 x limit + 1 in all; a full window costs a single 429).
 * They rotate over every configured client: the limit is per source IP, not per client.
 */
async function burstUntil429(ctx: CheckContext): Promise<Burst> {
  const roles = [...new Set(ctx.config.clients.map((c) => c.role))];
  const max = 2 * ctx.limits.tokenIssuancePerMinute + 1;
  const started = Date.now();
  const burst: Burst = { refusals: [], issued: 0, sent: 0, spanMs: 0 };
  for (let batchSize = 1; burst.sent < max && burst.refusals.length === 0; batchSize = Math.min(BATCH, batchSize * 2)) {
    const size = Math.min(batchSize, max - burst.sent, Math.max(1, ctx.limits.tokenIssuancePerMinute - burst.sent));
    const batch = Array.from({ length: size }, (_, i) =>
      ctx.tokens.request(roles[(burst.sent + i) % roles.length]!, { scopes: [SCOPE], pace: false, expect429: true }).then((res) => ({ res, receivedAt: Date.now() })),
    );
    burst.sent += size;
    for (const { res, receivedAt } of await Promise.all(batch)) {
      if (res.status === 429) burst.refusals.push({ res, receivedAt });
      else if (issued(res)) burst.issued++;
      else throw new Error(`a valid token request got HTTP ${res.status}, neither a token nor a 429 (exchange ${res.exchange.id})`);
    }
  }
  burst.spanMs = Date.now() - started;
  return burst;
}

export interface Recovery {
  /** The wait before the token request, ms. */
  waitMs: number;
  /** Retry-After of the refusals, as sent ('' when none had one). */
  header: string;
  advised: boolean;
  /** The token request after the wait; absent when Retry-After asked for more than three windows (not waited out). */
  res?: HttpResponse;
}

const BURST_KEY = 'issuance-limit.burst';
const RECOVERY_KEY = 'issuance-limit.recovery';

/**
 * The run's one issuance exhaustion: a burst until 429, then (when a check or the
 * scheduler asks for it) the wait it advises and one token request. Each part starts
 * once per run, by the first check that needs it or by the rate-limit suite beside its
 * own episodes, so the window is waited out once and overlaps the other waits.
 */
export function issuanceEpisode(ctx: CheckContext): Promise<Burst> {
  return episode(ctx.shared, BURST_KEY, () => burstUntil429(ctx));
}

export function issuanceRecovery(ctx: CheckContext): Promise<Recovery | undefined> {
  const burst = issuanceEpisode(ctx);
  return episode(ctx.shared, RECOVERY_KEY, async () => recover(ctx, await burst));
}

async function recover(ctx: CheckContext, burst: Burst): Promise<Recovery | undefined> {
  if (burst.refusals.length === 0) return undefined;
  const windowMs = ctx.limits.windowSec * 1000;
  // Each 429 before the reset may extend it: wait for the latest reset any of them announced.
  const headers = burst.refusals.map((r) => r.res.headers['retry-after']);
  const advisedAt = burst.refusals.map((r) => r.receivedAt + (retryAfterMs(r.res.headers['retry-after'], r.receivedAt) ?? windowMs));
  const advised = headers.some((h) => h !== undefined);
  const header = headers.filter((h) => h !== undefined).join(', ');
  const waitMs = Math.max(0, advised ? Math.max(...advisedAt) - Date.now() : windowMs) + 500;
  if (waitMs > 3 * windowMs + 5000) return { waitMs, header, advised };
  ctx.waiting('waiting out the token issuance window', waitMs);
  await ctx.sleep(waitMs);
  const res = await ctx.tokens.request('main', { scopes: [SCOPE], pace: false });
  return { waitMs, header, advised, res };
}

/** Fails when a burst shorter than one window never met a 429; skips when the target was too slow to tell. */
function expectRefusal(ctx: CheckContext, burst: Burst): HttpResponse {
  ctx.observe('issuance-limit.burst', { sent: burst.sent, issued: burst.issued, refused: burst.refusals.length, spanMs: burst.spanMs });
  if (burst.refusals[0]) return burst.refusals[0].res;
  const windowMs = ctx.limits.windowSec * 1000;
  if (burst.spanMs >= windowMs) ctx.skip(`${burst.sent} token requests took ${burst.spanMs} ms, longer than one ${ctx.limits.windowSec} s window: the burst cannot fill a window`);
  ctx.fail(`${burst.sent} token requests within ${burst.spanMs} ms all got a token: a fixed window of ${ctx.limits.tokenIssuancePerMinute} per ${ctx.limits.windowSec} s allows at most ${2 * ctx.limits.tokenIssuancePerMinute} within any interval shorter than one window`, {
    requirement: 'issuance-limit.twenty-per-minute',
    expected: `a 429 within ${burst.sent} requests`,
    actual: `${burst.issued} tokens issued`,
  });
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
    async run(ctx) {
      const burst = await issuanceEpisode(ctx);
      for (const r of burst.refusals) ctx.attach(r.res.exchange);
      const res = expectRefusal(ctx, burst);
      ctx.check(!issued(res), 'the 429 response carries an access token', { requirement: 'issuance-limit.excess-429', exchange: res.exchange.id });
      const retryAfter = res.headers['retry-after'];
      ctx.check(retryAfterMs(retryAfter, Date.now()) !== undefined, 'the 429 has no usable Retry-After header', {
        requirement: 'rate-limit.retry-after',
        expected: 'Retry-After: <seconds> or an HTTP date',
        actual: retryAfter ?? 'absent',
        exchange: res.exchange.id,
      });
      ctx.observe('issuance-limit.retry-after', retryAfter);
      expectError(res, { status: 429, code: 'HPB-00105', issueCode: 'throttled', requirement: 'issuance-limit.excess-429' });
    },
  }),
  defineCheck({
    id: 'issuance-limit.window-recovers',
    title: 'after the 429 and the Retry-After wait, token issuance works again',
    area,
    level: 'MUST',
    requirements: ['issuance-limit.fixed-window', 'catalog.hpb-00105'],
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
      ctx.check(issued(res), `after waiting ${waitS} s (${recovery.advised ? `Retry-After ${recovery.header}` : 'one window: no Retry-After'}), a token request got HTTP ${res.status}`, {
        requirement: 'issuance-limit.fixed-window',
        expected: '2xx with access_token',
        actual: res.status,
        exchange: res.exchange.id,
      });
    },
  }),
];

export default checks;
