/** Faults of the discovery documents and of resource shapes the run-wide checks see. */
import type { FaultDef, FaultResponse, FaultRequest } from './types.js';
import { CATALOG_SYSTEM } from '../../service/catalog.js';

type Json = Record<string, unknown>;
const isJson = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Rewrites the body of the responses to one path when it is a JSON object. */
function onPath(match: (req: FaultRequest) => boolean, edit: (body: Json) => Json) {
  return (res: FaultResponse, req: FaultRequest): FaultResponse =>
    match(req) && res.status < 300 && isJson(res.body) ? { ...res, body: edit(structuredClone(res.body)) } : res;
}

const path = (p: string) => (req: FaultRequest) => req.method === 'GET' && req.path === p;
const opIs = (id: string) => (req: FaultRequest) => req.op?.operationId === id;

export const faults: FaultDef[] = [
  {
    name: 'token-endpoint-elsewhere',
    area: 'discovery',
    violates: ['discovery.token-endpoint-path'],
    symptom: 'smart-configuration names /oauth2/token (which does not exist) instead of /auth/token on the base address.',
    checks: ['discovery.token-endpoint-advertised'],
    transformResponse: onPath(path('/fhir/.well-known/smart-configuration'), (b) => ({ ...b, token_endpoint: String(b.token_endpoint).replace('/auth/token', '/oauth2/token') })),
  },
  {
    name: 'token-endpoint-not-on-base',
    area: 'discovery',
    violates: ['discovery.token-endpoint-path'],
    symptom: 'POST /auth/token on the base address answers 404 SVC-00002 to a valid token request.',
    checks: ['discovery.token-endpoint-on-base'],
    transformResponse: (res, req) =>
      req.method === 'POST' && req.path === '/auth/token' && res.status === 200
        ? {
            status: 404,
            headers: { ...res.headers, 'content-type': 'application/fhir+json; charset=utf-8' },
            body: { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'not-found', diagnostics: 'SVC-00002: Resource not found', details: { coding: [{ system: CATALOG_SYSTEM, code: 'SVC-00002' }] } }] },
          }
        : res,
  },
  {
    name: 'smart-configuration-without-jwks-uri',
    area: 'discovery',
    violates: ['discovery.smart-configuration-fields'],
    symptom: 'smart-configuration lacks jwks_uri.',
    checks: ['discovery.smart-configuration-fields'],
    transformResponse: onPath(path('/fhir/.well-known/smart-configuration'), ({ jwks_uri: _drop, ...rest }) => rest),
  },
  {
    name: 'jwks-key-rotated-away',
    area: 'discovery',
    violates: ['discovery.jwks-verifies-tokens'],
    symptom: 'jwks.json publishes the signing key under another kid, so issued tokens do not verify against it.',
    checks: ['discovery.jwks-verifies-access-tokens'],
    transformResponse: onPath(path('/fhir/.well-known/jwks.json'), (b) => ({
      ...b,
      keys: Array.isArray(b.keys) ? b.keys.map((k) => (isJson(k) ? { ...k, kid: `retired-${String(k.kid)}` } : k)) : b.keys,
    })),
  },
  {
    name: 'metadata-not-a-valid-capability-statement',
    area: 'discovery',
    violates: ['discovery.metadata-capability-statement'],
    symptom: 'GET /fhir/R4/metadata answers a CapabilityStatement without status and kind, invalid against the R4 schema.',
    checks: ['discovery.metadata-without-auth'],
    transformResponse: onPath(path('/fhir/R4/metadata'), ({ status: _s, kind: _k, ...rest }) => ({ ...rest, fhirVersion: 4 })),
  },
  {
    name: 'openapi-operation-without-scope',
    area: 'discovery',
    violates: ['discovery.openapi-x-service-scope'],
    symptom: 'One OpenAPI operation (GET /fhir/R4/Encounter/{id}) lacks x-service-scope.',
    checks: ['discovery.openapi-service-scope'],
    transformResponse: onPath(path('/openapi.json'), (b) => {
      const op = (b.paths as Json | undefined)?.['/fhir/R4/Encounter/{id}'] as Json | undefined;
      if (isJson(op?.get)) delete (op.get as Json)['x-service-scope'];
      return b;
    }),
  },
  {
    name: 'openapi-missing-encounter-update',
    area: 'discovery',
    violates: ['discovery.openapi-covers-r4', 'discovery.capability-openapi-agree'],
    symptom: 'The OpenAPI document omits PUT /fhir/R4/Encounter/{id}, which the CapabilityStatement lists.',
    checks: ['discovery.openapi-covers-r4-endpoints', 'discovery.capability-agrees-with-openapi'],
    transformResponse: onPath(path('/openapi.json'), (b) => {
      const op = (b.paths as Json | undefined)?.['/fhir/R4/Encounter/{id}'] as Json | undefined;
      if (op) delete op.put;
      return b;
    }),
  },
  {
    name: 'capability-search-param-drift',
    area: 'discovery',
    violates: ['discovery.capability-openapi-agree'],
    symptom: 'The CapabilityStatement lists an Encounter search parameter `location` that the OpenAPI document does not.',
    checks: ['discovery.capability-agrees-with-openapi'],
    transformResponse: onPath(path('/fhir/R4/metadata'), (b) => {
      for (const rest of (b.rest as Json[] | undefined) ?? [])
        for (const r of (rest.resource as Json[] | undefined) ?? [])
          if (r.type === 'Encounter') r.searchParam = [...((r.searchParam as unknown[]) ?? []), { name: 'location', type: 'reference' }];
      return b;
    }),
  },
  {
    name: 'medication-request-subject-as-string',
    area: 'general',
    violates: ['general.fhir-json-resources'],
    symptom: 'MedicationRequest reads carry subject as a bare string, which is not valid FHIR R4.',
    checks: ['invariants.fhir-json-resources'],
    transformResponse: onPath(opIs('MedicationRequest.read'), (b) => ({ ...b, subject: (b.subject as Json | undefined)?.reference ?? 'Patient' })),
  },
  {
    name: 'encounter-read-without-status',
    area: 'encounter',
    violates: ['encounter.status-required'],
    checks: ['encounter.read-shape'],
    symptom: 'Encounter reads omit status.',
    transformResponse: onPath(opIs('Encounter.read'), ({ status: _s, ...rest }) => rest),
  },
  {
    name: 'encounter-read-without-class',
    area: 'encounter',
    violates: ['encounter.class-required'],
    checks: ['encounter.read-shape'],
    symptom: 'Encounter reads omit class.',
    transformResponse: onPath(opIs('Encounter.read'), ({ class: _c, ...rest }) => rest),
  },
  {
    name: 'encounter-read-wrong-resource-type',
    area: 'encounter',
    violates: ['encounter.resource-type'],
    checks: ['encounter.read-shape'],
    symptom: 'Encounter reads say resourceType "EpisodeOfCare".',
    transformResponse: onPath(opIs('Encounter.read'), (b) => ({ ...b, resourceType: 'EpisodeOfCare' })),
  },
  {
    name: 'encounter-read-status-203',
    area: 'encounter',
    violates: ['encounter.read-returns-200'],
    checks: ['encounter.read-shape'],
    symptom: 'Encounter reads answer 203 instead of 200.',
    transformResponse: (res, req) => (opIs('Encounter.read')(req) && res.status === 200 ? { ...res, status: 203 } : res),
  },
  {
    name: 'encounter-diagnosis-condition-missing',
    area: 'encounter',
    violates: ['encounter.contained-condition-per-diagnosis'],
    checks: ['encounter.diagnosis-contained-conditions'],
    symptom: 'An Encounter drops the contained Condition of its last diagnosis while the diagnosis still references it.',
    transformResponse: onPath(opIs('Encounter.read'), (b) => {
      const diagnoses = (b.diagnosis as Json[] | undefined) ?? [];
      const last = diagnoses[diagnoses.length - 1];
      const ref = String((last?.condition as Json | undefined)?.reference ?? '').replace(/^#/, '');
      return ref ? { ...b, contained: ((b.contained as Json[] | undefined) ?? []).filter((c) => c.id !== ref) } : b;
    }),
  },
  {
    name: 'encounter-no-primary-diagnosis',
    area: 'encounter',
    violates: ['encounter.diagnosis-rank-primary'],
    checks: ['encounter.diagnosis-ranks'],
    symptom: 'The primary diagnosis carries rank 2: no diagnosis has rank 1.',
    transformResponse: onPath(opIs('Encounter.read'), (b) => ({
      ...b,
      diagnosis: ((b.diagnosis as Json[] | undefined) ?? []).map((d) => (d.rank === 1 ? { ...d, rank: 2 } : d)),
    })),
  },
  {
    name: 'empty-search-total-missing',
    area: 'pagination',
    violates: ['pagination.empty-total-zero'],
    symptom: 'An empty searchset carries total 1.',
    checks: ['pagination.empty-result.medication-request', 'pagination.empty-result.encounter', 'pagination.empty-result.document-reference'],
    transformResponse: (res) => {
      const b = res.body as Json | undefined;
      return isJson(b) && b.resourceType === 'Bundle' && Array.isArray(b.entry) && b.entry.length === 0 ? { ...res, body: { ...b, total: 1 } } : res;
    },
  },
  {
    name: 'token-endpoint-refuses-client-credentials',
    area: 'auth',
    violates: ['auth.client-credentials', 'auth.token-client-assertion', 'auth.token-grant-type', 'auth.token-assertion-type', 'auth.token-form-encoded'],
    symptom: 'A valid client_credentials request with a valid client assertion gets 400 and no token.',
    checks: ['auth.token-issued-for-valid-request'],
    transformResponse: (res, req) =>
      req.method === 'POST' && req.path === '/auth/token' && res.status === 200
        ? {
            status: 400,
            headers: { ...res.headers, 'content-type': 'application/fhir+json; charset=utf-8' },
            body: { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'not-supported', diagnostics: 'unsupported grant type' }] },
          }
        : res,
  },
];

faults.push({
  name: 'access-token-dies-early',
  area: 'token-lifetime',
  violates: ['token-lifetime.five-minutes'],
  symptom: 'Access tokens expire at a third of their lifetime (expires_in still announces the full lifetime).',
  checks: ['token-lifetime.valid-before-expiry'],
});

faults.push({
  name: 'invalid-body-accepted',
  area: 'generated',
  violates: ['catalog.hpb-00101-schema', 'catalog.hpb-00101-required-fields'],
  symptom: 'A create or update whose body breaks the schema or lacks required fields is answered 200 instead of 400/422 HPB-00101.',
  checks: ['generated.medication-request-create.invalid-missing-subject', 'generated.medication-request-update.invalid-wrong-type-subject', 'generated.encounter-create.invalid-missing-class', 'generated.encounter-update.invalid-wrong-resource-type'],
  transformResponse: (res, req) => {
    const issue = (res.body as { issue?: Array<{ details?: { coding?: Array<{ code?: unknown }> } }> } | undefined)?.issue?.[0];
    const validation = issue?.details?.coding?.some((c) => c.code === 'HPB-00101');
    return (req.method === 'POST' || req.method === 'PUT') && req.op && validation && (res.status === 400 || res.status === 422) ? { ...res, status: 200 } : res;
  },
});
