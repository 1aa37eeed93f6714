/** The operation model discovery builds from what a target publishes. */

export type Release = 'R4' | 'R5';
export type ModelInteraction = 'read' | 'search-type' | 'create' | 'update' | 'operation';
/** Where an operation comes from; `spec`: stated by the spec, used where the target publishes none (src/discovery/spec.ts). */
export type ModelSource = 'openapi' | 'capability-r4' | 'capability-r5' | 'spec';

export interface ModelOperation {
  operationId: string;
  release: Release;
  resource: string;
  interaction: ModelInteraction;
  /** For interaction 'operation': its name without `$`. */
  operationName?: string;
  method: string;
  /** Path template relative to the base URL, with `{id}` as the path parameter. */
  path: string;
  /** `x-service-scope`, or the CapabilityStatement's required-scope extension. */
  scope?: string;
  /** Query parameters (search parameters; for an operation, those it takes in the query); `required` as the OpenAPI document says. */
  searchParams: Array<{ name: string; type?: string; required?: boolean }>;
  /** Dereferenced request body schema (OpenAPI). */
  requestSchema?: object;
  /** CapabilityStatement `rest.resource.profile`: the canonical URL of the profile the target holds the type to. */
  profile?: string;
  /** Media types of the request body (OpenAPI `requestBody.content` keys). */
  requestMediaTypes?: string[];
  /**
   * For interaction 'operation' from a CapabilityStatement: true when no path was
   * published (no OpenAPI path, no operation-path extension, no path in the
   * documentation) and `path` is the type-level `$name` form, a guess. Such
   * operations are listed in `OperationModel.pathless`, not in `operations`.
   */
  pathAssumed?: boolean;
  /** CapabilityStatement `operation.definition` (canonical URL of its OperationDefinition). */
  definition?: string;
  /**
   * For interaction 'operation': the query the CapabilityStatement's documentation writes after the
   * operation's path (`patient={patient}` from `POST .../$upload?patient={patient}`), as written.
   */
  query?: string;
  /** CapabilityStatement `operation.documentation`. */
  documentation?: string;
  /** Dereferenced 2xx response body schema (OpenAPI). */
  responseSchema?: object;
  errorStatuses: number[];
  /** Catalog codes (HPB-/SVC-) the document lists for the operation's errors. */
  errorCodes: string[];
  sources: ModelSource[];
}

export interface OperationModel {
  /** The operations checks run on: published (or spec-stated) with a known path. */
  operations: ModelOperation[];
  /** Operations the target names without publishing their path (`pathAssumed`); never called as if the guess were published. */
  pathless?: ModelOperation[];
  /** Differences between the OpenAPI document and the R4 CapabilityStatement, one line each. */
  divergences: string[];
  /** Why the OpenAPI document and the R4 CapabilityStatement were not compared (one of them could not be read); absent when they were. */
  notCompared?: string;
  /** Unreachable, invalid or wrong-version documents, one readable line each. */
  problems: string[];
  /**
   * Differences between what the spec states (paths, scopes, search parameters of
   * the R5 DocumentReference surface) and what the target publishes. What the
   * target publishes is used; these are reported, not judged.
   */
  specDivergences?: string[];
  /**
   * Remarks that are no fault of the target: the R5 CapabilityStatement (the spec
   * does not require one) could not be read, an operation path was not published,
   * spec-stated operations or scopes filled in.
   */
  notes?: string[];
  /**
   * Documents whose authentication the spec leaves open ("not stated") that answered 401/403
   * without a token and were read with the main client's bearer instead.
   */
  authenticated?: string[];
  openapi?: object;
  capabilityR4?: object;
  capabilityR5?: object;
  /** sha256 (hex) of the raw document bodies. */
  hashes: { openapi?: string; capabilityR4?: string; capabilityR5?: string };
}

/** CapabilityStatement extension naming the scope an interaction or operation requires. */
export const REQUIRED_SCOPE_EXTENSION = 'https://clinical-records.example/fhir/StructureDefinition/required-scope';
/** CapabilityStatement extension giving an operation's path template. */
export const OPERATION_PATH_EXTENSION = 'https://clinical-records.example/fhir/StructureDefinition/operation-path';
