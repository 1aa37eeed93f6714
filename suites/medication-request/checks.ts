/**
 * MedicationRequest (R4) conformance. The resource conventions checked on
 * MedicationRequests are suites/general; conditional updates and versions are in
 * suites/versioning; scope, 401 and 403 checks are generated elsewhere.
 */
import { type CheckDefinition, coveringTokens } from '../../src/engine/index.js';
import { fixtureRoundTripChecks } from './fixture-round-trips.js';
import { readSearchChecks } from './read-search.js';
import { roundTripChecks } from './round-trips.js';
import { stateChecks } from './state-rules.js';
import { writeChecks } from './writes.js';
import { combinationChecks } from './combination-checks.js';

export const checks: CheckDefinition[] = coveringTokens([
  ...readSearchChecks,
  ...writeChecks,
  ...roundTripChecks,
  ...stateChecks,
  ...fixtureRoundTripChecks,
  ...combinationChecks,
]);

export default checks;
