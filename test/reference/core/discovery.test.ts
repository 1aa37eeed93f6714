import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import SwaggerParser from '@apidevtools/swagger-parser';
import { operationsFor } from '../../../src/service/api.js';
import { REQUIRED_SCOPE_EXTENSION, OPERATION_PATH_EXTENSION } from '../../../src/reference/discovery.js';
import { schemaProblem } from '../../../src/reference/resources/fhir-schema.js';
import type { ReferenceServer } from '../../../src/reference/server.js';
import { accessToken, call, codeOf, startStub } from './helpers.js';

let server: ReferenceServer;
beforeAll(async () => {
  server = await startStub();
});
afterAll(() => server.close());

type Ops = Record<string, Record<string, any>>;

describe('/openapi.json', () => {
  test('is a valid OpenAPI 3.0.3 document of the R4 operations, each with x-service-scope', async () => {
    const r = await call(`${server.url}/openapi.json`);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.headers['x-ratelimit-limit']).toBe('600');
    expect(r.json.openapi).toBe('3.0.3');
    await SwaggerParser.validate(structuredClone(r.json));
    const ops = Object.values(r.json.paths as Record<string, Ops>).flatMap((p) => Object.values(p));
    expect(ops.map((o) => o.operationId).sort()).toEqual(
      operationsFor('R4')
        .map((o) => o.operationId)
        .sort(),
    );
    for (const op of ops) {
      const def = operationsFor('R4').find((o) => o.operationId === op.operationId)!;
      expect(op['x-service-scope']).toBe(def.scope);
      for (const e of def.errors) {
        expect(op.responses[String(e.status)]['x-catalog-codes']).toContain(e.code);
        expect(op.responses[String(e.status)].content['application/fhir+json'].schema.$ref).toBe('#/components/schemas/OperationOutcome');
      }
      expect(op.security).toEqual([{ bearerAuth: [] }]);
    }
    expect(r.json.paths['/fhir/R4/MedicationRequest'].post.responses['201']).toBeDefined();
    expect(r.json.paths['/fhir/R4/MedicationRequest/{id}'].put.responses['200']).toBeDefined();
  });

  test('success statuses follow the modes', async () => {
    const s = await startStub({ modes: { createStatus: 200, updateStatus: 201 } });
    try {
      const doc = (await call(`${s.url}/openapi.json`)).json;
      expect(Object.keys(doc.paths['/fhir/R4/Encounter'].post.responses)).toContain('200');
      expect(Object.keys(doc.paths['/fhir/R4/Encounter/{id}'].put.responses)).toContain('201');
    } finally {
      await s.close();
    }
  });
});

describe('mode discoveryAuth=required', () => {
  test('openapi.json, smart-configuration and jwks.json want a valid bearer (401 SVC-00004 without); R4 metadata stays open', async () => {
    const s = await startStub({ modes: { discoveryAuth: 'required' } });
    try {
      const token = await accessToken(s, 'main', 'system/MedicationRequest.rs');
      for (const path of ['/openapi.json', '/fhir/.well-known/smart-configuration', '/fhir/.well-known/jwks.json']) {
        const open = await call(`${s.url}${path}`);
        expect([path, open.status, codeOf(open)]).toEqual([path, 401, 'SVC-00004']);
        expect((await call(`${s.url}${path}`, { headers: { authorization: 'Bearer not-a-token' } })).status).toBe(401);
        expect([path, (await call(`${s.url}${path}`, { headers: { authorization: `Bearer ${token}` } })).status]).toEqual([path, 200]);
      }
      expect((await call(`${s.url}/fhir/R4/metadata`, { headers: { accept: 'application/fhir+json' } })).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe('CapabilityStatements', () => {
  test('R4 metadata needs no auth, validates against the HL7 R4 schema, and agrees with the OpenAPI document', async () => {
    const r = await call(`${server.url}/fhir/R4/metadata`, { headers: { accept: 'application/fhir+json' } });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/fhir+json; charset=utf-8');
    const cs = r.json;
    expect(cs).toMatchObject({ resourceType: 'CapabilityStatement', status: 'active', kind: 'instance', fhirVersion: '4.0.1', format: ['json'] });
    expect(schemaProblem('R4', 'CapabilityStatement', cs)).toBeUndefined();
    const rest = cs.rest[0];
    expect(rest.mode).toBe('server');
    expect(JSON.stringify(rest.security)).toContain(`${server.url}/auth/token`);

    const openapi = (await call(`${server.url}/openapi.json`)).json;
    const fromOpenApi = Object.values(openapi.paths as Record<string, Ops>)
      .flatMap((p) => Object.values(p))
      .map((o) => `${o.operationId} ${o['x-service-scope']}`)
      .sort();
    const fromCs = rest.resource
      .flatMap((res: any) =>
        res.interaction.map(
          (i: any) =>
            `${res.type}.${i.code === 'search-type' ? 'search' : i.code} ${i.extension.find((e: any) => e.url === REQUIRED_SCOPE_EXTENSION).valueString}`,
        ),
      )
      .sort();
    expect(fromCs).toEqual(fromOpenApi);

    const mrSearch = openapi.paths['/fhir/R4/MedicationRequest'].get.parameters.map((p: any) => p.name).sort();
    const mrCs = rest.resource
      .find((x: any) => x.type === 'MedicationRequest')
      .searchParam.map((p: any) => p.name)
      .sort();
    expect(mrCs).toEqual(mrSearch);
  });

  test('R5 metadata publishes DocumentReference and the upload path, following modes.uploadPath', async () => {
    for (const uploadPath of ['$upload', '$binary-upload'] as const) {
      const s = await startStub({ modes: { uploadPath } });
      try {
        const cs = (await call(`${s.url}/fhir/R5/metadata`)).json;
        expect(cs.fhirVersion).toBe('5.0.0');
        expect(schemaProblem('R5', 'CapabilityStatement', cs)).toBeUndefined();
        const doc = cs.rest[0].resource.find((x: any) => x.type === 'DocumentReference');
        expect(doc.interaction.map((i: any) => i.code).sort()).toEqual(['create', 'read', 'search-type', 'update']);
        const upload = doc.operation[0];
        expect(upload.name).toBe('upload');
        expect(upload.extension.find((e: any) => e.url === OPERATION_PATH_EXTENSION).valueString).toBe(`/fhir/R5/DocumentReference/{id}/${uploadPath}`);
      } finally {
        await s.close();
      }
    }
  });
});

test('smart-configuration and JWKS need no auth', async () => {
  const r = await call(`${server.url}/fhir/.well-known/smart-configuration`);
  expect(r.status).toBe(200);
  expect(r.headers['content-type']).toMatch(/^application\/json/);
  expect(r.json).toMatchObject({
    token_endpoint: `${server.url}/auth/token`,
    jwks_uri: `${server.url}/fhir/.well-known/jwks.json`,
    grant_types_supported: ['client_credentials'],
    token_endpoint_auth_methods_supported: ['private_key_jwt'],
    token_endpoint_auth_signing_alg_values_supported: ['RS384', 'ES384', 'RS256', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES512', 'EdDSA'],
  });
  expect(r.json.scopes_supported).toContain('system/MedicationRequest.c');
  const keys = await call(r.json.jwks_uri);
  expect(keys.json.keys[0]).toMatchObject({ kty: 'EC', alg: 'ES256', use: 'sig', kid: expect.any(String) });
  expect(keys.json.keys[0].d).toBeUndefined();
});

describe('faults', () => {
  test('metadata-requires-auth: metadata gives 401 without a token', async () => {
    const s = await startStub({ faults: ['metadata-requires-auth'] });
    try {
      const r = await call(`${s.url}/fhir/R4/metadata`);
      expect(r.status).toBe(401);
      expect(codeOf(r)).toBe('SVC-00004');
    } finally {
      await s.close();
    }
  });

  test('no-correlation-id: responses lack X-Correlation-Id', async () => {
    const s = await startStub({ faults: ['no-correlation-id'] });
    try {
      const r = await call(`${s.url}/fhir/R4/metadata`);
      expect(r.status).toBe(200);
      expect(r.headers['x-correlation-id']).toBeUndefined();
      expect(r.headers['x-ratelimit-limit']).toBe('600');
    } finally {
      await s.close();
    }
  });
});

test('targetConfig names every role with absolute key paths and the fixture ids', () => {
  const cfg = server.targetConfig();
  expect(cfg.baseUrl).toBe(server.url);
  expect(cfg.tokenUrl).toBe(`${server.url}/auth/token`);
  expect(cfg.clients.map((c) => c.role)).toEqual(['main', 'extra', 'second-org', 'production']);
  for (const c of cfg.clients) {
    expect(c.privateKey.file.startsWith('/')).toBe(true);
    expect(c.kid).not.toBe('');
  }
  expect(cfg.fixtures.patient).toBe(server.fixtureIds.patient);
  expect(cfg.fixtures).not.toHaveProperty('orgA');
});
