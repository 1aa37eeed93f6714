/**
 * MedicationRequest (R4) conformance, and the resource conventions checked on
 * MedicationRequests (area `general`). Conditional updates and versions are in
 * suites/versioning; scope, 401 and 403 checks are generated elsewhere.
 */
import type { CheckDefinition } from '../../src/engine/index.js';
import { conventionChecks } from './conventions.js';
import { readSearchChecks } from './read-search.js';
import { roundTripChecks } from './round-trips.js';
import { stateChecks } from './state-rules.js';
import { writeChecks } from './writes.js';

export const checks: CheckDefinition[] = [...readSearchChecks, ...writeChecks, ...roundTripChecks, ...stateChecks, ...conventionChecks];

export default checks;
