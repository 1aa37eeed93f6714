/**
 * Client-side limiter for token issuance ("20 requests per minute per source IP; 1-minute fixed window").
 *
 * A sliding log: each request holds a slot from when it is sent until `windowMs + marginMs` after its
 * response arrived (in-flight requests hold theirs open-ended). The target counts a request somewhere
 * between send and response, so never more than `limit` requests fall in ANY interval of `windowMs`
 * of the target's clock: safe for a sliding window and for either fixed-window alignment. The margin
 * absorbs coarse (whole-second) timestamps on the target.
 */
import { ConformanceError } from '../errors.js';

export interface IssuanceLimiterOptions {
  limit: number;
  windowMs: number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  onWait?: (info: { reason: string; ms: number }) => void;
}

/** Safety margin added to the window: 5 % of it, at most 1 s. */
export function safetyMarginMs(windowMs: number): number {
  return Math.min(1000, Math.ceil(windowMs * 0.05));
}

/** Upper bound on wait rounds for one acquisition (each round sleeps or awaits a completion). */
const MAX_WAIT_ROUNDS = 10_000;

interface Slot {
  /** When the response arrived; Infinity while in flight. */
  end: number;
}

export class IssuanceLimiter {
  private readonly slots: Slot[] = [];
  private readonly holdMs: number;
  private blockedUntil = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private completion: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(private readonly opts: IssuanceLimiterOptions) {
    this.holdMs = opts.windowMs + safetyMarginMs(opts.windowMs);
  }

  /**
   * Waits (when `pace`) until one more request fits, then reserves a slot. Call the returned
   * function when the response (or the failure) arrives. Unpaced requests still take a slot.
   */
  acquire(pace = true): Promise<() => void> {
    const turn = this.queue.then(() => this.reserve(pace));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  /** Counts a token request sent elsewhere (another client of the same source), answered at `answeredAt`. */
  record(answeredAt: number): void {
    this.slots.push({ end: answeredAt });
  }

  /** Blocks issuance until `untilMs` (a 429's Retry-After). */
  blockUntil(untilMs: number): void {
    this.blockedUntil = Math.max(this.blockedUntil, untilMs);
  }

  /** Token requests that could be sent now without waiting (0 while a Retry-After blocks issuance). */
  room(): number {
    const now = this.opts.now();
    if (this.blockedUntil > now) return 0;
    this.prune(now);
    return Math.max(0, this.opts.limit - this.slots.length);
  }

  /** How long a token request would wait now for a slot (0 when there is room; an in-flight slot counts as freeing after a window). */
  waitMs(): number {
    const now = this.opts.now();
    if (this.blockedUntil > now) return this.blockedUntil - now;
    this.prune(now);
    if (this.slots.length < this.opts.limit) return 0;
    const earliest = Math.min(...this.slots.map((s) => (s.end === Infinity ? now : s.end)));
    return Math.max(0, earliest + this.holdMs - now);
  }

  private prune(now: number): void {
    for (let i = this.slots.length - 1; i >= 0; i--) {
      if (this.slots[i]!.end + this.holdMs <= now) this.slots.splice(i, 1);
    }
  }

  private async reserve(pace: boolean): Promise<() => void> {
    for (let round = 0; pace; round++) {
      if (round >= MAX_WAIT_ROUNDS) throw new ConformanceError('ERR_INTERNAL', 'token issuance limiter did not free a slot');
      const now = this.opts.now();
      this.prune(now);
      if (this.blockedUntil > now) {
        await this.wait('token endpoint Retry-After', this.blockedUntil - now);
        continue;
      }
      if (this.slots.length < this.opts.limit) break;
      // The slot that frees first decides; an in-flight one frees only after its response.
      const earliest = Math.min(...this.slots.map((s) => s.end));
      if (earliest === Infinity) await this.nextCompletion();
      else await this.wait('token issuance limit', earliest + this.holdMs - now);
    }
    const slot: Slot = { end: Infinity };
    this.slots.push(slot);
    return () => {
      if (slot.end !== Infinity) return;
      slot.end = this.opts.now();
      this.completion?.resolve();
      this.completion = undefined;
    };
  }

  private async wait(reason: string, ms: number): Promise<void> {
    this.opts.onWait?.({ reason, ms });
    await this.opts.sleep(ms);
  }

  private nextCompletion(): Promise<void> {
    if (!this.completion) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.completion = { promise, resolve };
    }
    return this.completion.promise;
  }
}
