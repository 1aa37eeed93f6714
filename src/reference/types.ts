/**
 * Contracts inside the embedded reference server: options (knobs), the
 * behaviour switches that alternative-conformant modes and faults flip, and the
 * handler interface between the HTTP core and the resource modules.
 */
import type { OperationDef } from '../service/api.js';
import type { JWK } from 'jose';
import { SIGNING_ALGS, type SigningAlg } from '../auth/algorithms.js';

/** Every knob a fast test needs; defaults are the spec's values. */
export interface ReferenceLimits {
  /** Per-key requests per window (spec default 60). */
  perKeyPerWindow: number;
  /** Per-organization requests per window (spec: not shown; reference default 600). */
  perOrgPerWindow: number;
  /** Sliding window length for per-key and per-org limits, ms (spec 60000). */
  windowMs: number;
  /** Token issuances per window per source IP (spec 20). */
  tokenIssuancePerWindow: number;
  /** Fixed window for token issuance, ms (spec 60000). */
  tokenWindowMs: number;
  /** Access token lifetime, seconds (spec 300). */
  tokenLifetimeSec: number;
  /** Document size maximum, bytes: `$upload` and inline `content[].attachment.data` (spec: not shown; reference 1 MiB). */
  documentMaxBytes: number;
  /** Maximum JSON request body, bytes (reference choice 1 MiB). */
  maxBodyBytes: number;
  /** Encounter registration window: period.start at most this many days in the past or future (spec: not shown; reference 30). */
  registrationWindowDays: number;
  /** When false, no rate limit is enforced (headers still sent). For benchmarks. */
  enforceRateLimits: boolean;
}

export const DEFAULT_LIMITS: ReferenceLimits = {
  perKeyPerWindow: 60,
  perOrgPerWindow: 600,
  windowMs: 60_000,
  tokenIssuancePerWindow: 20,
  tokenWindowMs: 60_000,
  tokenLifetimeSec: 300,
  documentMaxBytes: 1024 * 1024,
  maxBodyBytes: 1024 * 1024,
  registrationWindowDays: 30,
  enforceRateLimits: true,
};

/**
 * Choices the spec leaves open. Every combination conforms; the suite must pass
 * in each. The defaults are the reference's documented choices.
 */
export interface ReferenceModes {
  /**
   * Success status of create and update (MedicationRequest, Encounter, DocumentReference; "not shown"):
   * 201 or 200 with Location, or 202 (the resource in the body and Location all the same).
   */
  createStatus: 200 | 201 | 202;
  /** Success status of update: 200, 201, or 202 with the updated resource in the body. */
  updateStatus: 200 | 201 | 202;
  /** `_count` over 100: clamp to 100, or refuse with 400 HPB-00101. */
  countOver100: 'clamp' | 'reject';
  /** Cursor encoding: opaque base64url JSON, or an opaque random handle. */
  cursorEncoding: 'base64' | 'handle';
  etag: 'weak' | 'strong';
  /** Extra fields in the token response besides access_token. */
  tokenResponseExtras: boolean;
  /** Ordering tie-break between records with the same timestamp. */
  tieBreak: 'uuid-asc' | 'uuid-desc';
  /** 409 code for a signed/cancelled parent prescription. */
  signedPrescriptionCode: 'HPB-00114' | 'HPB-00103';
  /** Status used with HPB-00101 for semantic validation failures. */
  validationStatus: 400 | 422;
  /** Code for an unknown DocumentReference id. */
  unknownDocumentCode: 'HPB-00102' | 'HPB-00118';
  /** Path segment of the upload operation, under /fhir/R5/DocumentReference/{id}/. */
  uploadPath: '$upload' | '$binary-upload';
  /**
   * `/fhir/R5/metadata` (not required by the spec): `full` = interactions and `$upload` with
   * scope extensions, path, documentation and a served OperationDefinition; `bare` = interactions
   * and the operation name only; `none` = 404.
   */
  r5Capability: 'full' | 'bare' | 'none';
  /**
   * `$upload` level and payload (spec: not shown). instance: a new version of
   * `/fhir/R5/DocumentReference/{id}`; type: `POST /fhir/R5/DocumentReference/$upload` creates one.
   * raw: the document bytes with their media type as Content-Type; binary: a FHIR Binary;
   * parameters: a FHIR Parameters (`document` valueAttachment, at type level `subject`
   * valueReference); document-reference: a DocumentReference carrying the document inline.
   * type-query-raw / type-query-binary: type level, the patient in the query (`?patient=<uuid>`),
   * the body raw bytes or a Binary (published in the R5 CapabilityStatement and OperationDefinition).
   */
  uploadContract:
    | 'instance-raw'
    | 'instance-binary'
    | 'instance-parameters'
    | 'type-parameters'
    | 'type-document-reference'
    | 'type-query-raw'
    | 'type-query-binary';
  /** Fixed issuance window aligned to the clock minute, or starting at the first request. */
  issuanceWindow: 'clock' | 'first-request';
  /**
   * How far a token request before the issuance 429's Retry-After elapses extends the reset (Retry rule 1;
   * the amount is not shown): the window restarts at that request (or the clock window after it), or
   * the reset moves by one second, the least whole-second headers show; or (`same-client`) it restarts
   * only when the client refused before retries (another client's request is refused, the reset unmoved).
   */
  issuancePrematureRetry: 'restart' | 'plus-second' | 'same-client';
  /** Scope outside the client's grant: refuse the request, or narrow to the granted subset. */
  excessScope: 'refuse' | 'narrow';
  /** Merged/deceased patients refuse updates too, or creates only. */
  patientBlockOn: 'create' | 'create-and-update';
  /**
   * How far a request before Retry-After elapses extends a throttled key's reset (Retry rule 1;
   * the amount is not shown): by at least one second, or steeply, doubling the remaining wait.
   */
  prematureRetry: 'extend' | 'extend-steep';
  /** Kind of the main client's key (the spec: keys are either sandbox or production). */
  mainKeyKind: 'sandbox' | 'production';
  /**
   * How smart-configuration spells the token endpoint: `{base}/auth/token`, or with a trailing
   * slash (`/auth/token/` is then served too, and either URL is accepted as the assertion's aud).
   */
  tokenEndpointForm: 'canonical' | 'trailing-slash';
  /**
   * Token requests: `strict` refuses a missing or other grant_type / client_assertion_type and
   * non-form bodies (400 HPB-00101); `lenient` ignores both parameters and reads a JSON body too.
   * The spec describes what clients send, not that anything else is refused.
   */
  tokenRequestParsing: 'strict' | 'lenient';
  /** Content-Type of /openapi.json (not stated): application/json, or text/plain (the body is JSON either way). */
  openapiMediaType: 'application/json' | 'text/plain';
  /**
   * FHIR issue code of errors other than 400 HPB-00101 (`invalid`) and 429 HPB-00105 (`throttled`),
   * which the spec does not show: derived from the status, or `processing` for all.
   */
  issueCodes: 'by-status' | 'processing';
  /**
   * Errors with a generic code the endpoint tables do not list (SVC-00001/2/3/7): with their
   * catalog code, or as plain-text diagnostics without one ("some handlers write plain-text diagnostics").
   */
  genericErrors: 'coded' | 'plain-text';
  /**
   * Per-key X-RateLimit-Reset ("Unix timestamp at which the window resets"): when the
   * oldest request leaves (a slot frees while the window is full), or when the newest
   * leaves (the window is fully free).
   */
  rateLimitReset: 'slot-frees' | 'window-free';
  /**
   * Per-key 429 Retry-After: the wait rounded up to whole seconds, or one second more (the key is held
   * that long); or `rounded-up`: the wait rounded up while the key is held only for the wait itself, so
   * a request in the announced wait's last fraction of a second is served.
   */
  retryAfter: 'exact' | 'plus-one' | 'rounded-up';
  /**
   * How the per-key window keeps time (a "1-minute sliding window"; its resolution is not shown):
   * to the millisecond, or `coarse`: to the whole second, rounded up (a request stays counted until
   * the end of its second a minute later), so a slot frees up to a second after a client's own
   * count says it does.
   */
  keyWindowAccounting: 'exact' | 'coarse';
  /**
   * What a key's window holds when the run first uses the key: nothing, or `earlier-run`: requests of
   * an earlier client of the key (a run that ended a moment ago), three tenths of the key's limit spread
   * over the window before that first request, which leave during the run's first window. A state, not
   * a choice of the spec: the suite must give the same verdicts.
   */
  keyWindowAtStart: 'empty' | 'earlier-run';
  /**
   * The time search results are ordered by ("Ordering is by time and UUID", which time not shown): the
   * creation time (immutable, not exposed), the resource's own time (authoredOn, period.start, date; the
   * creation time when absent), or meta.lastUpdated.
   */
  orderBy: 'created' | 'resource-time' | 'last-updated';
  /** Oldest first, or newest first (the direction is not shown either). */
  orderDirection: 'ascending' | 'descending';
  /** Array order of Encounter.diagnosis (ranks are always 1 primary, 2.. secondaries in stored order): stored order, or reversed. */
  diagnosisOrder: 'stored' | 'reversed';
  /**
   * `/openapi.json`, smart-configuration and jwks.json (authentication "not stated"): served to
   * anyone, or only with a valid bearer token (401 otherwise; the request then counts against the
   * client's key like any authenticated one). `/fhir/R4/metadata` ("none") stays open either way.
   */
  discoveryAuth: 'none' | 'required';
  /**
   * DocumentReference fields are not shown: a document sent inline (`attachment.data`) is kept
   * inline, or stored apart and emitted as `attachment.url` with its `size` and SHA-1 `hash` (no `data`).
   */
  attachmentStorage: 'inline' | 'url';
  /**
   * The algorithm of the main client's key (the spec names none): ES256 (its P-256 test key,
   * fixtures/reference/keys/conformance-main.es256.test-key.private.jwk.json; signing and verifying
   * cost a tenth of P-384's, about 0.25 s of a quick run's 100 token requests), ES384 (the fixture
   * key, SMART's usual choice), or a test key of another algorithm
   * (`conformance-main.<alg>.test-key.private.jwk.json`), registered under its own kid and named in the target config.
   */
  mainKeyAlg: SigningAlg;
  /**
   * How `/openapi.json` is written (the OpenAPI specification allows both): `absolute`, one absolute
   * server URL and full paths; `servers-relative`, a relative server URL with a variable (and a
   * second entry), paths relative to it, the R5 surface under per-path and per-operation `servers`,
   * components `$ref`'d, path-level parameters and `x-service-scope` on single-operation path items.
   */
  openapiForm: 'absolute' | 'servers-relative';
  /**
   * Narrative (FHIR lets a server generate it): none, or a `text` regenerated from the stored
   * resource on every write (the client's `text` is not kept), on every resource answered.
   */
  narrative: 'none' | 'regenerate';
  /** References as written, or with a `display` the server adds where the client sent none. */
  referenceDisplay: 'as-written' | 'inject';
  /**
   * Instants (date-times with a zone) as stored (as the client wrote them), rewritten in UTC with
   * milliseconds (`2026-05-01T16:15:00.000Z`), or at a -06:00 offset: the same instant either way.
   */
  instantFormat: 'as-stored' | 'utc-millis' | 'offset';
  /** JSON answers compact, or pretty-printed (two-space indentation). */
  jsonLayout: 'compact' | 'pretty';
  /**
   * HTTP content coding of answers (not stated; HTTP lets a server choose): none, or gzip
   * (`Content-Encoding: gzip`, `Vary: Accept-Encoding`) whenever the request's Accept-Encoding allows it.
   */
  contentEncoding: 'identity' | 'gzip';
  /**
   * DocumentReference on R4 (not in the spec, which serves it on R5): not served, or mirrored with
   * read, search, create and update, published in the OpenAPI document and the R4 CapabilityStatement:
   * `writes` with a request schema of its fields, `writes-untyped` with one that names only the
   * resourceType (the client derives the rest from the HL7 FHIR R4 schema).
   */
  r4DocumentReference: 'none' | 'writes' | 'writes-untyped';
  /**
   * Observation on R4 (not in the spec): not served, or served with read, create and update,
   * published in the OpenAPI document (a request schema naming only the resourceType) and the R4
   * CapabilityStatement, with scopes `system/Observation.rs` / `.cru` granted to every fixture client.
   */
  r4Observation: 'none' | 'writes';
  /**
   * Claims of issued access tokens (the token's content is not shown; jwks.json verifies it):
   * `full` states the grant (scope, client_id, org, key_kind); `minimal` only iss, sub, aud, iat,
   * exp and jti, the grant kept on the server by jti.
   */
  accessTokenClaims: 'full' | 'minimal';
  /**
   * The form of issued access tokens (the spec shows none; jwks.json verifies them): `jwt`, a signed
   * claim set; `opaque`, a JWS over a random handle (no claim set: not a JWT, nothing to read), the
   * grant, expiry and audience kept on the server by the handle.
   */
  accessTokenFormat: 'jwt' | 'opaque';
  /**
   * A token request's `resource` parameter (RFC 8707; the spec names none): `release`, naming the R4
   * or R5 base, gets a token for that release only (its `aud` that base; without it, the service's
   * `<base>/fhir`, valid on both); `ignored`, the service's token whatever it names.
   */
  resourceIndicator: 'release' | 'ignored';
  /**
   * Status of a stale If-Match on Encounter and DocumentReference updates ("conditional updates use
   * If-Match"; the 409 HPB-00103 is stated for MedicationRequest only): 409 HPB-00103, or HTTP's 412.
   */
  staleIfMatchOtherTypes: 409 | 412;
  /**
   * A write whose body refers to no record of the caller's organization (a subject, encounter or
   * participant that does not exist, or exists in another organization: the same to the caller; the
   * spec shows no status for a write's reference): `refused`, 400/422 HPB-00101 (validationStatus);
   * `not-found`, 404 HPB-00102 ("An id that does not exist in the caller's organization gives 404");
   * `unchecked`, references are not resolved at all and the write is accepted.
   */
  unresolvedReference: 'refused' | 'not-found' | 'unchecked';
}

export const DEFAULT_MODES: ReferenceModes = {
  createStatus: 201,
  updateStatus: 200,
  countOver100: 'clamp',
  cursorEncoding: 'base64',
  etag: 'weak',
  tokenResponseExtras: true,
  tieBreak: 'uuid-asc',
  signedPrescriptionCode: 'HPB-00114',
  validationStatus: 422,
  unknownDocumentCode: 'HPB-00118',
  uploadPath: '$upload',
  r5Capability: 'full',
  uploadContract: 'instance-raw',
  issuanceWindow: 'first-request',
  issuancePrematureRetry: 'restart',
  excessScope: 'refuse',
  patientBlockOn: 'create-and-update',
  prematureRetry: 'extend',
  mainKeyKind: 'sandbox',
  tokenEndpointForm: 'canonical',
  tokenRequestParsing: 'strict',
  openapiMediaType: 'application/json',
  issueCodes: 'by-status',
  genericErrors: 'coded',
  rateLimitReset: 'slot-frees',
  retryAfter: 'exact',
  keyWindowAccounting: 'exact',
  keyWindowAtStart: 'empty',
  orderBy: 'created',
  orderDirection: 'ascending',
  diagnosisOrder: 'stored',
  discoveryAuth: 'none',
  attachmentStorage: 'inline',
  mainKeyAlg: 'ES256',
  openapiForm: 'absolute',
  narrative: 'none',
  referenceDisplay: 'as-written',
  instantFormat: 'as-stored',
  jsonLayout: 'compact',
  contentEncoding: 'identity',
  r4DocumentReference: 'none',
  r4Observation: 'none',
  accessTokenClaims: 'full',
  accessTokenFormat: 'jwt',
  resourceIndicator: 'release',
  staleIfMatchOtherTypes: 409,
  unresolvedReference: 'refused',
};

export interface ReferenceOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  limits?: Partial<ReferenceLimits>;
  modes?: Partial<ReferenceModes>;
  /** Names of faults from src/reference/faults/ to plant. */
  faults?: string[];
  /** Directory of the reference fixtures (default fixtures/reference). */
  fixturesDir?: string;
  /**
   * Clients (by role in clients.json) whose keys are fetched from this key-set URL instead of
   * the registry's keys: the suite's own hosted key set (src/auth/jwks.ts) in embedded runs.
   */
  clientJwksUris?: Record<string, string>;
  /** Clients registered besides the fixture ones (`serve --client`); see src/reference/clients.ts. */
  extraClients?: ExtraClient[];
  /** Clock, for tests. */
  now?: () => number;
  /**
   * Serve HTTPS with this certificate and key (`serve --tls`); with `requestCert`, a client
   * certificate signed by `ca` is required (mutual TLS).
   */
  tls?: { cert: string; key: string; ca?: string; requestCert?: boolean };
}

/** A client to register: an id and its public keys (inline, from a file, or a URL the reference fetches). */
export interface ExtraClient {
  clientId: string;
  jwks?: { keys: JWK[] };
  jwksUri?: string;
  org?: string;
  keyKind?: 'sandbox' | 'production';
  scopes?: string[];
  /** Per-key rate ceiling per window (default: the spec's 60, whatever `--limits`; a config without `rateLimitPerMinute` assumes it). */
  rateLimitPerMinute?: number;
}

/** Who is calling, established by the HTTP core from the bearer token. */
export interface Caller {
  clientId: string;
  org: string;
  keyKind: 'sandbox' | 'production';
  scopes: string[];
}

export interface HandlerContext {
  op: OperationDef;
  caller: Caller;
  /** Path parameters, e.g. `{ id }`. */
  params: Record<string, string>;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body (writes), already checked to be JSON with the right media type; raw Buffer for $upload. */
  body: unknown;
  rawBody?: Buffer;
  /** Absolute base URL of the server, no trailing slash. */
  baseUrl: string;
  now: number;
}

export interface HandlerResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export type Handler = (ctx: HandlerContext) => Promise<HandlerResponse> | HandlerResponse;

/**
 * Thrown by handlers and the core; the core turns it into an OperationOutcome.
 * With `code`, diagnostics become `<CODE>: <message>` and details.coding is set.
 */
export class FhirError extends Error {
  constructor(
    readonly status: number,
    readonly issueCode: string,
    message: string,
    readonly code?: string,
    readonly headers?: Record<string, string>,
  ) {
    // An answer, not a fault of the reference: no stack is captured (about 15 us each, hundreds a run).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'FhirError';
  }
}

/** The values each mode may take (the first is the default). */
export const MODE_VALUES: { readonly [K in keyof ReferenceModes]: readonly ReferenceModes[K][] } = {
  createStatus: [201, 200, 202],
  updateStatus: [200, 201, 202],
  countOver100: ['clamp', 'reject'],
  cursorEncoding: ['base64', 'handle'],
  etag: ['weak', 'strong'],
  tokenResponseExtras: [true, false],
  tieBreak: ['uuid-asc', 'uuid-desc'],
  signedPrescriptionCode: ['HPB-00114', 'HPB-00103'],
  validationStatus: [422, 400],
  unknownDocumentCode: ['HPB-00118', 'HPB-00102'],
  uploadPath: ['$upload', '$binary-upload'],
  r5Capability: ['full', 'bare', 'none'],
  uploadContract: [
    'instance-raw',
    'instance-binary',
    'instance-parameters',
    'type-parameters',
    'type-document-reference',
    'type-query-raw',
    'type-query-binary',
  ],
  issuanceWindow: ['first-request', 'clock'],
  issuancePrematureRetry: ['restart', 'plus-second', 'same-client'],
  excessScope: ['refuse', 'narrow'],
  patientBlockOn: ['create-and-update', 'create'],
  prematureRetry: ['extend', 'extend-steep'],
  mainKeyKind: ['sandbox', 'production'],
  tokenEndpointForm: ['canonical', 'trailing-slash'],
  tokenRequestParsing: ['strict', 'lenient'],
  openapiMediaType: ['application/json', 'text/plain'],
  issueCodes: ['by-status', 'processing'],
  genericErrors: ['coded', 'plain-text'],
  rateLimitReset: ['slot-frees', 'window-free'],
  retryAfter: ['exact', 'plus-one', 'rounded-up'],
  keyWindowAccounting: ['exact', 'coarse'],
  keyWindowAtStart: ['empty', 'earlier-run'],
  orderBy: ['created', 'resource-time', 'last-updated'],
  orderDirection: ['ascending', 'descending'],
  diagnosisOrder: ['stored', 'reversed'],
  discoveryAuth: ['none', 'required'],
  attachmentStorage: ['inline', 'url'],
  mainKeyAlg: ['ES256', ...SIGNING_ALGS.filter((a) => a !== 'ES256')],
  openapiForm: ['absolute', 'servers-relative'],
  narrative: ['none', 'regenerate'],
  referenceDisplay: ['as-written', 'inject'],
  instantFormat: ['as-stored', 'utc-millis', 'offset'],
  jsonLayout: ['compact', 'pretty'],
  contentEncoding: ['identity', 'gzip'],
  r4DocumentReference: ['none', 'writes', 'writes-untyped'],
  r4Observation: ['none', 'writes'],
  accessTokenClaims: ['full', 'minimal'],
  accessTokenFormat: ['jwt', 'opaque'],
  resourceIndicator: ['release', 'ignored'],
  staleIfMatchOtherTypes: [409, 412],
  unresolvedReference: ['refused', 'not-found', 'unchecked'],
};

/** Merges modes over the defaults; an unknown key or value is a clear error. */
export function resolveModes(partial: Partial<Record<string, unknown>> = {}): ReferenceModes {
  for (const [k, v] of Object.entries(partial)) {
    const allowed = (MODE_VALUES as Record<string, readonly unknown[]>)[k];
    if (!allowed) throw new Error(`unknown reference mode "${k}"; modes: ${Object.keys(MODE_VALUES).join(', ')}`);
    if (!allowed.includes(v)) throw new Error(`reference mode ${k} must be one of ${allowed.map(String).join(', ')}, got ${String(v)}`);
  }
  return { ...DEFAULT_MODES, ...(partial as Partial<ReferenceModes>) };
}

/** Merges limits over the defaults; an unknown key or a non-positive number is a clear error. */
export function resolveLimits(partial: Partial<Record<string, unknown>> = {}): ReferenceLimits {
  for (const [k, v] of Object.entries(partial)) {
    if (!(k in DEFAULT_LIMITS)) throw new Error(`unknown reference limit "${k}"; limits: ${Object.keys(DEFAULT_LIMITS).join(', ')}`);
    const ok = k === 'enforceRateLimits' ? typeof v === 'boolean' : typeof v === 'number' && Number.isFinite(v) && v > 0;
    if (!ok) throw new Error(`reference limit ${k} must be ${k === 'enforceRateLimits' ? 'true or false' : 'a positive number'}, got ${String(v)}`);
  }
  return { ...DEFAULT_LIMITS, ...(partial as Partial<ReferenceLimits>) };
}
