import { afterEach, describe, expect, it } from 'vitest';
import { discover } from '../../src/discovery/index.js';
import type { ModelOperation } from '../../src/discovery/model.js';
import { loadOpenApi, openApiEntries, operationsFromOpenApi, serverPrefix } from '../../src/discovery/openapi.js';
import { HttpClient } from '../../src/http/client.js';
import { createReferenceServer } from '../../src/reference/index.js';
import type { ReferenceModes } from '../../src/reference/types.js';

type Json = Record<string, unknown>;

const ok = { '200': { description: 'ok' } };
const scoped = (scope: string, extra: Json = {}) => ({ 'x-service-scope': scope, responses: ok, ...extra });

/** Reads a document as discovery does: validated and dereferenced, then its operations relative to `baseUrl`. */
async function read(doc: Json, baseUrl = 'http://target.test/') {
  const problems: string[] = [];
  const notes: string[] = [];
  const api = await loadOpenApi(doc, (p) => problems.push(p));
  const ops = api
    ? operationsFromOpenApi(
        api,
        (p) => problems.push(p),
        { baseUrl },
        (p) => notes.push(p),
      )
    : [];
  return { ops, problems, notes, api };
}

const routes = (ops: ModelOperation[]) => ops.map((o) => `${o.method} ${o.path} ${o.release} ${o.interaction}${o.scope ? ` ${o.scope}` : ''}`);

function document(extra: Json): Json {
  return { openapi: '3.0.3', info: { title: 't', version: '1' }, paths: {}, ...extra };
}

describe('OpenAPI servers: paths are relative to the server URL', () => {
  it('a relative server URL with a variable at its default (the issue: {base}/fhir/R4 with /MedicationRequest/{id})', async () => {
    const { ops, problems, notes } = await read(
      document({
        servers: [{ url: '{base}/fhir/R4', variables: { base: { default: '' } } }],
        paths: { '/MedicationRequest/{id}': { get: scoped('system/MedicationRequest.rs'), put: scoped('system/MedicationRequest.cru') } },
      }),
    );
    expect(routes(ops)).toEqual([
      'GET /fhir/R4/MedicationRequest/{id} R4 read system/MedicationRequest.rs',
      'PUT /fhir/R4/MedicationRequest/{id} R4 update system/MedicationRequest.cru',
    ]);
    expect(problems).toEqual([]);
    expect(notes).toEqual([]);
  });

  it('no servers: paths are relative to the base URL', async () => {
    const { ops, notes } = await read(document({ paths: { '/fhir/R4/Encounter': { get: scoped('system/Encounter.rs') } } }), 'http://target.test/api');
    expect(routes(ops)).toEqual(['GET /fhir/R4/Encounter R4 search-type system/Encounter.rs']);
    expect(notes).toEqual([]);
  });

  it.each([
    ['absolute, under a base URL with a path', 'http://target.test/api/fhir/R4', '/fhir/R4'],
    ['relative to the document URL (no leading slash)', 'fhir/R4', '/fhir/R4'],
    ['relative with dot segments', './fhir/R4/', '/fhir/R4'],
    ['absolute path under the base path', '/api/fhir/{release}', '/fhir/R5'],
    ['the base URL itself', 'http://target.test/api', ''],
  ])('%s: %s', (_name, url, prefix) => {
    const notes: string[] = [];
    const servers = [{ url, variables: { release: { default: 'R5', enum: ['R4', 'R5'] } } }];
    expect(serverPrefix(servers, { baseUrl: 'http://target.test/api' }, (p) => notes.push(p))).toBe(prefix);
    expect(notes).toEqual([]);
  });

  it('several entries: the first under the base URL is used; a variable without a default is not', () => {
    const notes: string[] = [];
    const servers = [{ url: 'https://production.example/fhir/R4' }, { url: '/{root}/R4' }, { url: '/{root}/R4', variables: { root: { default: 'fhir' } } }];
    expect(serverPrefix(servers, { baseUrl: 'http://target.test/' }, (p) => notes.push(p))).toBe('/fhir/R4');
    expect(notes).toEqual(['/openapi.json: server URL /{root}/R4 has a variable without a default; not used']);
  });

  it('a server on another origin only: noted, its path read under the base URL (no other host is called)', async () => {
    const { ops, notes, problems } = await read(
      document({ servers: [{ url: 'https://production.example/fhir/R4' }], paths: { '/Encounter/{id}': { get: scoped('system/Encounter.rs') } } }),
    );
    expect(routes(ops)).toEqual(['GET /fhir/R4/Encounter/{id} R4 read system/Encounter.rs']);
    expect(problems).toEqual([]);
    expect(notes).toEqual([
      '/openapi.json: server URL https://production.example/fhir/R4 resolves to https://production.example/fhir/R4, on another origin than the base URL http://target.test/; its paths are read under the base URL (/fhir/R4), no other host is called',
    ]);
  });

  it('per-path servers override the document, per-operation servers override the path; the release follows from the full path', async () => {
    const r5 = [{ url: '/fhir/R5' }];
    const { ops } = await read(
      document({
        servers: [{ url: '/fhir/R4' }],
        paths: {
          '/Encounter': { get: scoped('system/Encounter.rs') },
          '/DocumentReference': {
            servers: r5,
            get: scoped('system/DocumentReference.rs'),
            post: scoped('system/DocumentReference.cru', { servers: [{ url: '/fhir/R4' }] }),
          },
          '/DocumentReference/{id}': { get: scoped('system/DocumentReference.rs', { servers: r5 }) },
        },
      }),
    );
    expect(routes(ops)).toEqual([
      'GET /fhir/R4/Encounter R4 search-type system/Encounter.rs',
      'GET /fhir/R5/DocumentReference R5 search-type system/DocumentReference.rs',
      'POST /fhir/R4/DocumentReference R4 create system/DocumentReference.cru',
      'GET /fhir/R5/DocumentReference/{id} R5 read system/DocumentReference.rs',
    ]);
  });
});

describe('OpenAPI components, parameters and extensions', () => {
  const withRefs = () =>
    document({
      servers: [{ url: '/fhir/R4' }],
      paths: {
        '/Encounter': {
          'x-catalog-codes': ['HPB-00104'],
          parameters: [
            { $ref: '#/components/parameters/count' },
            { name: 'status', in: 'query', schema: { type: 'string' } },
            { name: 'status', in: 'header', schema: { type: 'string' } },
          ],
          get: {
            'x-service-scope': 'system/Encounter.rs',
            parameters: [{ name: '_count', in: 'query', required: true, schema: { type: 'integer' } }],
            responses: { '200': { $ref: '#/components/responses/Bundle' }, '429': { $ref: '#/components/responses/Throttled' } },
          },
          post: {
            'x-service-scope': 'system/Encounter.cru',
            'x-catalog-codes': ['HPB-00101'],
            requestBody: { $ref: '#/components/requestBodies/Encounter' },
            responses: { '201': { description: 'created' }, '422': { $ref: '#/components/responses/Throttled' } },
          },
        },
        '/Encounter/{id}': {
          'x-service-scope': 'system/Encounter.rs',
          parameters: [{ $ref: '#/components/parameters/id' }],
          get: { responses: ok },
          put: scoped('system/Encounter.cru'),
        },
      },
      components: {
        parameters: {
          id: { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
          count: { name: '_count', in: 'query', schema: { type: 'string' } },
        },
        schemas: { Encounter: { type: 'object', required: ['resourceType'], properties: { resourceType: { type: 'string' } } } },
        requestBodies: { Encounter: { content: { 'application/fhir+json': { schema: { $ref: '#/components/schemas/Encounter' } } } } },
        responses: {
          Bundle: { description: 'Bundle', content: { 'application/fhir+json': { schema: { type: 'object', title: 'Bundle' } } } },
          Throttled: { description: 'HPB-00105 throttled' },
        },
      },
    });

  it('$ref parameters, request bodies and responses are read as if written in place', async () => {
    const { ops, problems } = await read(withRefs());
    const search = ops.find((o) => o.interaction === 'search-type')!;
    const create = ops.find((o) => o.interaction === 'create')!;
    expect(problems).toEqual([]);
    expect(search.responseSchema).toEqual({ type: 'object', title: 'Bundle' });
    expect(search.errorStatuses).toEqual([429]);
    expect(create.requestSchema).toEqual({ type: 'object', required: ['resourceType'], properties: { resourceType: { type: 'string' } } });
    expect(create.requestMediaTypes).toEqual(['application/fhir+json']);
    expect(create.errorStatuses).toEqual([422]);
  });

  it("path-level parameters merge with the operation's: the operation's win by name and location", async () => {
    const { ops } = await read(withRefs());
    expect(ops.find((o) => o.interaction === 'search-type')!.searchParams).toEqual([
      { name: '_count', type: 'integer', required: true },
      { name: 'status', type: 'string' },
    ]);
    expect(ops.find((o) => o.interaction === 'create')!.searchParams).toEqual([
      { name: '_count', type: 'string' },
      { name: 'status', type: 'string' },
    ]);
  });

  it("x-service-scope and x-catalog-codes of the path item apply where the operation has none; the operation's win", async () => {
    const { ops, problems } = await read(withRefs());
    expect(routes(ops)).toEqual([
      'GET /fhir/R4/Encounter R4 search-type system/Encounter.rs',
      'POST /fhir/R4/Encounter R4 create system/Encounter.cru',
      'GET /fhir/R4/Encounter/{id} R4 read system/Encounter.rs',
      'PUT /fhir/R4/Encounter/{id} R4 update system/Encounter.cru',
    ]);
    expect(ops.find((o) => o.interaction === 'search-type')!.errorCodes).toEqual(['HPB-00104']);
    expect(ops.find((o) => o.interaction === 'create')!.errorCodes).toEqual(['HPB-00101']);
    expect(problems).toEqual([]);
    const api = (await read(withRefs())).api;
    expect([...openApiEntries(api)].map((e) => `${e.method} ${e.path} ${String(e.scope)}`)).toEqual([
      'get /Encounter system/Encounter.rs',
      'post /Encounter system/Encounter.cru',
      'get /Encounter/{id} system/Encounter.rs',
      'put /Encounter/{id} system/Encounter.cru',
    ]);
  });

  it('OpenAPI 3.1 where the document says so: $ref path items from components.pathItems', async () => {
    const { ops, problems } = await read({
      openapi: '3.1.0',
      info: { title: 't', version: '1' },
      servers: [{ url: '/{root}/R4', variables: { root: { default: 'fhir' } } }],
      paths: { '/Encounter/{id}': { $ref: '#/components/pathItems/EncounterById' } },
      components: {
        pathItems: {
          EncounterById: {
            'x-service-scope': 'system/Encounter.rs',
            parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
            get: { responses: ok },
          },
        },
      },
    });
    expect(routes(ops)).toEqual(['GET /fhir/R4/Encounter/{id} R4 read system/Encounter.rs']);
    expect(problems).toEqual(['/openapi.json is OpenAPI 3.1.0, expected 3.0.3 (read anyway)']);
  });
});

describe("the embedded reference's servers-relative OpenAPI document", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });
  async function model(modes: Partial<ReferenceModes>) {
    const server = await createReferenceServer({ host: '127.0.0.1', port: 0, modes });
    cleanups.push(() => server.close());
    const http = new HttpClient({ baseUrl: server.url });
    cleanups.push(() => http.close());
    return discover(http);
  }
  const shape = (o: ModelOperation) => ({
    id: o.operationId,
    route: `${o.method} ${o.path}`,
    scope: o.scope,
    params: o.searchParams,
    statuses: o.errorStatuses,
    codes: o.errorCodes,
    response: o.responseSchema !== undefined,
  });

  it('reads the same R4 operations as the absolute form, and the R5 surface from the document', async () => {
    const absolute = await model({});
    const relative = await model({ openapiForm: 'servers-relative' });
    expect(relative.problems).toEqual([]);
    expect(relative.divergences).toEqual([]);
    expect(relative.specDivergences).toEqual([]);
    expect(relative.notCompared).toBeUndefined();
    const fromOpenApi = (m: typeof absolute, release: string) => m.operations.filter((o) => o.release === release && o.sources.includes('openapi'));
    expect(fromOpenApi(relative, 'R4').map(shape)).toEqual(fromOpenApi(absolute, 'R4').map(shape));
    expect(fromOpenApi(relative, 'R4')).toHaveLength(8);
    expect(fromOpenApi(relative, 'R5').map((o) => `${o.method} ${o.path} ${o.scope}`)).toEqual([
      'GET /fhir/R5/DocumentReference system/DocumentReference.rs',
      'POST /fhir/R5/DocumentReference system/DocumentReference.cru',
      'GET /fhir/R5/DocumentReference/{id} system/DocumentReference.rs',
      'PUT /fhir/R5/DocumentReference/{id} system/DocumentReference.cru',
      'POST /fhir/R5/DocumentReference/{id}/$upload system/DocumentReference.cru',
    ]);
    expect(relative.operations.find((o) => o.operationName === 'upload')!.requestMediaTypes).toEqual([
      'application/pdf',
      'image/png',
      'image/jpeg',
      'text/plain',
    ]);
  });
});
