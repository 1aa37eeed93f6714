/**
 * What one check produced while it ran (evidence, findings, observations, created
 * resources), and the signals that end a check. The context a check sees is
 * declared with the check (`CheckContext` in check.ts).
 */
import { CheckFailure, SkipSignal } from '../errors.js';
import type { Exchange, Finding, LedgerEntry, Observation } from './types.js';

export type { CheckContext } from './check.js';

/** Collects what one check produced. */
export class CheckRecorder {
  readonly evidence: Exchange[] = [];
  readonly findings: Finding[] = [];
  readonly observations: Observation[] = [];
  readonly created: LedgerEntry[] = [];
  requests = 0;
  /** Set when the check's time budget has passed: why it may send nothing more. */
  closed?: string;

  addExchange(ex: Exchange): void {
    this.requests++;
    // Keep evidence bounded: the first 40 and the last 10 exchanges.
    if (this.evidence.length < 50) this.evidence.push(ex);
    else this.evidence.splice(40, 1), this.evidence.push(ex);
  }
}

export function failureFrom(e: CheckFailure): Finding {
  return { message: e.message, ...e.details };
}

export function throwSkip(reason: string): never {
  throw new SkipSignal(reason);
}
