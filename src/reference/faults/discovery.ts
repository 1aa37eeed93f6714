/** Faults of the discovery documents (suites/discovery): OpenAPI, CapabilityStatement, smart-configuration, the key set. */
import { isObject, onPath, path, type Json } from './edit.js';
import type { FaultDef } from './types.js';
import { CATALOG_SYSTEM } from '../../service/catalog.js';

export const faults: FaultDef[] = [
  {
    name: 'token-endpoint-elsewhere',
    area: 'discovery',
    violates: ['discovery.token-endpoint-path'],
    symptom: 'smart-configuration names /oauth2/token (which does not exist) instead of /auth/token on the base address.',
    checks: ['discovery.token-endpoint-advertised'],
    transformResponse: onPath(path('/fhir/.well-known/smart-configuration'), (b) => ({
      ...b,
      token_endpoint: String(b.token_endpoint).replace('/auth/token', '/oauth2/token'),
    })),
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
            body: {
              resourceType: 'OperationOutcome',
              issue: [
                {
                  severity: 'error',
                  code: 'not-found',
                  diagnostics: 'SVC-00002: Resource not found',
                  details: { coding: [{ system: CATALOG_SYSTEM, code: 'SVC-00002' }] },
                },
              ],
            },
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
      keys: Array.isArray(b.keys) ? b.keys.map((k) => (isObject(k) ? { ...k, kid: `retired-${String(k.kid)}` } : k)) : b.keys,
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
    name: 'openapi-version-3-0-1',
    area: 'discovery',
    violates: ['discovery.openapi-3-0-3'],
    symptom: '/openapi.json declares "openapi": "3.0.1" (an older generator) instead of 3.0.3; the document is otherwise unchanged and usable.',
    checks: ['discovery.openapi-version'],
    transformResponse: onPath(path('/openapi.json'), (b) => ({ ...b, openapi: '3.0.1' })),
  },
  {
    name: 'openapi-operation-without-scope',
    area: 'discovery',
    violates: ['discovery.openapi-x-service-scope'],
    symptom: 'One OpenAPI operation (GET /fhir/R4/Encounter/{id}) lacks x-service-scope.',
    checks: ['discovery.openapi-service-scope'],
    transformResponse: onPath(path('/openapi.json'), (b) => {
      const op = (b.paths as Json | undefined)?.['/fhir/R4/Encounter/{id}'] as Json | undefined;
      if (isObject(op?.get)) delete (op.get as Json)['x-service-scope'];
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
    name: 'metadata-requires-auth',
    area: 'discovery',
    violates: ['discovery.metadata-no-auth'],
    symptom: 'GET /fhir/R4/metadata without a bearer token gives 401.',
    checks: ['discovery.metadata-without-auth'],
  },
  {
    name: 'openapi-path-level-scope-wrong',
    area: 'discovery',
    violates: ['discovery.openapi-covers-r4', 'discovery.capability-openapi-agree'],
    symptom:
      'GET /fhir/R4/Encounter/{id} loses its own x-service-scope; its path item carries x-service-scope system/Encounter.cru, so the read is published with the update scope (only a reader of path-level extensions sees it).',
    checks: ['discovery.openapi-covers-r4-endpoints', 'discovery.capability-agrees-with-openapi'],
    transformResponse: onPath(path('/openapi.json'), (b) => {
      const item = (b.paths as Json | undefined)?.['/fhir/R4/Encounter/{id}'] as Json | undefined;
      if (isObject(item?.get)) {
        delete (item.get as Json)['x-service-scope'];
        item['x-service-scope'] = 'system/Encounter.cru';
      }
      return b;
    }),
  },
  {
    name: 'openapi-operation-server-elsewhere',
    area: 'discovery',
    violates: ['discovery.openapi-covers-r4', 'discovery.capability-openapi-agree'],
    symptom:
      'PUT /fhir/R4/Encounter/{id} declares its own servers entry {base}/v2, so the document places it at /v2/fhir/R4/Encounter/{id}, which is not served (only a reader of operation-level servers sees it).',
    checks: ['discovery.openapi-covers-r4-endpoints', 'discovery.capability-agrees-with-openapi'],
    transformResponse: onPath(path('/openapi.json'), (b) => {
      const item = (b.paths as Json | undefined)?.['/fhir/R4/Encounter/{id}'] as Json | undefined;
      const server = Array.isArray(b.servers) && isObject(b.servers[0]) ? String(b.servers[0].url) : '';
      if (isObject(item?.put)) (item.put as Json).servers = [{ url: `${server.replace(/\/$/, '')}/v2` }];
      return b;
    }),
  },
];
