import { createFhirValidator } from './validator.js';
import type { FhirValidator } from './types.js';

export type { FhirValidator, Release, SchemaIssue } from './types.js';
export type { FhirValidatorOptions } from './validator.js';
export { createFhirValidator, DEFAULT_TYPES, MAX_ISSUES } from './validator.js';
export { formatIssue } from './issues.js';

let shared: FhirValidator | undefined;

/** The process-wide validator with the default types. */
export function sharedFhirValidator(): FhirValidator {
  shared ??= createFhirValidator();
  return shared;
}
