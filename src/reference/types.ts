/**
 * Contracts inside the embedded reference server: options (knobs), the
 * behaviour switches that alternative-conformant modes and faults flip, and the
 * handler interface between the HTTP core and the resource modules.
 */
import type { OperationDef } from '../spec/api.js';

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
  /** Document size maximum for $upload, bytes (spec: not shown; reference 1 MiB). */
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
  createStatus: 200 | 201;
  updateStatus: 200 | 201;
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
  /** Fixed issuance window aligned to the clock minute, or starting at the first request. */
  issuanceWindow: 'clock' | 'first-request';
  /** Scope outside the client's grant: refuse the request, or narrow to the granted subset. */
  excessScope: 'refuse' | 'narrow';
  /** Merged/deceased patients refuse updates too, or creates only. */
  patientBlockOn: 'create' | 'create-and-update';
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
  issuanceWindow: 'first-request',
  excessScope: 'refuse',
  patientBlockOn: 'create-and-update',
  orderBy: 'created',
  orderDirection: 'ascending',
  diagnosisOrder: 'stored',
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
  /** Clock, for tests. */
  now?: () => number;
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
    super(message);
    this.name = 'FhirError';
  }
}

/** The values each mode may take (the first is the default). */
export const MODE_VALUES: { readonly [K in keyof ReferenceModes]: readonly ReferenceModes[K][] } = {
  createStatus: [201, 200],
  updateStatus: [200, 201],
  countOver100: ['clamp', 'reject'],
  cursorEncoding: ['base64', 'handle'],
  etag: ['weak', 'strong'],
  tokenResponseExtras: [true, false],
  tieBreak: ['uuid-asc', 'uuid-desc'],
  signedPrescriptionCode: ['HPB-00114', 'HPB-00103'],
  validationStatus: [422, 400],
  unknownDocumentCode: ['HPB-00118', 'HPB-00102'],
  uploadPath: ['$upload', '$binary-upload'],
  issuanceWindow: ['first-request', 'clock'],
  excessScope: ['refuse', 'narrow'],
  patientBlockOn: ['create-and-update', 'create'],
  orderBy: ['created', 'resource-time', 'last-updated'],
  orderDirection: ['ascending', 'descending'],
  diagnosisOrder: ['stored', 'reversed'],
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
