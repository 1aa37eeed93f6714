/**
 * The spec's retry rules ("Errors" > "Retry rules"):
 * 1. on 429 wait the number of seconds in Retry-After;
 * 2. on 5xx back off exponentially from 1 s, cap 60 s, jitter +-10 %;
 * 3. never retry 4xx other than 429 (never 401, 403, 404).
 */

/** Retries after a 5xx, at most. */
export const MAX_5XX_RETRIES = 3;
/** Retries after a 429, at most (keeps the loop bounded against a target that keeps throttling). */
export const MAX_429_RETRIES = 3;

const BACKOFF_START_MS = 1_000;
const BACKOFF_CAP_MS = 60_000;
const JITTER = 0.1;

/** Delay before retry number `retry` (0-based) after a 5xx: 1 s, 2 s, 4 s ... capped at 60 s, +-10 %. */
export function backoffDelayMs(retry: number, random: () => number): number {
  const base = Math.min(BACKOFF_START_MS * 2 ** retry, BACKOFF_CAP_MS);
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()));
}

/** Retry-After as milliseconds, when it is a whole number of seconds (the spec: "seconds to wait"). */
export function parseRetryAfterMs(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value) * 1000;
}

export type RetryKind = '429' | '5xx' | 'none';

/** Which retry rule applies to a status. */
export function retryKind(status: number): RetryKind {
  if (status === 429) return '429';
  if (status >= 500 && status <= 599) return '5xx';
  return 'none';
}
