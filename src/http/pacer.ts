/**
 * Client-side pacing, so the suite never trips a target's rate limit by accident
 * (spec "Limits": per-key sliding window, default 60 requests per minute).
 *
 * Two mechanisms per bucket (a client role, or an unauthenticated bucket):
 * - a sliding-window limiter at the role's ceiling, keeping one request of headroom
 *   (only for buckets created with `limited: true`);
 * - header-driven pacing: after a response whose rate-limit hints (HttpProtocol.rateLimit: the
 *   service's `X-RateLimit-*`) say `remaining` <= 1, the next request of that bucket waits
 *   until `reset` (bounded by window + 5 s), or sooner when the bucket's own log explains the
 *   target's count (`slotsFreeAt`). A `limit` lower than the ceiling is adopted.
 *
 * And one rule above both: after a 429 with Retry-After, nothing of that bucket leaves
 * before Retry-After has elapsed (spec Retry rule 1: "retrying sooner gives another 429
 * and extends the reset time"), paced or not, urgent or not. Only an `earlyRetry`
 * request passes the hold: the rate-limit suite's one deliberate early retry (it checks that the
 * reset moves); everything else, the throttled operations included, waits the Retry-After out.
 */
import { ConformanceError } from '../errors.js';
import type { RateLimitHints } from './types.js';

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
  /** Longest hold a request waits out; a longer one fails it (default: no bound). */
  maxHoldMs?: number;
  /**
   * A declared organization ceiling shared by the member buckets (client roles): every request
   * of a member counts (paced or not), and a paced one also waits until the organization's
   * sliding window has room, with the same one request of headroom as a key.
   */
  organization?: { ceiling: number; members: readonly string[] };
}

export interface AcquireOptions {
  /** false: only the 429 hold applies (no sliding window, no header pacing, no slot taken). */
  paced?: boolean;
  /** Passes the 429 hold (the check that retries early on purpose). */
  earlyRetry?: boolean;
}

interface BucketState {
  ceiling: number;
  sent: number[];
  blockedUntil: number;
  /** Retry-After of the latest 429: no request leaves before it (unbounded, unlike `blockedUntil`). */
  heldUntil: number;
  /** X-RateLimit-Remaining of the last response that had one. */
  lastRemaining?: number;
}

/** Extra slack on a header-driven wait beyond the window. */
const HEADER_WAIT_SLACK_MS = 5_000;
/**
 * How much longer than the window a target may keep counting one of our requests: a window kept to
 * the whole second, rounded up (up to 1 s), plus the request's way to the target (the log holds
 * when it left this process).
 */
const WINDOW_RESOLUTION_SLACK_MS = 1_500;
/** Bound on acquire iterations (each one waits a positive time). */
const MAX_ACQUIRE_ROUNDS = 1_000;

export class Pacer {
  private readonly buckets = new Map<string, BucketState>();
  private readonly limitedCounts = new Map<string, number>();
  /** Send times of the organization's members within the window (when a ceiling is declared). */
  private orgSent: number[] = [];

  constructor(private readonly opts: PacerOptions) {}

  private get windowMs(): number {
    return this.opts.windowSec * 1000;
  }

  private bucket(name: string): BucketState {
    let b = this.buckets.get(name);
    if (!b) {
      b = { ceiling: this.opts.ceilings?.[name] ?? this.opts.defaultCeiling, sent: [], blockedUntil: 0, heldUntil: 0 };
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
   * by our own count or when the target said nothing is left (Remaining 0). No request,
   * urgent or unpaced, passes a 429's hold unless it is an `earlyRetry`.
   */
  async acquire(name: string, limited: boolean, urgent = false, opts: AcquireOptions = {}): Promise<void> {
    const b = this.bucket(name);
    const paced = opts.paced !== false;
    for (let round = 0; round < MAX_ACQUIRE_ROUNDS; round++) {
      const now = this.opts.now();
      const holdWait = opts.earlyRetry ? 0 : b.heldUntil - now;
      let headerWait = 0;
      let limiterWait = 0;
      if (paced) {
        // Kept a little past the window: `slotsFreeAt` reads what a coarser target may still count.
        b.sent = b.sent.filter((t) => t > now - this.windowMs - WINDOW_RESOLUTION_SLACK_MS);
        headerWait = urgent && (b.lastRemaining ?? 0) >= 1 ? 0 : b.blockedUntil - now;
        const allowed = Math.max(1, b.ceiling - (urgent ? 0 : 1));
        const inWindow = b.sent.filter((t) => t > now - this.windowMs);
        limiterWait = limited && inWindow.length >= allowed ? inWindow[inWindow.length - allowed]! + this.windowMs - now : 0;
        if (limited && this.isMember(name)) limiterWait = Math.max(limiterWait, this.orgWait(now, urgent));
      }
      if (holdWait <= 0 && headerWait <= 0 && limiterWait <= 0) break;
      if (holdWait > 0 && holdWait >= headerWait && holdWait >= limiterWait) {
        if (this.opts.maxHoldMs !== undefined && holdWait > this.opts.maxHoldMs)
          throw new ConformanceError(
            'ERR_DEADLINE',
            `an earlier 429 holds key ${name} for ${Math.ceil(holdWait / 1000)} s more (Retry-After), longer than the longest wait allowed (${Math.ceil(this.opts.maxHoldMs / 1000)} s); not sent early`,
          );
        await this.opts.wait(holdWait, `429 on this key: no request before its Retry-After elapses`, name);
      } else if (headerWait >= limiterWait) await this.opts.wait(headerWait, 'rate-limit headers: remaining exhausted, waiting for reset', name);
      else await this.opts.wait(limiterWait, `client-side pacing at ${b.ceiling} per ${this.opts.windowSec} s`, name);
    }
    // The organization counts every request of its keys, the deliberately unpaced ones too.
    if (this.isMember(name)) this.orgSent.push(this.opts.now());
    if (!paced) return;
    b.sent.push(this.opts.now());
    if (limited) this.limitedCounts.set(name, (this.limitedCounts.get(name) ?? 0) + 1);
  }

  private isMember(name: string): boolean {
    return this.opts.organization?.members.includes(name) ?? false;
  }

  /** Wait until the organization's window has room for one more paced request (0 when no ceiling is declared). */
  private orgWait(now: number, urgent: boolean): number {
    const org = this.opts.organization;
    if (!org) return 0;
    this.orgSent = this.orgSent.filter((t) => t > now - this.windowMs);
    const allowed = Math.max(1, org.ceiling - (urgent ? 0 : 1));
    return this.orgSent.length >= allowed ? this.orgSent[this.orgSent.length - allowed]! + this.windowMs - now : 0;
  }

  /**
   * How long a paced request of `name` would wait now for its own key (a 429's hold, the
   * headers, its sliding window), without reserving anything: which of several keys can send soonest.
   */
  waitFor(name: string): number {
    const b = this.bucket(name);
    const now = this.opts.now();
    const sent = b.sent.filter((t) => t > now - this.windowMs);
    const allowed = Math.max(1, b.ceiling - 1);
    const limiter = sent.length >= allowed ? sent[sent.length - allowed]! + this.windowMs - now : 0;
    return Math.max(0, b.heldUntil - now, b.blockedUntil - now, limiter);
  }

  /** Requests sent in the current window by `name` (its sliding window). */
  inWindow(name: string): number {
    const now = this.opts.now();
    return this.bucket(name).sent.filter((t) => t > now - this.windowMs).length;
  }

  /** Takes the rate-limit hints of a response of `bucket` (its headers, read by HttpProtocol.rateLimit) into account. */
  observe(name: string, { limit, remaining, reset }: RateLimitHints): void {
    const b = this.bucket(name);
    if (limit !== undefined && limit > 0 && limit < b.ceiling) b.ceiling = limit;
    if (remaining !== undefined) b.lastRemaining = remaining;
    if (remaining !== undefined && remaining <= 1 && reset !== undefined)
      this.blockUntil(name, Math.min(reset * 1000, this.slotsFreeAt(b, limit ?? b.ceiling, remaining) ?? Number.POSITIVE_INFINITY));
  }

  /**
   * When the target will have two slots left again (one to send, one of headroom) by this
   * bucket's own log: the spec's window is sliding, so a slot frees when a counted request is a
   * window old. Read only when the log explains the target's count (limit - remaining requests
   * within a window and the resolution slack): a target that counts requests this run did not
   * pace (another client of the key, an unpaced burst, refused requests) is waited out to its
   * X-RateLimit-Reset. This matters where Reset names the moment the whole window is free (a
   * reading the spec leaves open: "at which the window resets"): waiting for it idles the key a
   * whole window when the oldest requests leave within a second.
   */
  private slotsFreeAt(b: BucketState, limit: number, remaining: number): number | undefined {
    const reach = this.windowMs + WINDOW_RESOLUTION_SLACK_MS;
    const now = this.opts.now();
    const log = b.sent.filter((t) => t > now - reach);
    const used = limit - remaining;
    if (used <= 0 || used > log.length) return undefined;
    // The requests the target counts are at most the newest `used` of the log; the oldest of them leave first.
    const counted = log.slice(log.length - used);
    const mustLeave = Math.max(1, used - (limit - 2));
    return counted[Math.min(mustLeave, counted.length) - 1]! + reach;
  }

  /**
   * A 429 with Retry-After: no request of `bucket` (other than an `earlyRetry`) leaves
   * before `untilMs`. Never shortened by a later, shorter Retry-After.
   */
  hold(name: string, untilMs: number): void {
    const b = this.bucket(name);
    if (untilMs > b.heldUntil) b.heldUntil = untilMs;
  }

  /** Epoch ms until which `bucket` is held by a 429 (0 when never). */
  heldUntil(name: string): number {
    return this.bucket(name).heldUntil;
  }

  /** Holds back the next request of `bucket` until `untilMs` (bounded by window + 5 s from now). */
  blockUntil(name: string, untilMs: number): void {
    const b = this.bucket(name);
    const bounded = Math.min(untilMs, this.opts.now() + this.windowMs + HEADER_WAIT_SLACK_MS);
    if (bounded > b.blockedUntil) b.blockedUntil = bounded;
  }
}
