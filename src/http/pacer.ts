/**
 * Client-side pacing, so the suite never trips a target's rate limit by accident
 * (spec "Limits": per-key sliding window, default 60 requests per minute).
 *
 * Two mechanisms per bucket (a client role, or an unauthenticated bucket):
 * - a sliding-window limiter at the role's ceiling, keeping one request of headroom
 *   (only for buckets created with `limited: true`);
 * - header-driven pacing: after a response with `X-RateLimit-Remaining` <= 1, the next
 *   request of that bucket waits until `X-RateLimit-Reset` (bounded by window + 5 s).
 *   A header `X-RateLimit-Limit` lower than the ceiling is adopted.
 */

export interface PacerOptions {
  /** Window length in seconds. */
  windowSec: number;
  /** Requests per window for a bucket without its own ceiling. */
  defaultCeiling: number;
  /** Ceiling per bucket (client role). */
  ceilings?: Record<string, number>;
  now: () => number;
  /** Performs a wait (reports it, honours deadline and interrupts). */
  wait: (ms: number, reason: string, bucket: string) => Promise<void>;
}

interface BucketState {
  ceiling: number;
  sent: number[];
  blockedUntil: number;
  /** X-RateLimit-Remaining of the last response that had one. */
  lastRemaining?: number;
}

/** Extra slack on a header-driven wait beyond the window. */
const HEADER_WAIT_SLACK_MS = 5_000;
/** Bound on acquire iterations (each one waits a positive time). */
const MAX_ACQUIRE_ROUNDS = 1_000;

export class Pacer {
  private readonly buckets = new Map<string, BucketState>();
  private readonly limitedCounts = new Map<string, number>();

  constructor(private readonly opts: PacerOptions) {}

  private get windowMs(): number {
    return this.opts.windowSec * 1000;
  }

  private bucket(name: string): BucketState {
    let b = this.buckets.get(name);
    if (!b) {
      b = { ceiling: this.opts.ceilings?.[name] ?? this.opts.defaultCeiling, sent: [], blockedUntil: 0 };
      this.buckets.set(name, b);
    }
    return b;
  }

  /** Current ceiling of a bucket (after any header-adopted limit). */
  ceiling(name: string): number {
    return this.bucket(name).ceiling;
  }

  /** Requests sent through the sliding-window limiter, per bucket. */
  limitedRequests(): Record<string, number> {
    return Object.fromEntries(this.limitedCounts);
  }

  /**
   * Waits until a request of `bucket` may be sent, then reserves its slot. An `urgent`
   * request may take the one request of headroom: it waits only when the window is full
   * by our own count or when the target said nothing is left (Remaining 0).
   */
  async acquire(name: string, limited: boolean, urgent = false): Promise<void> {
    const b = this.bucket(name);
    for (let round = 0; round < MAX_ACQUIRE_ROUNDS; round++) {
      const now = this.opts.now();
      b.sent = b.sent.filter((t) => t > now - this.windowMs);
      const headerWait = urgent && (b.lastRemaining ?? 0) >= 1 ? 0 : b.blockedUntil - now;
      const allowed = Math.max(1, b.ceiling - (urgent ? 0 : 1));
      const limiterWait = limited && b.sent.length >= allowed ? b.sent[b.sent.length - allowed] + this.windowMs - now : 0;
      if (headerWait <= 0 && limiterWait <= 0) break;
      if (headerWait >= limiterWait) await this.opts.wait(headerWait, 'rate-limit headers: remaining exhausted, waiting for reset', name);
      else await this.opts.wait(limiterWait, `client-side pacing at ${b.ceiling} per ${this.opts.windowSec} s`, name);
    }
    b.sent.push(this.opts.now());
    if (limited) this.limitedCounts.set(name, (this.limitedCounts.get(name) ?? 0) + 1);
  }

  /** Takes the rate-limit headers of a response of `bucket` into account. */
  observe(name: string, headers: Record<string, string>): void {
    const b = this.bucket(name);
    const limit = parseInteger(headers['x-ratelimit-limit']);
    if (limit !== undefined && limit > 0 && limit < b.ceiling) b.ceiling = limit;
    const remaining = parseInteger(headers['x-ratelimit-remaining']);
    if (remaining !== undefined) b.lastRemaining = remaining;
    const reset = parseInteger(headers['x-ratelimit-reset']);
    if (remaining !== undefined && remaining <= 1 && reset !== undefined) this.blockUntil(name, reset * 1000);
  }

  /** Holds back the next request of `bucket` until `untilMs` (bounded by window + 5 s from now). */
  blockUntil(name: string, untilMs: number): void {
    const b = this.bucket(name);
    const bounded = Math.min(untilMs, this.opts.now() + this.windowMs + HEADER_WAIT_SLACK_MS);
    if (bounded > b.blockedUntil) b.blockedUntil = bounded;
  }
}

function parseInteger(v: string | undefined): number | undefined {
  if (v === undefined || !/^\s*-?\d+\s*$/.test(v)) return undefined;
  return Number(v);
}
