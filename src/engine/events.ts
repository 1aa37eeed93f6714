/**
 * What a run publishes while it goes. The executor and the runtime emit; progress,
 * the result collector, the pacing figures (`pacingCollector`), the run-wide invariants
 * and the report writer (run-finished) subscribe. Subscribers know check tags and
 * outcomes, never particular check ids.
 */
import type { CheckTag } from './check.js';
import type { Slot } from './plan.js';
import type { RunStats } from './schedule.js';
import type { ExchangeFacts } from '../http/types.js';
import type { CheckResult, Exchange, Profile, RunResult } from './types.js';

/** A check as subscribers see it: no `run` function, no way to call it. */
export interface PlannedCheck {
  id: string;
  title: string;
  area: string;
  tags: readonly CheckTag[];
  slot: Slot;
  /** Rate windows the check must wait out when it runs (`CheckDefinition.waitWindows`), for the pacing bound. */
  waitWindows?: number;
}

export type RunEvent =
  | { type: 'run-started'; runId: string; profile: Profile; baseUrl: string; embedded: boolean; planned: readonly PlannedCheck[] }
  | { type: 'check-started'; check: PlannedCheck; index: number; total: number }
  | { type: 'exchange'; exchange: Exchange; facts: ExchangeFacts }
  | { type: 'wait'; reason: string; ms: number; client?: string }
  /** The token endpoint issued `client` a token (never the token itself): its exchange and expiry, epoch ms. */
  | { type: 'token-issued'; client: string; exchange: string; sentAt: number; expiresAt: number }
  | {
      type: 'check-finished';
      check: PlannedCheck;
      result: CheckResult;
      index: number;
      total: number;
      stats: RunStats;
      /** The check's early work (CheckDefinition.startEarly) ran beside the checks before it: its waits overlapped their pacing. */
      startedEarly?: boolean;
    }
  | {
      type: 'run-finished';
      results: readonly CheckResult[];
      stats?: RunStats;
      interrupted: boolean;
      setupError?: string;
      /** The run's result, as reporters consume it. */
      result: RunResult;
    };

export type RunEventType = RunEvent['type'];
export type EventOf<T extends RunEventType> = Extract<RunEvent, { type: T }>;
export type Subscriber = (event: RunEvent) => void | Promise<void>;

/**
 * A synchronous bus: `emit` calls every subscriber in subscription order; `emitAsync`
 * (for run-finished) awaits them. A subscriber that throws does not stop the run: its
 * error is kept and re-thrown by `drainErrors`.
 */
export class RunEvents {
  private readonly subscribers: Subscriber[] = [];
  private readonly errors: unknown[] = [];

  subscribe(fn: Subscriber): () => void {
    this.subscribers.push(fn);
    return () => {
      const i = this.subscribers.indexOf(fn);
      if (i !== -1) this.subscribers.splice(i, 1);
    };
  }

  /** Only events of one type. */
  on<T extends RunEventType>(type: T, fn: (event: EventOf<T>) => void | Promise<void>): () => void {
    return this.subscribe((e) => (e.type === type ? fn(e as EventOf<T>) : undefined));
  }

  emit(event: RunEvent): void {
    for (const fn of [...this.subscribers]) {
      try {
        const r = fn(event);
        if (r instanceof Promise) r.catch((e: unknown) => this.errors.push(e));
      } catch (e) {
        this.errors.push(e);
      }
    }
  }

  async emitAsync(event: RunEvent): Promise<void> {
    for (const fn of [...this.subscribers]) {
      try {
        await fn(event);
      } catch (e) {
        this.errors.push(e);
      }
    }
  }

  /** Errors thrown by subscribers so far (cleared). */
  drainErrors(): unknown[] {
    return this.errors.splice(0);
  }
}

export function plannedCheck(check: { id: string; title: string; area: string; tags?: readonly CheckTag[]; waitWindows?: number }, slot: Slot): PlannedCheck {
  return {
    id: check.id,
    title: check.title,
    area: check.area,
    tags: check.tags ?? [],
    slot,
    ...(check.waitWindows !== undefined ? { waitWindows: check.waitWindows } : {}),
  };
}
