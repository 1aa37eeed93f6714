/**
 * Discovery documents of the reference server, generated from one source
 * (OPERATIONS in src/service/api.ts + COMPONENT_SCHEMAS in src/service/schemas.ts),
 * so the OpenAPI document and the CapabilityStatements cannot diverge
 * (spec Versioning rule 3).
 */
import { SIGNING_ALGS } from '../auth/algorithms.js';
import type { JWK } from 'jose';
import { OPERATIONS, operationsFor, R4_DOCUMENT_REFERENCE_OPERATIONS, R4_OBSERVATION_OPERATIONS } from '../service/api.js';
import type { FhirRelease, OperationDef, SearchParamDef } from '../service/api.js';
import { catalogEntry } from '../service/catalog.js';
import { COMPONENT_SCHEMAS, writeSchemaName } from '../service/schemas.js';
import type { ReferenceModes } from './types.js';
import { UPLOAD_PATIENT_PARAMETER, uploadContractOf } from './resources/upload.js';

export const REQUIRED_SCOPE_EXTENSION = 'https://clinical-records.example/fhir/StructureDefinition/required-scope';
export const OPERATION_PATH_EXTENSION = 'https://clinical-records.example/fhir/StructureDefinition/operation-path';
const OPERATION_DEFINITION_BASE = 'https://clinical-records.example/fhir/OperationDefinition';
const SMART_OAUTH_URIS = 'http://fhir-registry.smarthealthit.org/StructureDefinition/oauth-uris';
const FHIR_VERSION: Record<FhirRelease, string> = { R4: '4.0.1', R5: '5.0.0' };

export interface DiscoveryInit {
  baseUrl: string;
  tokenUrl: string;
  modes: ReferenceModes;
  scopesSupported: string[];
  /** ISO date-time of the server start (CapabilityStatement.date). */
  startedAt: string;
}

/** Operations the reference publishes besides the spec's, per its modes (`r4DocumentReference=writes`, `r4Observation=writes`). */
export function extraOperations(modes: ReferenceModes): readonly OperationDef[] {
  return [
    ...(modes.r4DocumentReference === 'none' ? [] : R4_DOCUMENT_REFERENCE_OPERATIONS),
    ...(modes.r4Observation === 'none' ? [] : R4_OBSERVATION_OPERATIONS),
  ];
}

/** Scopes of the extra operations (the fixture clients are granted them when the mode serves them). */
export function extraScopes(modes: ReferenceModes): string[] {
  return [...new Set(extraOperations(modes).map((op) => op.scope))];
}

/** Every operation the reference serves under its modes. */
export function servedOperations(modes: ReferenceModes): readonly OperationDef[] {
  return [...OPERATIONS, ...extraOperations(modes)];
}

/**
 * Request schema of a DocumentReference write where the reference publishes one on R4 (mode
 * `r4DocumentReference=writes`): what its handler refuses with 400 when missing or of another type.
 */
const R4_DOCUMENT_REFERENCE_SCHEMA = {
  type: 'object',
  required: ['resourceType', 'status', 'content', 'subject'],
  properties: {
    resourceType: { type: 'string', enum: ['DocumentReference'] },
    id: { type: 'string' },
    meta: { type: 'object' },
    status: { type: 'string', enum: ['current', 'superseded', 'entered-in-error'] },
    type: { type: 'object' },
    category: { type: 'array', items: { type: 'object' } },
    subject: { $ref: '#/components/schemas/Reference' },
    date: { type: 'string', format: 'date-time' },
    description: { type: 'string' },
    content: {
      type: 'array',
      items: { type: 'object', required: ['attachment'], properties: { attachment: { type: 'object' } } },
    },
  },
};

/** The `DocumentReference` component of the OpenAPI document, when the mode serves DocumentReference on R4. */
function r4DocumentReferenceComponent(modes: ReferenceModes): Record<string, object> {
  if (modes.r4DocumentReference === 'none') return {};
  if (modes.r4DocumentReference === 'writes') return { DocumentReference: R4_DOCUMENT_REFERENCE_SCHEMA };
  return { DocumentReference: typeOnlySchema('DocumentReference', 'A FHIR R4 DocumentReference.') };
}

/** A request schema that names only the resourceType, as a generic generator writes one. */
function typeOnlySchema(type: string, description: string): object {
  return { type: 'object', description, required: ['resourceType'], properties: { resourceType: { type: 'string', enum: [type] } } };
}

/**
 * The `Observation` component (mode `r4Observation=writes`): a schema that names only the
 * resourceType, as a generic generator writes one; the client derives the rest from the HL7 FHIR R4 schema.
 */
function r4ObservationComponent(modes: ReferenceModes): Record<string, object> {
  if (modes.r4Observation === 'none') return {};
  return { Observation: typeOnlySchema('Observation', 'A FHIR R4 Observation (http://hl7.org/fhir/R4/observation.html).') };
}

/** Where the Observation profile is served (mode `r4Observation=writes`); its canonical URL is under the base URL. */
export const OBSERVATION_PROFILE_PATH = '/fhir/R4/StructureDefinition/conformance-observation';
/** Top-level elements the Observation profile requires beyond the base (`code`): what the handler refuses without. */
export const OBSERVATION_PROFILE_REQUIRED = ['status', 'category', 'subject', 'effective[x]'];

/** The profile the R4 CapabilityStatement names for Observation (mode `r4Observation=writes`), as a StructureDefinition. */
export function observationProfile(baseUrl: string): object {
  return {
    resourceType: 'StructureDefinition',
    id: 'conformance-observation',
    url: `${baseUrl}${OBSERVATION_PROFILE_PATH}`,
    name: 'ConformanceObservation',
    status: 'active',
    fhirVersion: '4.0.1',
    kind: 'resource',
    abstract: false,
    type: 'Observation',
    baseDefinition: 'http://hl7.org/fhir/StructureDefinition/Observation',
    derivation: 'constraint',
    differential: {
      element: [
        { id: 'Observation', path: 'Observation' },
        ...OBSERVATION_PROFILE_REQUIRED.map((e) => ({ id: `Observation.${e}`, path: `Observation.${e}`, min: 1 })),
      ],
    },
  };
}

/** The path an operation is served on; `$upload` follows `modes.uploadContract` (level) and `modes.uploadPath`. */
export function operationPath(op: OperationDef, modes: ReferenceModes): string {
  if (op.operationName !== 'upload') return op.path;
  const path = uploadContractOf(modes).level === 'type' ? op.path.replace('/{id}/', '/') : op.path;
  return path.replace('$upload', modes.uploadPath);
}

/** Where the `$upload` OperationDefinition is served (mode `r5Capability: full`). */
export const OPERATION_DEFINITION_PATH = '/fhir/R5/OperationDefinition/DocumentReference-upload';

const PAYLOAD_TEXT: Record<ReturnType<typeof uploadContractOf>['payload'], string> = {
  raw: 'the request body is the document; Content-Type is its media type',
  binary: 'the request body is a FHIR Binary (contentType, data)',
  parameters:
    'the request body is a FHIR Parameters: document (valueAttachment with contentType and data) and, when it creates the DocumentReference, subject (valueReference Patient)',
  'document-reference': 'the request body is a DocumentReference with the document in content[0].attachment.data',
};

/**
 * The FHIR OperationDefinition of `$upload` (`instance`/`type`, the `in` parameters), served
 * when `modes.r5Capability` is `full`; undefined otherwise.
 */
export function operationDefinition(init: DiscoveryInit): object | undefined {
  if (init.modes.r5Capability !== 'full') return undefined;
  const { level, payload, query } = uploadContractOf(init.modes);
  const document = {
    raw: {
      name: 'document',
      use: 'in',
      min: 1,
      max: '1',
      type: 'Binary',
      documentation: 'The document, sent as the raw request body with its media type as Content-Type.',
    },
    binary: { name: 'document', use: 'in', min: 1, max: '1', type: 'Binary', documentation: 'The document as a FHIR Binary resource.' },
    parameters: { name: 'document', use: 'in', min: 1, max: '1', type: 'Attachment', documentation: 'The document: contentType and data (base64).' },
    'document-reference': {
      name: 'document',
      use: 'in',
      min: 1,
      max: '1',
      type: 'DocumentReference',
      documentation: 'A DocumentReference with the document in content[0].attachment.data.',
    },
  }[payload];
  const subject =
    level === 'type' && payload === 'parameters'
      ? [
          {
            name: 'subject',
            use: 'in',
            min: 1,
            max: '1',
            type: 'Reference',
            targetProfile: ['http://hl7.org/fhir/StructureDefinition/Patient'],
            documentation: 'The patient of the DocumentReference created.',
          },
        ]
      : query
        ? [
            {
              name: UPLOAD_PATIENT_PARAMETER,
              use: 'in',
              min: 1,
              max: '1',
              type: 'id',
              documentation: 'The id of the Patient of the DocumentReference created (a query parameter; the body is the document).',
            },
          ]
        : [];
  return {
    resourceType: 'OperationDefinition',
    id: 'DocumentReference-upload',
    url: `${OPERATION_DEFINITION_BASE}/DocumentReference-upload`,
    name: 'Upload',
    title: 'Upload a document',
    status: 'active',
    kind: 'operation',
    affectsState: true,
    code: 'upload',
    description: `Uploads a document (${PAYLOAD_TEXT[payload]}); ${level === 'instance' ? 'it becomes the content of the DocumentReference' : 'a DocumentReference is created for it'}.`,
    resource: ['DocumentReference'],
    system: false,
    type: level === 'type',
    instance: level === 'instance',
    parameter: [document, ...subject, { name: 'return', use: 'out', min: 1, max: '1', type: 'DocumentReference' }],
  };
}

/** Success status of an operation (create/update follow the modes; the spec does not show them). */
export function successStatus(op: OperationDef, modes: ReferenceModes): number {
  if (op.interaction === 'create') return modes.createStatus;
  if (op.interaction === 'update') return modes.updateStatus;
  return 200;
}

// ---- OpenAPI ------------------------------------------------------------

/** Codes the HTTP core also answers with, besides the spec's endpoint tables. */
const CORE_CODES: Record<number, string[]> = { 401: ['SVC-00004', 'HPB-00107'], 403: ['HPB-00124'] };

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const fhirJson = (schema: object) => ({ 'application/fhir+json': { schema } });

function commonHeaders(extra: string[] = []): Record<string, object> {
  const names = ['X-Correlation-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', ...extra];
  return Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));
}

function searchParamSchema(p: SearchParamDef): object {
  if (p.type === 'integer') return { type: 'integer', minimum: 1 };
  if (p.type === 'number') return { type: 'number', minimum: 0 };
  return { type: 'string' };
}

function openApiOperation(op: OperationDef, modes: ReferenceModes): object {
  const parameters: object[] = [];
  if (op.path.includes('{id}')) parameters.push({ $ref: '#/components/parameters/id' });
  for (const p of op.searchParams ?? []) {
    parameters.push({ name: p.name, in: 'query', required: false, description: `${p.type}. ${p.description}`, schema: searchParamSchema(p) });
  }
  if (op.interaction === 'update') parameters.push({ $ref: '#/components/parameters/If-Match' });

  const resultSchema = op.interaction === 'search-type' ? 'Bundle' : op.resource;
  const versioned = op.interaction === 'read' || op.interaction === 'update';
  const responses: Record<string, object> = {
    [String(successStatus(op, modes))]: {
      description: op.interaction === 'search-type' ? 'Bundle of type searchset' : op.resource,
      headers: commonHeaders(versioned ? ['ETag', 'Last-Modified'] : []),
      content: fhirJson(ref(resultSchema)),
    },
  };
  const byStatus = new Map<number, string[]>();
  for (const e of op.errors) byStatus.set(e.status, [...(byStatus.get(e.status) ?? []), e.code]);
  for (const [status, codes] of byStatus) {
    const also = CORE_CODES[status] ?? [];
    responses[String(status)] = {
      description: codes.map((c) => `${c}: ${catalogEntry(c).message}`).join('; ') + (also.length ? `. The reference also answers ${also.join(', ')}.` : ''),
      'x-catalog-codes': codes,
      headers: commonHeaders(status === 429 ? ['Retry-After'] : []),
      content: fhirJson(ref('OperationOutcome')),
    };
  }
  responses.default = {
    description: 'Any other error (for example 405, 413, 415, 400 for an unknown search parameter), as an OperationOutcome.',
    headers: commonHeaders(),
    content: fhirJson(ref('OperationOutcome')),
  };

  return {
    operationId: op.operationId,
    summary: `${op.interaction} ${op.resource}`,
    tags: [op.resource],
    'x-service-scope': op.scope,
    security: [{ bearerAuth: [] }],
    ...(parameters.length ? { parameters } : {}),
    ...(op.method === 'GET' ? {} : { requestBody: { required: true, content: fhirJson(ref(writeSchemaName(op.resource))) } }),
    responses,
  };
}

const header = (description: string, type: 'string' | 'integer', required = true) => ({ description, required, schema: { type } });

export function openApiDocument(init: DiscoveryInit): object {
  if (init.modes.openapiForm === 'servers-relative') return serversRelativeDocument(init);
  const paths: Record<string, Record<string, object>> = {};
  for (const op of operationsFor('R4', extraOperations(init.modes))) {
    const path = operationPath(op, init.modes);
    (paths[path] ??= {})[op.method.toLowerCase()] = openApiOperation(op, init.modes);
  }
  return {
    openapi: '3.0.3',
    info: {
      title: 'Clinical Records FHIR Service (reference server)',
      version: 'v1',
      description: `FHIR R4 endpoints. Access tokens: POST ${init.tokenUrl} (client credentials with private_key_jwt).`,
    },
    servers: [{ url: init.baseUrl }],
    paths,
    components: {
      schemas: { ...COMPONENT_SCHEMAS, ...r4DocumentReferenceComponent(init.modes), ...r4ObservationComponent(init.modes) },
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      parameters: {
        id: { name: 'id', in: 'path', required: true, description: 'Resource id (UUID).', schema: { type: 'string' } },
        'If-Match': { name: 'If-Match', in: 'header', required: false, description: 'ETag of the last read (conditional update).', schema: { type: 'string' } },
      },
      headers: {
        'X-Correlation-Id': header('Request correlation id.', 'string'),
        'X-RateLimit-Limit': header('Current limit for the key, requests per window.', 'integer'),
        'X-RateLimit-Remaining': header('Requests left in the current window.', 'integer'),
        'X-RateLimit-Reset': header('Unix timestamp (UTC, seconds) at which the window resets.', 'integer'),
        'Retry-After': header('Seconds to wait before retrying.', 'integer'),
        ETag: header('Version validator of the resource.', 'string'),
        'Last-Modified': header('Last modification time of the resource.', 'string'),
      },
    },
  };
}

/** The server variable of the servers-relative form: the FHIR root segment. */
const FHIR_ROOT = { default: 'fhir', enum: ['fhir'], description: 'First path segment of the FHIR endpoints on this deployment.' };
const releaseServer = (release: FhirRelease) => ({
  url: `/{fhirRoot}/${release}`,
  description: `FHIR ${release} endpoints of this deployment`,
  variables: { fhirRoot: FHIR_ROOT },
});

/** Request body of `$upload` as its payload is (mode uploadContract). */
function uploadRequestBody(modes: ReferenceModes): object {
  const { payload } = uploadContractOf(modes);
  if (payload === 'raw') {
    const raw = { schema: { type: 'string', format: 'binary' } };
    return { required: true, description: PAYLOAD_TEXT.raw, content: { 'application/pdf': raw, 'image/png': raw, 'image/jpeg': raw, 'text/plain': raw } };
  }
  const schema = { binary: 'Binary', parameters: 'Parameters', 'document-reference': 'DocumentReference' }[payload];
  return { required: true, description: PAYLOAD_TEXT[payload], content: fhirJson(ref(schema)) };
}

/** Component schemas of the R5 surface (servers-relative form): what the reference requires of a body, no more. */
const R5_SCHEMAS: Record<string, object> = {
  DocumentReference: {
    type: 'object',
    description: 'FHIR R5 DocumentReference (the fields the service reads).',
    required: ['resourceType', 'status', 'subject', 'content'],
    properties: {
      resourceType: { type: 'string', enum: ['DocumentReference'] },
      status: { type: 'string' },
      subject: ref('Reference'),
      content: { type: 'array', minItems: 1, items: { type: 'object', required: ['attachment'], properties: { attachment: { type: 'object' } } } },
    },
  },
  Binary: {
    type: 'object',
    required: ['resourceType', 'contentType', 'data'],
    properties: { resourceType: { type: 'string', enum: ['Binary'] }, contentType: { type: 'string' }, data: { type: 'string', format: 'byte' } },
  },
  Parameters: {
    type: 'object',
    required: ['resourceType', 'parameter'],
    properties: { resourceType: { type: 'string', enum: ['Parameters'] }, parameter: { type: 'array', items: { type: 'object', required: ['name'] } } },
  },
};

/**
 * Mode `openapiForm: servers-relative`: the same operations written as the OpenAPI specification
 * allows and an independent generator might: `servers` relative to the document's URL with a
 * variable (and a second, other-origin entry), paths relative to the server URL, the R5 surface
 * under per-path and per-operation `servers`, parameters, request bodies and error responses
 * `$ref`'d from `components`, the `{id}` parameter at path level, and `x-service-scope` on the
 * path item of a path with one operation.
 */
function serversRelativeDocument(init: DiscoveryInit): object {
  const base = openApiDocument({ ...init, modes: { ...init.modes, openapiForm: 'absolute' } }) as { components: Record<string, Record<string, object>> };
  const requestBodies: Record<string, object> = {};
  const responses: Record<string, object> = {};
  const paths: Record<string, Record<string, unknown>> = {};
  // The extra R4 types a mode serves, but for R4 DocumentReference, whose relative paths are the R5 surface's (not written in this form).
  const extra = extraOperations(init.modes).filter((o) => o.resource !== 'DocumentReference');
  for (const op of [...operationsFor('R4', extra), ...operationsFor('R5')]) {
    const full = operationPath(op, init.modes);
    const relative = full.slice(`/fhir/${op.release}`.length);
    const written = openApiOperation(op, init.modes) as Record<string, unknown>;
    const parameters = ((written.parameters as object[] | undefined) ?? []).filter((p) => (p as { $ref?: string }).$ref !== '#/components/parameters/id');
    if (op.interaction === 'operation' && uploadContractOf(init.modes).query) {
      parameters.push({
        name: UPLOAD_PATIENT_PARAMETER,
        in: 'query',
        required: true,
        description: 'Id of the Patient of the DocumentReference created.',
        schema: { type: 'string', format: 'uuid' },
      });
    }
    const operation: Record<string, unknown> = { ...written, parameters };
    if (parameters.length === 0) delete operation.parameters;
    if (op.method !== 'GET') {
      const name = op.interaction === 'operation' ? `${op.resource}-${op.operationName}` : writeSchemaName(op.resource);
      requestBodies[name] =
        op.interaction === 'operation' ? uploadRequestBody(init.modes) : { required: true, content: fhirJson(ref(writeSchemaName(op.resource))) };
      operation.requestBody = { $ref: `#/components/requestBodies/${name}` };
    }
    const answers: Record<string, object> = {};
    for (const [status, response] of Object.entries(written.responses as Record<string, object>)) {
      if (!/^[45]\d\d$/.test(status)) {
        answers[status] = response;
        continue;
      }
      const name = `${op.operationId}-${status}`;
      responses[name] = response;
      answers[status] = { $ref: `#/components/responses/${name}` };
    }
    operation.responses = answers;
    const item = (paths[relative] ??= {});
    if (full.includes('{id}')) item.parameters = [{ $ref: '#/components/parameters/id' }];
    if (op.release === 'R5') {
      // DocumentReference/{id}: servers on each operation; the other R5 paths: on the path item.
      if (relative === '/DocumentReference/{id}') operation.servers = [releaseServer('R5')];
      else item.servers = [releaseServer('R5')];
    }
    item[op.method.toLowerCase()] = operation;
  }
  for (const item of Object.values(paths)) {
    const methods = Object.keys(item).filter((k) => ['get', 'put', 'post', 'delete', 'patch'].includes(k));
    if (methods.length !== 1) continue;
    const only = item[methods[0]!] as Record<string, unknown>;
    item['x-service-scope'] = only['x-service-scope'];
    delete only['x-service-scope'];
  }
  return {
    openapi: '3.0.3',
    info: {
      title: 'Clinical Records FHIR Service (reference server)',
      version: 'v1',
      description: `FHIR R4 endpoints (and the R5 DocumentReference surface). Access tokens: POST ${init.tokenUrl} (client credentials with private_key_jwt).`,
    },
    servers: [releaseServer('R4'), { url: 'https://clinical-records.example/fhir/R4', description: 'production (another deployment)' }],
    paths,
    components: {
      ...base.components,
      schemas: { ...base.components.schemas, ...R5_SCHEMAS },
      requestBodies,
      responses,
    },
  };
}

// ---- CapabilityStatements ----------------------------------------------

const scopeExtension = (scope: string) => [{ url: REQUIRED_SCOPE_EXTENSION, valueString: scope }];

function searchParamType(p: SearchParamDef): string {
  return p.type === 'integer' ? 'number' : p.type;
}

/** The `$upload` operation's documentation in the CapabilityStatement: method, URL (with its query template) and payload. */
function uploadDocumentation(op: OperationDef, modes: ReferenceModes, baseUrl: string): string {
  const { payload, query } = uploadContractOf(modes);
  const url = `${baseUrl}${operationPath(op, modes)}${query ? `?${UPLOAD_PATIENT_PARAMETER}={patient}` : ''}`;
  const patient = query ? `; ${UPLOAD_PATIENT_PARAMETER} is the id of the Patient of the DocumentReference created` : '';
  return `${op.method} ${url}: ${PAYLOAD_TEXT[payload]}${patient}.`;
}

/** `bare`: interactions and operation names only (no scope extension, no operation path or documentation). */
function resourceEntry(resource: string, ops: OperationDef[], modes: ReferenceModes, baseUrl: string, bare = false): object {
  const interactions = ops.filter((o) => o.interaction !== 'operation');
  const operations = ops.filter((o) => o.interaction === 'operation');
  const searchParams = interactions.find((o) => o.interaction === 'search-type')?.searchParams ?? [];
  if (bare) {
    return {
      type: resource,
      interaction: interactions.map((o) => ({ code: o.interaction })),
      ...(searchParams.length ? { searchParam: searchParams.map((p) => ({ name: p.name, type: searchParamType(p) })) } : {}),
      ...(operations.length
        ? { operation: operations.map((o) => ({ name: o.operationName!, definition: `${OPERATION_DEFINITION_BASE}/${resource}-${o.operationName}` })) }
        : {}),
    };
  }
  return {
    type: resource,
    ...(resource === 'Observation' ? { profile: `${baseUrl}${OBSERVATION_PROFILE_PATH}` } : {}),
    interaction: interactions.map((o) => ({ code: o.interaction, extension: scopeExtension(o.scope) })),
    ...(searchParams.length ? { searchParam: searchParams.map((p) => ({ name: p.name, type: searchParamType(p), documentation: p.description })) } : {}),
    ...(operations.length
      ? {
          operation: operations.map((o) => ({
            name: o.operationName!,
            definition: `${OPERATION_DEFINITION_BASE}/${resource}-${o.operationName}`,
            extension: [{ url: OPERATION_PATH_EXTENSION, valueString: operationPath(o, modes) }, ...scopeExtension(o.scope)],
            documentation: uploadDocumentation(o, modes, baseUrl),
          })),
        }
      : {}),
  };
}

export function capabilityStatement(release: FhirRelease, init: DiscoveryInit): object {
  const ops = operationsFor(release, extraOperations(init.modes));
  const resources = [...new Set(ops.map((o) => o.resource))];
  return {
    resourceType: 'CapabilityStatement',
    status: 'active',
    date: init.startedAt,
    publisher: 'fhir-conformance reference server',
    kind: 'instance',
    software: { name: 'fhir-conformance reference server' },
    implementation: { description: 'Clinical Records FHIR Service (reference)', url: `${init.baseUrl}/fhir/${release}` },
    fhirVersion: FHIR_VERSION[release],
    format: ['json'],
    rest: [
      {
        mode: 'server',
        security: {
          cors: false,
          service: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/restful-security-service', code: 'SMART-on-FHIR' }] }],
          extension: [{ url: SMART_OAUTH_URIS, extension: [{ url: 'token', valueUri: init.tokenUrl }] }],
          description: 'OAuth 2.0 client credentials with private_key_jwt; scopes system/<Resource>.<letters>.',
        },
        resource: resources.map((r) =>
          resourceEntry(
            r,
            ops.filter((o) => o.resource === r),
            init.modes,
            init.baseUrl,
            release === 'R5' && init.modes.r5Capability === 'bare',
          ),
        ),
      },
    ],
  };
}

// ---- SMART configuration and JWKS ---------------------------------------

export function smartConfiguration(init: DiscoveryInit): object {
  return {
    issuer: init.baseUrl,
    token_endpoint: init.tokenUrl,
    jwks_uri: `${init.baseUrl}/fhir/.well-known/jwks.json`,
    scopes_supported: init.scopesSupported,
    grant_types_supported: ['client_credentials'],
    token_endpoint_auth_methods_supported: ['private_key_jwt'],
    // Every algorithm the reference verifies for a registered key (src/reference/auth.ts ASSERTION_ALGS); RS384 and ES384 first.
    token_endpoint_auth_signing_alg_values_supported: ['RS384', 'ES384', ...SIGNING_ALGS.filter((a) => a !== 'RS384' && a !== 'ES384')],
    capabilities: ['client-confidential-asymmetric'],
  };
}

export function jwks(publicJwk: JWK): { keys: JWK[] } {
  return { keys: [publicJwk] };
}
