/** The Encounter suite (R4): read shape and contained resources, search parameters, create and update. */
import { type CheckDefinition, coveringTokens } from '../../src/engine/index.js';
import { fixtureRoundTripChecks } from './fixture-round-trips.js';
import { readChecks } from './read-checks.js';
import { roundTripChecks } from './round-trips.js';
import { searchChecks } from './search-checks.js';
import { combinationChecks } from './combination-checks.js';
import { writeChecks } from './write-checks.js';

export const checks: CheckDefinition[] = coveringTokens([
  ...readChecks,
  ...searchChecks,
  ...writeChecks,
  ...roundTripChecks,
  ...fixtureRoundTripChecks,
  ...combinationChecks,
]);

export default checks;
