/**
 * The Clinical Records FHIR Service in one place: what the suites and the reference
 * server know of it. The engine and the HTTP layer know none of it; the run path
 * passes SERVICE_BINDING / SERVICE_HTTP into them.
 */
export { OPERATIONS, operationsFor, type OperationDef } from './api.js';
export { CATALOG_CODE_PATTERN, CATALOG_SYSTEM, GENERIC_CATALOG, PUBLIC_CATALOG, catalogEntry, type CatalogEntry } from './catalog.js';
export {
  ISSUE_SEVERITIES, ISSUE_TYPES, catalogCodeOf, catalogEntryOf, catalogFindings, detailCodes, diagnosticsPrefix, firstIssue, formatFindings,
  isObject, issueCatalogCode, outcomeIssues, type ErrorSample, type OperationOutcomeIssue,
} from './errors.js';
export { asArray, bundleLink, bundleResources, expectError, expectSearchset, expectStatus, UUID_PATTERN, type ExpectedError } from './expect.js';
export { FHIR_BODY_REQUIREMENT } from './fhir-bodies.js';
export { SERVICE_HTTP, TOKEN_EXPIRED_CODE, isTokenExpired } from './http.js';
export { INVARIANTS, INVARIANT_REQUIREMENTS, exchangeFindings, judgeExchanges, runInvariants, type Invariant, type InvariantContext } from './invariants.js';
export { PATHS, isFhirPath, isServicePath, isTokenEndpointPath, operationDefinitionPath, pathOf, resourcePath, type Release, type SpecInteraction } from './paths.js';
export { RATE_LIMIT_HEADERS, integerHeader, rateHeaders, rateLimitHints, retryAfterMs, type RateHeaders } from './rate-limit.js';
export { SERVICE_BINDING, discoverTokenUrl } from './run.js';
export { SCOPES, scopeOf } from './scopes.js';
