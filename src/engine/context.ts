/**
 * What one check produced while it ran (evidence, findings, observations, created
 * resources), and the signals that end a check. The context a check sees is
 * declared with the check (`CheckContext` in check.ts).
 */
import { type CheckFailure, SkipSignal } from '../errors.js';
import type { Exchange, Finding, LedgerEntry, Observation } from './types.js';

export type { CheckContext } from './check.js';

/** Collects what one check produced. */
export class CheckRecorder {
  readonly evidence: Exchange[] = [];
  readonly findings: Finding[] = [];
  readonly observations: Observation[] = [];
  readonly created: LedgerEntry[] = [];
  /** Requests sent while the check ran (its own, and the control request the outcome policy sent for it). */
  requests = 0;
  /** Requests answered with an exchange another check made (the run's shared exchanges). */
  shared = 0;
  /** Of `requests`, those to the token endpoint. */
  tokenRequests = 0;
  /** Of `requests`, those made with the main client's key (the paced key a run's wall time depends on). */
  mainKeyRequests = 0;
  /** Of `shared`, exchanges made with the main client's key. */
  sharedMainKey = 0;
  /** Set when the check's time budget has passed: why it may send nothing more. */
  closed?: string;
  /** Set while the check runs within a budget (src/engine/execute.ts): stops its clock for a wait of the run's own. */
  budget?: { pauseFor(wait: Promise<unknown>): void };
  private readonly held = new Set<string>();

  /**
   * `sent`: the check's own request; `attached`: an exchange made outside the check (an episode's,
   * the expiry probe's); `shared`: an exchange another check made, shared with this one.
   */
  addExchange(ex: Exchange, how: 'sent' | 'attached' | 'shared' = 'sent'): void {
    if (how === 'sent') this.requests++;
    else if (how === 'shared') {
      this.shared++;
      if (ex.client === 'main') this.sharedMainKey++;
    }
    this.held.add(ex.id);
    // Keep evidence bounded: the first 40 and the last 10 exchanges.
    if (this.evidence.length < 50) this.evidence.push(ex);
    else this.evidence.splice(40, 1), this.evidence.push(ex);
  }

  /** Whether this check already holds the exchange (sent, attached or shared). */
  holds(exchangeId: string): boolean {
    return this.held.has(exchangeId);
  }
}

export function failureFrom(e: CheckFailure): Finding {
  return { message: e.message, ...e.details };
}

export function throwSkip(reason: string): never {
  throw new SkipSignal(reason);
}
