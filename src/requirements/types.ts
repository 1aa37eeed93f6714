import type { Level } from '../engine/types.js';

/** The areas a requirement id may start with (`<area>.<slug>`). */
export const AREAS = [
  'discovery',
  'auth',
  'token-lifetime',
  'issuance-limit',
  'scopes',
  'tenancy',
  'errors',
  'catalog',
  'pagination',
  'rate-limit',
  'versioning',
  'medication-request',
  'encounter',
  'document-reference',
  'headers',
  'media-type',
  'audit',
  'retry',
  'events',
  'limits',
  'general',
] as const;

export type Area = (typeof AREAS)[number];

/** One statement of the spec, as listed in suites/requirements.json. */
export interface Requirement {
  /** `<area>.<kebab-slug>`; stable, never renumbered. */
  id: string;
  area: string;
  /** Heading path in the spec, e.g. `Endpoints > Pagination (all search endpoints)`. */
  section: string;
  /** Verbatim substring of the spec (backticks and whitespace aside). */
  text: string;
  level: Level;
  testable: boolean;
  /** Why no black-box check can observe it; present exactly when `testable` is false. */
  reason?: string;
  /** Readings accepted where the spec is ambiguous, and how a check observes the rule. */
  notes?: string;
}
