/**
 * Rate limiting (spec "Limits" and Retry rule 1), with an injectable clock:
 * - SlidingWindowLog: per key, per organization and anonymous per IP.
 * - FixedWindowCounter: token issuance per source IP.
 * Both record refused requests, so retrying before `Retry-After` elapses
 * extends the reset time.
 */

export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Slots left after this request, never negative. */
  remaining: number;
  /** Epoch ms reported as the window's reset (X-RateLimit-Reset). */
  resetMs: number;
  /** Epoch ms when a refused request's wait ends (Retry-After), when it differs from `resetMs`. */
  retryAtMs?: number;
}

/** Readings of the per-key window's headers where the spec leaves a choice (see ReferenceModes). */
export interface SlidingWindowOptions {
  /**
   * X-RateLimit-Reset: `slot-frees` (when the oldest kept request leaves, i.e. when a
   * slot frees while the window is full) or `window-free` (when the newest leaves).
   */
  reset?: 'slot-frees' | 'window-free';
  /** Seconds a 429's Retry-After (and the hold on the key) adds beyond the rounded-up wait. */
  retryAfterPadS?: number;
  /**
   * The hold on a refused key ends when its wait does, not when the whole-second Retry-After announcing
   * it elapses (reference mode `retryAfter: rounded-up`): up to a second earlier.
   */
  holdUnrounded?: boolean;
  /**
   * Timestamps kept to the whole second, rounded up (reference mode `keyWindowAccounting: coarse`):
   * a request stays in the window until the end of the second a window after it.
   */
  wholeSeconds?: boolean;
  /**
   * Reference mode `keyWindowAtStart: earlier-run`: a key's window, at its first request, already holds
   * this fraction of its limit, spread evenly over the window before it (an earlier client's requests).
   */
  earlierUse?: number;
}

const SWEEP_THRESHOLD = 10_000;

/**
 * Sliding window log. Only the most recent `limit` timestamps of a key are kept:
 * a slot frees exactly when the limit-th most recent request leaves the window,
 * so older entries never change a decision. Memory per key is bounded by its limit.
 *
 * Retry rule 1: a refusal blocks the key until the `Retry-After` it announces
 * (whole seconds; the reset reports the same moment). A request before that is
 * refused even when a slot has freed meanwhile, and extends the reset by at
 * least one second, so the extension shows in the whole-second headers; with
 * `prematureRetry` 'extend-steep', by the whole remaining wait (it doubles).
 */
export class SlidingWindowLog {
  private readonly logs = new Map<string, number[]>();
  private readonly blockedUntil = new Map<string, number>();
  /** Keys whose window got its earlier client's requests (`earlierUse`): once each, even after a sweep drops the key's log. */
  private readonly seeded = new Set<string>();
  /** How a request before the block ends extends it (reference mode `prematureRetry`). */
  prematureRetry: 'extend' | 'extend-steep' = 'extend';

  constructor(
    private readonly windowMs: number,
    private readonly options: SlidingWindowOptions = {},
  ) {}

  /** Records a request (allowed or not) and decides it. */
  hit(key: string, limit: number, now: number): RateDecision {
    const log = this.live(key, now);
    if (this.options.earlierUse && !this.seeded.has(key)) {
      this.seeded.add(key);
      const n = Math.floor(limit * this.options.earlierUse);
      for (let i = 1; i <= n; i++) log.push(this.stamp(now - this.windowMs + (i * this.windowMs) / (n + 1)));
    }
    const blocked = this.blockedUntil.get(key);
    const early = blocked !== undefined && now < blocked;
    const allowed = !early && log.length < limit;
    log.push(this.stamp(now));
    if (log.length > limit) log.shift();
    let resetMs = log[0]! + this.windowMs;
    if (allowed) {
      this.blockedUntil.delete(key);
    } else {
      // The block ends exactly when the announced Retry-After elapses (holdUnrounded: when the wait itself does); the reset reports that moment.
      if (early) resetMs = Math.max(resetMs, blocked + (this.prematureRetry === 'extend-steep' ? Math.max(1000, blocked - now) : 1000));
      if (!this.options.holdUnrounded) resetMs = now + (retryAfterSeconds(resetMs, now) + (this.options.retryAfterPadS ?? 0)) * 1000;
      this.blockedUntil.set(key, resetMs);
    }
    const decision: RateDecision = { allowed, limit, remaining: Math.max(0, limit - log.length), resetMs };
    if (this.options.reset === 'window-free') {
      // The window is fully free once its newest request (this one) leaves; a 429 still waits only until `retryAtMs`.
      decision.resetMs = Math.max(resetMs, now + this.windowMs);
      if (!allowed) decision.retryAtMs = resetMs;
    }
    return decision;
  }

  private stamp(now: number): number {
    return this.options.wholeSeconds ? Math.ceil(now / 1000) * 1000 : now;
  }

  private live(key: string, now: number): number[] {
    let log = this.logs.get(key);
    if (!log) {
      if (this.logs.size >= SWEEP_THRESHOLD) this.sweep(now);
      log = [];
      this.logs.set(key, log);
    }
    while (log.length > 0 && log[0]! + this.windowMs <= now) log.shift();
    return log;
  }

  private sweep(now: number): void {
    for (const [key, log] of this.logs) {
      if (log.length === 0 || log[log.length - 1]! + this.windowMs <= now) this.logs.delete(key);
    }
    for (const [key, until] of this.blockedUntil) if (until <= now) this.blockedUntil.delete(key);
  }
}

interface FixedWindow {
  endMs: number;
  count: number;
  refused: boolean;
  /** Clients refused in this window (`premature: 'same-client'`). */
  refusedClients?: Set<string>;
}

/**
 * Fixed window counter. `clock` aligns windows to multiples of the window
 * length since the epoch; `first-request` starts a window at the first request
 * after the previous one ended.
 *
 * Early retry: the first refusal in a window reports the window's end. Every
 * further refusal before that end is a retry that came too soon: it extends the
 * end to `max(now + window, end + 1 s)` (`first-request`) or to the next clock
 * boundary after `now + window` (`clock`), and the window stays full. With
 * `premature: 'plus-second'` (reference mode `issuancePrematureRetry`) it moves the end by one
 * second only, the least a whole-second header shows; with `'same-client'` only a client refused
 * before in the window extends it (a request of another client is refused, the end unmoved).
 */
export class FixedWindowCounter {
  private readonly windows = new Map<string, FixedWindow>();

  constructor(
    private readonly windowMs: number,
    protected readonly limit: number,
    private readonly align: 'clock' | 'first-request',
    private readonly premature: 'restart' | 'plus-second' | 'same-client' = 'restart',
  ) {}

  /** `client`: who sent it, when known (only `premature: 'same-client'` reads it). */
  hit(key: string, now: number, client?: string): RateDecision {
    let w = this.windows.get(key);
    if (!w || now >= w.endMs) {
      if (!w && this.windows.size >= SWEEP_THRESHOLD) this.sweep(now);
      const start = this.align === 'clock' ? Math.floor(now / this.windowMs) * this.windowMs : now;
      w = { endMs: start + this.windowMs, count: 0, refused: false };
      this.windows.set(key, w);
    }
    if (w.count < this.limit) {
      w.count++;
      return { allowed: true, limit: this.limit, remaining: this.limit - w.count, resetMs: w.endMs };
    }
    const retried = this.premature !== 'same-client' || (client !== undefined && w.refusedClients?.has(client) === true);
    if (w.refused && retried) w.endMs = this.extendedEnd(w.endMs, now);
    w.refused = true;
    if (client !== undefined) (w.refusedClients ??= new Set()).add(client);
    return { allowed: false, limit: this.limit, remaining: 0, resetMs: w.endMs };
  }

  /** The window's end after a refusal that came before it (Retry rule 1: "extends the reset time"). */
  protected extendedEnd(endMs: number, now: number): number {
    if (this.premature === 'plus-second') return endMs + 1000;
    if (this.align === 'clock') return Math.ceil((now + this.windowMs) / this.windowMs) * this.windowMs;
    return Math.max(now + this.windowMs, endMs + 1000);
  }

  private sweep(now: number): void {
    for (const [key, w] of this.windows) if (now >= w.endMs) this.windows.delete(key);
  }
}

/** Whole seconds until `resetMs`, at least 1 (the `Retry-After` value). */
export function retryAfterSeconds(resetMs: number, now: number): number {
  return Math.max(1, Math.ceil((resetMs - now) / 1000));
}

/** `X-RateLimit-*` headers of a decision; the reset is a unix timestamp in whole seconds, rounded up. */
export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(d.limit),
    'X-RateLimit-Remaining': String(d.remaining),
    'X-RateLimit-Reset': String(Math.ceil(d.resetMs / 1000)),
  };
}
