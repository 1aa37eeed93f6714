/**
 * The service's rate-limit headers (spec "Limits", "Rate-limit response headers",
 * "Errors" > "Retry rules"): `X-RateLimit-Limit`, `-Remaining`, `-Reset` (unix seconds)
 * on every authenticated and token-endpoint response, `Retry-After` (seconds) on 429.
 */
import { parseRetryAfterMs } from '../http/retry.js';
import type { RateLimitHints } from '../http/types.js';

export const RATE_LIMIT_HEADERS = {
  limit: 'x-ratelimit-limit',
  remaining: 'x-ratelimit-remaining',
  reset: 'x-ratelimit-reset',
  retryAfter: 'retry-after',
} as const;

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

/** The rate-limit headers of a response, as the checks judge them (non-negative integers only). */
export function rateHeaders(res: { headers: Record<string, string> }): RateHeaders {
  const h = res.headers;
  return {
    limit: integerHeader(h[RATE_LIMIT_HEADERS.limit]),
    remaining: integerHeader(h[RATE_LIMIT_HEADERS.remaining]),
    reset: integerHeader(h[RATE_LIMIT_HEADERS.reset]),
    retryAfter: integerHeader(h[RATE_LIMIT_HEADERS.retryAfter]),
  };
}

function signedInteger(v: string | undefined): number | undefined {
  if (v === undefined || !/^\s*-?\d+\s*$/.test(v)) return undefined;
  return Number(v);
}

/** What the client's pacing takes from a response's headers (any integer, so a negative Remaining still holds it back). */
export function rateLimitHints(headers: Record<string, string>): RateLimitHints {
  const hints: RateLimitHints = {};
  const limit = signedInteger(headers[RATE_LIMIT_HEADERS.limit]);
  const remaining = signedInteger(headers[RATE_LIMIT_HEADERS.remaining]);
  const reset = signedInteger(headers[RATE_LIMIT_HEADERS.reset]);
  if (limit !== undefined) hints.limit = limit;
  if (remaining !== undefined) hints.remaining = remaining;
  if (reset !== undefined) hints.reset = reset;
  return hints;
}

/** Retry-After as ms: the spec's "seconds to wait", a whole number. */
export function retryAfterMs(headers: Record<string, string>): number | undefined {
  return parseRetryAfterMs(headers[RATE_LIMIT_HEADERS.retryAfter]);
}
