/**
 * The Clinical Records FHIR Service in one place: what the suites and the reference
 * server know of it. The engine and the HTTP layer know none of it; the run path
 * passes SERVICE_BINDING / SERVICE_HTTP into them.
 */
// The API, its error catalogs, paths, scopes and protocol.
export { OPERATIONS, operationsFor, type OperationDef } from './api.js';
export { CATALOG_CODE_PATTERN, CATALOG_SYSTEM, GENERIC_CATALOG, PUBLIC_CATALOG, catalogEntry, type CatalogEntry } from './catalog.js';
export {
  PATHS,
  isFhirPath,
  isServicePath,
  isTokenEndpointPath,
  operationDefinitionPath,
  pathOf,
  resourcePath,
  type Release,
  type SpecInteraction,
} from './paths.js';
export { SCOPES, scopeOf } from './scopes.js';
export { coversUnderSomeReading, isScopeForm, letterVerdict, parseScope, type LetterVerdict, type ParsedScope } from './scope-letters.js';
export { SERVICE_HTTP, TOKEN_EXPIRED_CODE, isTokenExpired } from './http.js';
export { SERVICE_BINDING, discoverTokenUrl } from './run.js';
export { RATE_LIMIT_HEADERS, integerHeader, rateHeaders, rateLimitHints, retryAfterMs, type RateHeaders } from './rate-limit.js';

// The error format, the assertions and the run-wide rules on every exchange.
export {
  ISSUE_SEVERITIES,
  ISSUE_TYPES,
  catalogCodeOf,
  catalogEntryOf,
  catalogFindings,
  detailCodes,
  diagnosticsPrefix,
  firstIssue,
  formatFindings,
  isObject,
  issueCatalogCode,
  outcomeIssues,
  reportFindings,
  type ErrorSample,
  type OperationOutcomeIssue,
} from './errors.js';
export { asArray, bundleLink, bundleResources, expectError, expectSearchset, expectStatus, UUID_PATTERN, type ExpectedError } from './expect.js';
export { FHIR_BODY_REQUIREMENT } from './fhir-bodies.js';
export { CORRELATION_ID_DISTINCT_REQUIREMENT, ENCOUNTER_CLASS_REQUIREMENT, ENCOUNTER_STATUS_REQUIREMENT, META_VERSION_ID_REQUIREMENT } from './run-wide.js';
export { INVARIANTS, INVARIANT_REQUIREMENTS, exchangeFindings, judgeExchanges, runInvariants, type Invariant, type InvariantContext } from './invariants.js';

// Resources: bodies, the typed client, searches, comparisons, documents, tokens.
export {
  CATEGORY,
  RUN_TAG_SYSTEM,
  base64Of,
  documentBody,
  documentType,
  encounterBody,
  hasRunTag,
  inlineAttachment,
  minimalResource,
  newMedicationRequest,
  newRecordOf,
  runMeta,
  runTag,
  wholeSecondNow,
  type Json,
  type Resource,
} from './bodies.js';
export {
  DOCUMENT_REFERENCE,
  ENCOUNTER,
  FHIR_HEADERS,
  MEDICATION_REQUEST,
  READ_SCOPES,
  WRITE_SCOPES,
  checkValid,
  createDocument,
  createEncounter,
  createOwn,
  createResource,
  noCreatedId,
  refusedCreate,
  createdIdOf,
  expectCreated,
  expectCreatedId,
  expectResource,
  expectSuccess,
  isSuccess,
  outcomeSummary,
  postDocument,
  postEncounter,
  postMedicationRequest,
  postResource,
  putDocument,
  putEncounter,
  putMedicationRequest,
  putResource,
  randomId,
  readDocument,
  readEncounter,
  readMedicationRequest,
  readObject,
  readUrl,
  refusalProbe,
  searchDocuments,
  searchEncounters,
  searchMedicationRequests,
  searchResources,
  type ResourceKind,
  type WriteOptions,
} from './resources.js';
export {
  DATE_PREFIXES,
  checkFiltered,
  codingMatchesToken,
  codingsOf,
  firstCodeOf,
  collect,
  dateFilter,
  dayCompares,
  daysOf,
  idOf,
  referencedId,
  searchUrl,
  tokenOf,
  type Collected,
  type DatePrefix,
} from './search.js';
export {
  describeDifferences,
  isReferenceDisplay,
  sameResource,
  sameScalar,
  serverOwnedKey,
  writtenIsRead,
  type CompareOptions,
  type Comparison,
  type Difference,
} from './compare.js';
export { checkSameMeaning } from './compare-check.js';
export { DOCUMENT_TYPES, documentOf, notOf, smallDocument, type DocumentType } from './documents.js';
export {
  baseProfileUrl,
  bodyProblems,
  derivedBody,
  fhirResourceSchema,
  profileRequiredElements,
  writeBody,
  type BodySource,
} from './derived-body.js';
export { grantedScopes, tokenFor } from './tokens.js';
export { DISCOVERY_SCOPE, discoveryDocument, type DiscoveryDocument } from './discovery-documents.js';

// Rate and issuance limits: judging timed requests against a window.
export {
  certainlyBefore,
  clearlyBeforeWait,
  earlyRetryDelayMs,
  firstRefusalCandidates,
  judgeIssuanceBurst,
  judgeIssuanceCeiling,
  judgeIssuanceFloor,
  othersThan,
  judgeKeyBurst,
  judgeRemainingSteps,
  judgeRetryAfterValue,
  judgeRetryAfterWait,
  judgeSlide,
  judgeThrottled,
  mayLeaveWithin,
  maxServedWithinWindow,
  possiblyBefore,
  refusedBy,
  served,
  leaveBand,
  leaveLateMs,
  windowSlackMs,
  type BurstFigures,
  type ThrottledFigures,
  type IssuanceCeilingFigures,
  type IssuanceCeilingInput,
  type KeyBurstInput,
  type RemainingFigures,
  type RemainingInput,
  type SlideFigures,
  type SlideInput,
  type Timed,
  type Verdict,
  type WaitFigures,
  type WaitInput,
} from './limits/judge.js';
export {
  ISSUANCE_EPISODE_CHECKS,
  ISSUANCE_RECOVERY_TAGS,
  issued,
  issuanceEpisode,
  issuanceRecovery,
  issuanceAfter,
  issuanceEarlyRetry,
  advisedAt,
  type EarlyRetry,
  ISSUANCE_EARLY,
  timings,
  type IssuanceBurst,
  type IssuanceEpisode,
  type Recovery,
  type TokenHit,
} from './limits/issuance.js';

// The surfaces a request-wide rule governs (every published release and resource family).
export { keyProbeScopes, onSurface, surfaceLabel, surfaceProbeUrl, surfaceScopes, surfacesOf, type Surface } from './surfaces.js';
export {
  type Attempt,
  type ContractSource,
  type Definition as UploadDefinition,
  describeForm,
  patientChannel,
  publishedQuery,
  queryTemplate,
  requireContract,
  resolveUpload,
  type SendOptions as UploadSendOptions,
  sendUpload,
  type UploadContract,
  type UploadForm,
  type UploadResolution,
  uploadTarget,
} from './upload-contract.js';
