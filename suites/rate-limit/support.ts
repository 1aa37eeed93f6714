/**
 * Helpers of the rate-limit suite: reading the rate-limit headers, sending
 * probes that bypass client-side pacing, driving a key to its limit, and
 * waiting until the key is served again so later checks are not stalled.
 */
import type { CheckContext } from '../../src/engine/context.js';
import type { HttpResponse } from '../../src/http/types.js';
import { pathOf } from '../errors/support.js';

/** The scope of the probe request (a MedicationRequest read). */
export const PROBE_SCOPES = ['system/MedicationRequest.rs'];
/** Requests kept in flight while a burst is far from the limit. */
const BURST_CONCURRENCY = 8;
/** A network or clock margin used when relating client send times to the server's window. */
export const SEND_MARGIN_MS = 500;

export interface RateHeaders {
  limit?: number;
  remaining?: number;
  /** X-RateLimit-Reset as sent (unix seconds when conformant). */
  reset?: number;
  /** Retry-After in seconds. */
  retryAfter?: number;
}

/** A non-negative integer header value, or undefined when absent or not an integer. */
export function integerHeader(value: string | undefined): number | undefined {
  return value !== undefined && /^\s*\d+\s*$/.test(value) ? Number(value) : undefined;
}

export function rateHeaders(res: HttpResponse): RateHeaders {
  const h = res.headers;
  return {
    limit: integerHeader(h['x-ratelimit-limit']),
    remaining: integerHeader(h['x-ratelimit-remaining']),
    reset: integerHeader(h['x-ratelimit-reset']),
    retryAfter: integerHeader(h['retry-after']),
  };
}

/** One probe: when it was sent (client clock, ms) and what came back. */
export interface Hit {
  sentAt: number;
  receivedAt: number;
  res: HttpResponse;
  headers: RateHeaders;
}

export interface Probe {
  role: string;
  url: string;
  /** The key's ceiling per window, from the config. */
  limit: number;
  windowMs: number;
}

/** The client whose key is driven to its limit: `extra` when the config has one, so `main` stays free. */
export function throttleRole(ctx: CheckContext): string {
  return ctx.config.clients.some((c) => c.role === 'extra') ? 'extra' : 'main';
}

/** A cheap authenticated request for `role`: a read of a fixture MedicationRequest of the key's organization. */
export function probeFor(ctx: CheckContext, role: string): Probe {
  const fixture = role === 'second-org' ? 'otherOrgMedicationRequest' : 'medicationRequest';
  return {
    role,
    url: ctx.path(pathOf(ctx, 'R4', 'MedicationRequest', 'read'), { id: ctx.fixture(fixture) }),
    limit: ctx.client(role).rateLimitPerMinute,
    windowMs: ctx.limits.windowSec * 1000,
  };
}

/**
 * Sends one probe without pacing or retries (a 429 is returned, not waited out). Like every
 * request, it waits out an earlier 429's Retry-After on its key unless `earlyRetry` is set.
 */
export async function hit(ctx: CheckContext, probe: Probe, opts: { earlyRetry?: boolean } = {}): Promise<Hit> {
  const sentAt = Date.now();
  const res = await ctx.fhir({ scopes: PROBE_SCOPES, role: probe.role, url: probe.url, pace: false, retry: 'none', expect429: true, ...opts });
  return { sentAt, receivedAt: Date.now(), res, headers: rateHeaders(res) };
}

export interface Burst {
  hits: Hit[];
  /** The first 429, when one came. */
  refused?: Hit;
}

/**
 * Sends probes until one is refused with 429, or `max` have been sent. Several
 * are kept in flight while the key has room; near the limit (by its
 * X-RateLimit-Remaining) they go one at a time, so the first 429 is the only
 * refused request of the burst.
 */
export async function burstUntil429(ctx: CheckContext, probe: Probe, max: number): Promise<Burst> {
  const hits: Hit[] = [];
  let remaining = probe.limit;
  while (hits.length < max) {
    const width = Math.max(1, Math.min(BURST_CONCURRENCY, remaining - 1, max - hits.length));
    const batch = await Promise.all(Array.from({ length: width }, () => hit(ctx, probe)));
    hits.push(...batch);
    const refused = batch.find((h) => h.res.status === 429);
    if (refused) return { hits, refused };
    const reported = batch.map((h) => h.headers.remaining).filter((r): r is number => r !== undefined);
    remaining = reported.length ? Math.min(...reported) : Math.max(1, remaining - width);
  }
  return { hits };
}

/** The most requests a burst sends: the key's ceiling and a tenth more (at least 10). */
export function burstBound(probe: Probe): number {
  return probe.limit + Math.max(10, Math.ceil(probe.limit / 10));
}

/**
 * Starts from a quiet key: when the key already has requests in its window
 * (by X-RateLimit-Remaining), waits one window for them to leave.
 */
export async function quietKey(ctx: CheckContext, probe: Probe): Promise<Hit> {
  const first = await hit(ctx, probe);
  const { remaining, limit } = first.headers;
  if (first.res.status !== 429 && (remaining === undefined || limit === undefined || remaining >= limit - 1)) return first;
  await wait(ctx, probe.windowMs + 1000, 'rate-limit: letting earlier requests of the key leave the window');
  return hit(ctx, probe);
}

export async function wait(ctx: CheckContext, ms: number, reason: string): Promise<void> {
  if (ms <= 0) return;
  ctx.waiting(reason, ms);
  await ctx.sleep(ms);
}

/**
 * When a client may send again after a 429: Retry-After from its receipt, else
 * X-RateLimit-Reset; at most two windows ahead (an extended reset may pass one).
 */
export function waitUntil(h: Hit, probe: Probe): number {
  const bound = h.receivedAt + 2 * probe.windowMs + 5000;
  if (h.headers.retryAfter !== undefined) return Math.min(bound, h.receivedAt + h.headers.retryAfter * 1000 + 100);
  if (h.headers.reset !== undefined) return Math.min(bound, h.headers.reset * 1000 + 100);
  return bound;
}

/** Leaves the key usable: while refused, waits as the 429 says and probes again; at most three attempts. */
export async function recover(ctx: CheckContext, probe: Probe, last: Hit): Promise<Hit> {
  let h = last;
  for (let attempt = 0; attempt < 3 && h.res.status === 429; attempt++) {
    await wait(ctx, waitUntil(h, probe) - Date.now(), 'rate-limit: waiting for the key to be served again');
    h = await hit(ctx, probe);
  }
  return h;
}
