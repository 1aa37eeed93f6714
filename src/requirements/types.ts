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

/**
 * The one taxonomy: a requirement area, a suite folder (suites/<area>/, its checks
 * `<area>.<slug>`) and a fault file (src/reference/faults/<area>.ts) share the name.
 * These requirement areas have no folder of their own: their rules are checked where
 * the answer is, or cannot be checked against a target.
 */
export const REQUIREMENT_ONLY_AREAS: Readonly<Record<string, string>> = {
  catalog: 'each catalog row is checked by the suite of the endpoint that answers it (errors, auth, scopes, the resource suites, rate-limit, issuance-limit)',
  limits: 'the page size is checked by pagination, the document size by document-reference; the rest is not shown',
  retry: "the client's own retry rules: the suite follows them (src/http/retry.ts), no target answer shows them",
  audit: 'not observable through the API (the audit trail is not readable in v1)',
  events: 'outbound events and inbound webhooks are not shown',
};

/** Suite folders that own no requirement area: they check requirements of every area. */
export const CROSS_CUTTING_SUITES: Readonly<Record<string, string>> = {
  generated: "checks generated from the target's OpenAPI: each operation's scope, 401, 403 and invalid bodies",
  invariants: 'the run-wide rules every exchange keeps, reported last',
};

/** The areas that have a suite folder and a fault file. */
export function suiteAreas(): string[] {
  return [...AREAS.filter((a) => !(a in REQUIREMENT_ONLY_AREAS)), ...Object.keys(CROSS_CUTTING_SUITES)].sort();
}

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
