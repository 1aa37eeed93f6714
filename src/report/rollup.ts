/**
 * Requirement verdict from the outcomes of its checks (docs/outcome-policy.md).
 *
 * Observation checks aside: a failing check fails the requirement; otherwise an
 * error means it could not be decided; it passes only when ALL its checks
 * passed; some passed and some skipped is `partial` (not fully verified); all
 * skipped is `skip`. A requirement with observation checks only is
 * `observation`; with no check at all, `untested`.
 */
import type { Outcome } from '../engine/types.js';
import type { RequirementOutcome } from './types.js';

export function rollupRequirement(outcomes: Outcome[]): RequirementOutcome {
  if (outcomes.length === 0) return 'untested';
  const judged = outcomes.filter((o) => o !== 'observation');
  if (judged.length === 0) return 'observation';
  if (judged.includes('fail')) return 'fail';
  if (judged.includes('error')) return 'error';
  if (judged.every((o) => o === 'pass')) return 'pass';
  return judged.includes('pass') ? 'partial' : 'skip';
}
