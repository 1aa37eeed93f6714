/**
 * The requirements catalog: every testable statement of the spec as data
 * (suites/requirements.json), and coverage of it by the registered checks.
 */
export type { Area, Requirement } from './types.js';
export { AREAS, CROSS_CUTTING_SUITES, REQUIREMENT_ONLY_AREAS, suiteAreas } from './types.js';
export { REQUIREMENT_ID_PATTERN } from './schema.js';
export { REQUIREMENTS_PATH, loadRequirements, parseRequirements, requirementById } from './load.js';
export type { CoverageReport } from './coverage.js';
export { coverage } from './coverage.js';
export { renderCoverageMatrix } from './matrix.js';
export { SHARED_SPEC_PATH, SPEC_PATH, normalizeQuote, specSha256, specText } from './spec.js';
