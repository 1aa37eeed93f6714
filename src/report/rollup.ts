/**
 * Requirement verdict from the outcomes of its checks.
 *
 * Precedence: fail > error > pass > observation > skip. A single failing check
 * fails the requirement; an error means the requirement could not be decided
 * and outranks passes, because a pass elsewhere does not prove the rule; any
 * pass beats observations and skips. With no check at all the requirement is
 * `untested`.
 */
import type { Outcome } from '../engine/types.js';
import type { RequirementOutcome } from './types.js';

const PRECEDENCE: readonly Outcome[] = ['fail', 'error', 'pass', 'observation', 'skip'];

export function rollupRequirement(outcomes: Outcome[]): RequirementOutcome {
  for (const outcome of PRECEDENCE) if (outcomes.includes(outcome)) return outcome;
  return 'untested';
}
