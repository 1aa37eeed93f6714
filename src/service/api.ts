/**
 * The one in-code description of the service's API, transcribed from the
 * specification's "Endpoints" section. The reference server generates its
 * OpenAPI document and CapabilityStatements from it and enforces scopes with it.
 *
 * The engine never reads this file to decide what a *target* offers: it builds
 * its operation model from what the target publishes (src/discovery/).
 */
export type FhirRelease = 'R4' | 'R5';
export type Interaction = 'read' | 'search-type' | 'create' | 'update' | 'operation';
/** The spec's resource types, and Observation, which a target may publish besides them (the reference's mode `r4Observation`). */
export type ResourceType = 'MedicationRequest' | 'Encounter' | 'DocumentReference' | 'Observation';

export interface SearchParamDef {
  name: string;
  type: 'string' | 'token' | 'reference' | 'date' | 'number' | 'integer';
  description: string;
}

export interface OperationDef {
  /** Stable id, also the OpenAPI operationId. */
  operationId: string;
  release: FhirRelease;
  resource: ResourceType;
  interaction: Interaction;
  /** For interaction 'operation': its name without `$`. */
  operationName?: string;
  method: 'GET' | 'POST' | 'PUT';
  /** Path relative to the base URL, `{id}` as the path parameter. */
  path: string;
  /** The required scope, e.g. `system/MedicationRequest.rs`. */
  scope: string;
  searchParams?: SearchParamDef[];
  /** Status and catalog code of each error the spec's table lists. */
  errors: Array<{ status: number; code: string }>;
}

const COUNT: SearchParamDef = { name: '_count', type: 'integer', description: 'Page size: default 20, maximum 100.' };
const CURSOR: SearchParamDef = { name: '_cursor', type: 'string', description: 'Opaque cursor taken from the next link of a previous result.' };
const DATE_DESC = 'Date `[prefix]YYYY-MM-DD`; prefixes eq, ne, gt, ge, lt, le.';

const E = (status: number, code: string) => ({ status, code });
const E401 = E(401, 'HPB-00106');
const E403 = E(403, 'HPB-00104');
const E404 = E(404, 'HPB-00102');
const E429 = E(429, 'HPB-00105');
const E400 = E(400, 'HPB-00101');
const E422 = E(422, 'HPB-00101');

export const OPERATIONS: readonly OperationDef[] = [
  // MedicationRequest (R4)
  {
    operationId: 'MedicationRequest.read',
    release: 'R4',
    resource: 'MedicationRequest',
    interaction: 'read',
    method: 'GET',
    path: '/fhir/R4/MedicationRequest/{id}',
    scope: 'system/MedicationRequest.rs',
    errors: [E401, E403, E404, E429],
  },
  {
    operationId: 'MedicationRequest.update',
    release: 'R4',
    resource: 'MedicationRequest',
    interaction: 'update',
    method: 'PUT',
    path: '/fhir/R4/MedicationRequest/{id}',
    scope: 'system/MedicationRequest.cru',
    errors: [E400, E401, E403, E404, E(409, 'HPB-00103'), E422, E429],
  },
  {
    operationId: 'MedicationRequest.search',
    release: 'R4',
    resource: 'MedicationRequest',
    interaction: 'search-type',
    method: 'GET',
    path: '/fhir/R4/MedicationRequest',
    scope: 'system/MedicationRequest.rs',
    errors: [E400, E401, E403, E429],
    searchParams: [
      { name: 'patient', type: 'string', description: 'UUID of the patient. At least one of patient or encounter must be supplied.' },
      { name: 'encounter', type: 'string', description: 'UUID of the encounter. At least one of patient or encounter must be supplied.' },
      COUNT,
      CURSOR,
    ],
  },
  {
    operationId: 'MedicationRequest.create',
    release: 'R4',
    resource: 'MedicationRequest',
    interaction: 'create',
    method: 'POST',
    path: '/fhir/R4/MedicationRequest',
    scope: 'system/MedicationRequest.c',
    errors: [E400, E401, E403, E422, E429],
  },

  // Encounter (R4)
  {
    operationId: 'Encounter.read',
    release: 'R4',
    resource: 'Encounter',
    interaction: 'read',
    method: 'GET',
    path: '/fhir/R4/Encounter/{id}',
    scope: 'system/Encounter.rs',
    errors: [E401, E403, E404, E429],
  },
  {
    operationId: 'Encounter.update',
    release: 'R4',
    resource: 'Encounter',
    interaction: 'update',
    method: 'PUT',
    path: '/fhir/R4/Encounter/{id}',
    scope: 'system/Encounter.cru',
    errors: [E400, E401, E403, E404, E422, E429],
  },
  {
    operationId: 'Encounter.search',
    release: 'R4',
    resource: 'Encounter',
    interaction: 'search-type',
    method: 'GET',
    path: '/fhir/R4/Encounter',
    scope: 'system/Encounter.rs',
    errors: [E401, E403, E429],
    searchParams: [
      { name: '_id', type: 'token', description: 'Exact match.' },
      { name: 'patient', type: 'reference', description: 'UUID of the patient.' },
      { name: 'practitioner', type: 'reference', description: 'UUID of the practitioner.' },
      { name: 'date', type: 'date', description: DATE_DESC },
      { name: 'status', type: 'token', description: 'planned, in-progress, finished, cancelled.' },
      { name: 'class', type: 'token', description: 'Class code, for example AMB, IMP, VR.' },
      COUNT,
      CURSOR,
    ],
  },
  {
    operationId: 'Encounter.create',
    release: 'R4',
    resource: 'Encounter',
    interaction: 'create',
    method: 'POST',
    path: '/fhir/R4/Encounter',
    scope: 'system/Encounter.cru',
    errors: [E400, E401, E403, E422, E429],
  },

  // DocumentReference (R5 surface)
  {
    operationId: 'DocumentReference.read',
    release: 'R5',
    resource: 'DocumentReference',
    interaction: 'read',
    method: 'GET',
    path: '/fhir/R5/DocumentReference/{id}',
    scope: 'system/DocumentReference.rs',
    errors: [E401, E403, E(404, 'HPB-00118'), E429],
  },
  {
    operationId: 'DocumentReference.search',
    release: 'R5',
    resource: 'DocumentReference',
    interaction: 'search-type',
    method: 'GET',
    path: '/fhir/R5/DocumentReference',
    scope: 'system/DocumentReference.rs',
    errors: [E400, E401, E403, E429],
    searchParams: [
      { name: 'patient', type: 'reference', description: 'UUID of the patient.' },
      { name: 'type', type: 'token', description: 'Document type code.' },
      { name: 'category', type: 'token', description: 'Document category code.' },
      { name: 'date', type: 'date', description: DATE_DESC },
      { name: '_count', type: 'number', description: 'Page size: default 20, maximum 100.' },
      { name: '_offset', type: 'number', description: 'Number of matches to skip (reference choice: 0 to 10000).' },
      CURSOR,
    ],
  },
  {
    operationId: 'DocumentReference.create',
    release: 'R5',
    resource: 'DocumentReference',
    interaction: 'create',
    method: 'POST',
    path: '/fhir/R5/DocumentReference',
    scope: 'system/DocumentReference.cru',
    errors: [E400, E401, E403, E422, E429],
  },
  {
    operationId: 'DocumentReference.update',
    release: 'R5',
    resource: 'DocumentReference',
    interaction: 'update',
    method: 'PUT',
    path: '/fhir/R5/DocumentReference/{id}',
    scope: 'system/DocumentReference.cru',
    errors: [E400, E401, E403, E(404, 'HPB-00118'), E422, E429],
  },
  {
    operationId: 'DocumentReference.upload',
    release: 'R5',
    resource: 'DocumentReference',
    interaction: 'operation',
    operationName: 'upload',
    method: 'POST',
    path: '/fhir/R5/DocumentReference/{id}/$upload',
    scope: 'system/DocumentReference.cru',
    errors: [E(400, 'HPB-00120'), E401, E403, E(404, 'HPB-00118'), E(413, 'HPB-00119'), E429],
  },
];

/**
 * Not in the spec: DocumentReference mirrored on R4 (read, search, create, update), as a server may
 * publish besides the spec's operations. The reference serves them in mode `r4DocumentReference=writes`.
 */
export const R4_DOCUMENT_REFERENCE_OPERATIONS: readonly OperationDef[] = [
  {
    operationId: 'R4DocumentReference.read',
    release: 'R4',
    resource: 'DocumentReference',
    interaction: 'read',
    method: 'GET',
    path: '/fhir/R4/DocumentReference/{id}',
    scope: 'system/DocumentReference.rs',
    errors: [E401, E403, E(404, 'HPB-00118'), E429],
  },
  {
    operationId: 'R4DocumentReference.search',
    release: 'R4',
    resource: 'DocumentReference',
    interaction: 'search-type',
    method: 'GET',
    path: '/fhir/R4/DocumentReference',
    scope: 'system/DocumentReference.rs',
    errors: [E400, E401, E403, E429],
    searchParams: [
      { name: 'patient', type: 'reference', description: 'UUID of the patient.' },
      { name: 'type', type: 'token', description: 'Document type code.' },
      { name: 'category', type: 'token', description: 'Document category code.' },
      { name: 'date', type: 'date', description: DATE_DESC },
      COUNT,
      CURSOR,
    ],
  },
  {
    operationId: 'R4DocumentReference.create',
    release: 'R4',
    resource: 'DocumentReference',
    interaction: 'create',
    method: 'POST',
    path: '/fhir/R4/DocumentReference',
    scope: 'system/DocumentReference.cru',
    errors: [E400, E401, E403, E422, E429],
  },
  {
    operationId: 'R4DocumentReference.update',
    release: 'R4',
    resource: 'DocumentReference',
    interaction: 'update',
    method: 'PUT',
    path: '/fhir/R4/DocumentReference/{id}',
    scope: 'system/DocumentReference.cru',
    errors: [E400, E401, E403, E(404, 'HPB-00118'), E422, E429],
  },
];

/**
 * Not in the spec: Observation on R4 with read, create and update, as a server may publish a
 * resource type besides the spec's. The reference serves them in mode `r4Observation=writes`.
 */
export const R4_OBSERVATION_OPERATIONS: readonly OperationDef[] = [
  {
    operationId: 'R4Observation.read',
    release: 'R4',
    resource: 'Observation',
    interaction: 'read',
    method: 'GET',
    path: '/fhir/R4/Observation/{id}',
    scope: 'system/Observation.rs',
    errors: [E401, E403, E(404, 'HPB-00102'), E429],
  },
  {
    operationId: 'R4Observation.create',
    release: 'R4',
    resource: 'Observation',
    interaction: 'create',
    method: 'POST',
    path: '/fhir/R4/Observation',
    scope: 'system/Observation.cru',
    errors: [E400, E401, E403, E422, E429],
  },
  {
    operationId: 'R4Observation.update',
    release: 'R4',
    resource: 'Observation',
    interaction: 'update',
    method: 'PUT',
    path: '/fhir/R4/Observation/{id}',
    scope: 'system/Observation.cru',
    errors: [E400, E401, E403, E(404, 'HPB-00102'), E422, E429],
  },
];

/** The spec's operations of a release, with `extra` ones a server publishes besides them. */
export function operationsFor(release: FhirRelease, extra: readonly OperationDef[] = []): OperationDef[] {
  return [...OPERATIONS, ...extra].filter((o) => o.release === release);
}
