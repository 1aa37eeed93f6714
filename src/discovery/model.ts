/** The operation model discovery builds from what a target publishes. */

export type Release = 'R4' | 'R5';
export type ModelInteraction = 'read' | 'search-type' | 'create' | 'update' | 'operation';
export type ModelSource = 'openapi' | 'capability-r4' | 'capability-r5';

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
  searchParams: Array<{ name: string; type?: string }>;
  /** Dereferenced request body schema (OpenAPI). */
  requestSchema?: object;
  /** Dereferenced 2xx response body schema (OpenAPI). */
  responseSchema?: object;
  errorStatuses: number[];
  /** Catalog codes (HPB-/SVC-) the document lists for the operation's errors. */
  errorCodes: string[];
  sources: ModelSource[];
}

export interface OperationModel {
  operations: ModelOperation[];
  /** Differences between the OpenAPI document and the R4 CapabilityStatement, one line each. */
  divergences: string[];
  /** Unreachable, invalid or wrong-version documents, one readable line each. */
  problems: string[];
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
