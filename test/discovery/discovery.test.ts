import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { discover } from '../../src/discovery/index.js';
import { OPERATION_PATH_EXTENSION, REQUIRED_SCOPE_EXTENSION } from '../../src/discovery/model.js';
import { ConformanceError } from '../../src/errors.js';
import { HttpClient } from '../../src/http/client.js';
import { fakeClock, startServer } from '../http/servers.js';

type Doc = { status?: number; type?: string; body: unknown };

function openapi() {
  return {
    openapi: '3.0.3',
    info: { title: 'Clinical Records FHIR Service', version: 'v1' },
    paths: {
      '/fhir/R4/Encounter/{id}': {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        get: {
          operationId: 'Encounter.read',
          'x-service-scope': 'system/Encounter.rs',
          responses: {
            '200': { description: 'ok', content: { 'application/fhir+json': { schema: { $ref: '#/components/schemas/Encounter' } } } },
            '401': { description: 'HPB-00106 authentication failed' },
            '404': { description: 'HPB-00102: not found' },
          },
        },
      },
      '/fhir/R4/Encounter': {
        get: {
          operationId: 'Encounter.search',
          'x-service-scope': 'system/Encounter.rs',
          parameters: [
            { name: 'status', in: 'query', schema: { type: 'string' } },
            { name: '_count', in: 'query', schema: { type: 'integer' } },
            { name: 'If-None-Match', in: 'header', schema: { type: 'string' } },
          ],
          responses: { '200': { description: 'Bundle' } },
        },
        post: {
          operationId: 'Encounter.create',
          'x-service-scope': 'system/Encounter.cru',
          'x-catalog-codes': ['HPB-00101', 'HPB-00104'],
          requestBody: { content: { 'application/fhir+json': { schema: { $ref: '#/components/schemas/Encounter' } } } },
          responses: { '201': { description: 'created' }, '400': { description: 'HPB-00999 ignored when x-catalog-codes is present' } },
        },
      },
      '/openapi.json': { get: { responses: { '200': { description: 'this document' } } } },
    },
    components: { schemas: { Encounter: { type: 'object', required: ['resourceType'], properties: { resourceType: { type: 'string' } } } } },
  };
}

const scoped = (code: string, scope: string) => ({ code, extension: [{ url: REQUIRED_SCOPE_EXTENSION, valueString: scope }] });

function capabilityR4() {
  return {
    resourceType: 'CapabilityStatement',
    fhirVersion: '4.0.1',
    rest: [
      {
        mode: 'server',
        resource: [
          {
            type: 'Encounter',
            interaction: [
              scoped('read', 'system/Encounter.rs'),
              scoped('search-type', 'system/Encounter.rs'),
              scoped('create', 'system/Encounter.cru'),
              { code: 'delete' },
            ],
            searchParam: [{ name: 'status', type: 'token' }],
          },
        ],
        searchParam: [{ name: '_count', type: 'number' }],
      },
    ],
  };
}

function capabilityR5() {
  return {
    resourceType: 'CapabilityStatement',
    fhirVersion: '5.0.0',
    rest: [
      {
        mode: 'server',
        resource: [
          {
            type: 'DocumentReference',
            interaction: [scoped('read', 'system/DocumentReference.rs')],
            operation: [
              {
                name: 'upload',
                definition: 'https://clinical-records.example/fhir/OperationDefinition/upload',
                extension: [
                  { url: OPERATION_PATH_EXTENSION, valueString: '/fhir/R5/DocumentReference/{id}/$upload' },
                  { url: REQUIRED_SCOPE_EXTENSION, valueString: 'system/DocumentReference.cru' },
                ],
              },
            ],
          },
        ],
      },
    ],
  };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** Serves the given documents by path (anything else: 404) and runs discovery against them. */
async function discoverFrom(docs: Record<string, Doc>) {
  const s = await startServer((req, res) => {
    const doc = docs[req.url ?? ''];
    if (!doc) {
      res.writeHead(404, { 'content-type': 'application/fhir+json' });
      res.end('{"resourceType":"OperationOutcome","issue":[{"severity":"error","code":"not-found","diagnostics":"not found"}]}');
      return;
    }
    res.writeHead(doc.status ?? 200, { 'content-type': doc.type ?? 'application/json' });
    res.end(typeof doc.body === 'string' ? doc.body : JSON.stringify(doc.body));
  });
  cleanups.push(() => s.close());
  const clock = fakeClock(Date.now());
  const http = new HttpClient({ baseUrl: s.url, now: clock.now, sleep: clock.sleep });
  cleanups.push(() => http.close());
  const reported: string[] = [];
  const model = await discover(http, { onProblem: (p) => reported.push(p) });
  expect(reported).toEqual(model.problems);
  return model;
}

const standard = (): Record<string, Doc> => ({
  '/openapi.json': { body: openapi() },
  '/fhir/R4/metadata': { type: 'application/fhir+json', body: capabilityR4() },
  '/fhir/R5/metadata': { type: 'application/fhir+json', body: capabilityR5() },
});

describe('discover: agreement', () => {
  it('builds the model with no divergence and no problem', async () => {
    const docs = standard();
    const model = await discoverFrom(docs);
    expect(model.problems).toEqual([]);
    expect(model.divergences).toEqual([]);
    expect(model.operations.map((o) => `${o.operationId} ${o.method} ${o.path} ${o.scope} [${o.sources.join(',')}]`)).toEqual([
      'Encounter.search GET /fhir/R4/Encounter system/Encounter.rs [openapi,capability-r4]',
      'Encounter.create POST /fhir/R4/Encounter system/Encounter.cru [openapi,capability-r4]',
      'Encounter.read GET /fhir/R4/Encounter/{id} system/Encounter.rs [openapi,capability-r4]',
      'DocumentReference.search GET /fhir/R5/DocumentReference system/DocumentReference.rs [spec]',
      'DocumentReference.create POST /fhir/R5/DocumentReference system/DocumentReference.cru [spec]',
      'DocumentReference.read GET /fhir/R5/DocumentReference/{id} system/DocumentReference.rs [capability-r5]',
      'DocumentReference.update PUT /fhir/R5/DocumentReference/{id} system/DocumentReference.cru [spec]',
      'DocumentReference.upload POST /fhir/R5/DocumentReference/{id}/$upload system/DocumentReference.cru [capability-r5]',
    ]);
    // The R5 CapabilityStatement lists read only: the spec's search, create and update are filled in.
    expect(model.specDivergences).toEqual([]);
    expect(model.notes).toEqual([
      "R5 DocumentReference search-type: not published; the spec's GET /fhir/R5/DocumentReference with system/DocumentReference.rs is used",
      "R5 DocumentReference create: not published; the spec's POST /fhir/R5/DocumentReference with system/DocumentReference.cru is used",
      "R5 DocumentReference update: not published; the spec's PUT /fhir/R5/DocumentReference/{id} with system/DocumentReference.cru is used",
    ]);
    const byId = new Map(model.operations.map((o) => [o.operationId, o]));
    expect(byId.get('Encounter.search')!.searchParams).toEqual([
      { name: 'status', type: 'token' },
      { name: '_count', type: 'number' },
    ]);
    expect(byId.get('Encounter.read')).toMatchObject({
      interaction: 'read',
      resource: 'Encounter',
      release: 'R4',
      errorStatuses: [401, 404],
      errorCodes: ['HPB-00102', 'HPB-00106'],
      responseSchema: { type: 'object', required: ['resourceType'] },
    });
    expect(byId.get('Encounter.create')).toMatchObject({ errorCodes: ['HPB-00101', 'HPB-00104'], requestSchema: { type: 'object' } });
    expect(byId.get('DocumentReference.upload')).toMatchObject({
      interaction: 'operation',
      operationName: 'upload',
      definition: 'https://clinical-records.example/fhir/OperationDefinition/upload',
    });
    expect(byId.get('DocumentReference.upload')!.pathAssumed).toBeUndefined();
    expect(byId.get('DocumentReference.search')!.searchParams.map((p) => p.name)).toEqual(['patient', 'type', 'category', 'date', '_count', '_offset']);
    expect(model.hashes.openapi).toBe(createHash('sha256').update(JSON.stringify(docs['/openapi.json'].body)).digest('hex'));
    expect(model.hashes.capabilityR4).toMatch(/^[0-9a-f]{64}$/);
    expect(model.capabilityR5).toBeDefined();
  });

  it('treats a missing R5 CapabilityStatement (404) as no problem: the R5 surface the spec states is used', async () => {
    const { '/fhir/R5/metadata': _r5, ...docs } = standard();
    const model = await discoverFrom(docs);
    expect(model.problems).toEqual([]);
    expect(model.operations.filter((o) => o.release === 'R5').map((o) => `${o.operationId} ${o.method} ${o.path} ${o.scope} [${o.sources.join(',')}]`)).toEqual(
      [
        'DocumentReference.search GET /fhir/R5/DocumentReference system/DocumentReference.rs [spec]',
        'DocumentReference.create POST /fhir/R5/DocumentReference system/DocumentReference.cru [spec]',
        'DocumentReference.read GET /fhir/R5/DocumentReference/{id} system/DocumentReference.rs [spec]',
        'DocumentReference.update PUT /fhir/R5/DocumentReference/{id} system/DocumentReference.cru [spec]',
      ],
    );
    expect(model.notes?.[0]).toBe('/fhir/R5/metadata: not published');
    expect(model.hashes.capabilityR5).toBeUndefined();
  });

  it('uses what the R5 CapabilityStatement publishes over the spec, and reports where they differ', async () => {
    const docs = standard();
    const r5 = capabilityR5() as any;
    r5.rest[0].resource[0].interaction = [
      scoped('read', 'system/DocumentReference.read'),
      { code: 'search-type' },
      scoped('create', 'system/DocumentReference.cru'),
      scoped('update', 'system/DocumentReference.cru'),
    ];
    r5.rest[0].resource[0].searchParam = [
      { name: 'patient', type: 'reference' },
      { name: 'date', type: 'date' },
    ];
    docs['/fhir/R5/metadata'].body = r5;
    const model = await discoverFrom(docs);
    expect(model.problems).toEqual([]);
    expect(model.divergences).toEqual([]);
    expect(model.specDivergences).toEqual([
      'R5 DocumentReference read: the spec states scope system/DocumentReference.rs; the R5 CapabilityStatement publishes system/DocumentReference.read',
      'R5 DocumentReference search-type: the spec states search parameters type, category, _count, _offset, which the R5 CapabilityStatement does not publish',
    ]);
    const byId = new Map(model.operations.map((o) => [o.operationId, o]));
    expect(byId.get('DocumentReference.read')).toMatchObject({ scope: 'system/DocumentReference.read', sources: ['capability-r5'] });
    expect(byId.get('DocumentReference.search')).toMatchObject({ scope: 'system/DocumentReference.rs', sources: ['capability-r5', 'spec'] });
    expect(model.notes).toEqual([
      "R5 DocumentReference search-type: the R5 CapabilityStatement publishes no scope; the spec's system/DocumentReference.rs is used",
    ]);
  });

  it('reads an operation path from the documentation, and assumes the type-level form without one', async () => {
    const docs = standard();
    const r5 = capabilityR5() as any;
    r5.rest[0].resource[0].operation[0].extension = [];
    r5.rest[0].resource[0].operation[0].documentation = 'POST https://host.example/api/fhir/R5/DocumentReference/{id}/$binary-upload with the raw document';
    docs['/fhir/R5/metadata'].body = r5;
    const upload = (await discoverFrom(docs)).operations.find((o) => o.operationName === 'upload')!;
    expect(upload).toMatchObject({ path: '/fhir/R5/DocumentReference/{id}/$binary-upload', documentation: r5.rest[0].resource[0].operation[0].documentation });
    expect(upload.pathAssumed).toBeUndefined();
    expect(upload.scope).toBeUndefined();

    // Without a published path the operation is kept aside: no check calls a guessed path as if published.
    r5.rest[0].resource[0].operation[0].documentation = 'Uploads a document.';
    const model = await discoverFrom(docs);
    expect(model.operations.find((o) => o.operationName === 'upload')).toBeUndefined();
    expect(model.pathless).toMatchObject([{ operationId: 'DocumentReference.upload', path: '/fhir/R5/DocumentReference/$upload', pathAssumed: true }]);
    expect(model.problems).toEqual([]);
    expect(model.notes).toContain('/fhir/R5/metadata: operation $upload on DocumentReference publishes no path; /fhir/R5/DocumentReference/$upload assumed');
  });
});

describe('discover: an OpenAPI document that covers R5', () => {
  it('publishes the $upload path and request media types; the CapabilityStatement guess yields to it', async () => {
    const docs = standard();
    const api = openapi() as any;
    api.paths['/fhir/R5/DocumentReference/$upload'] = {
      post: {
        operationId: 'DocumentReference.upload',
        'x-service-scope': 'system/DocumentReference.cru',
        requestBody: {
          content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } }, 'image/png': { schema: { type: 'string', format: 'binary' } } },
        },
        responses: { '200': { description: 'DocumentReference' } },
      },
    };
    const r5 = capabilityR5() as any;
    r5.rest[0].resource[0].operation[0].extension = [];
    docs['/openapi.json'].body = api;
    docs['/fhir/R5/metadata'].body = r5;
    const model = await discoverFrom(docs);
    expect(model.pathless).toEqual([]);
    expect(model.operations.find((o) => o.operationName === 'upload')).toMatchObject({
      path: '/fhir/R5/DocumentReference/$upload',
      requestMediaTypes: ['application/pdf', 'image/png'],
      sources: ['openapi', 'capability-r5'],
      definition: 'https://clinical-records.example/fhir/OperationDefinition/upload',
    });
    expect(model.operations.find((o) => o.operationName === 'upload')!.pathAssumed).toBeUndefined();
  });
});

describe('discover: OperationDefinitions the CapabilityStatement names', () => {
  it("reads one the target serves: its primitive in parameters are the operation's query parameters", async () => {
    const definition = {
      resourceType: 'OperationDefinition',
      url: 'https://clinical-records.example/fhir/OperationDefinition/upload',
      kind: 'operation',
      code: 'upload',
      parameter: [
        { name: 'document', use: 'in', min: 1, max: '1', type: 'Binary' },
        { name: 'patient', use: 'in', min: 1, max: '1', type: 'id' },
        { name: 'category', use: 'in', min: 0, max: '1', type: 'code' },
        { name: 'return', use: 'out', min: 1, max: '1', type: 'DocumentReference' },
      ],
    };
    const model = await discoverFrom({ ...standard(), '/fhir/R5/OperationDefinition/upload': { type: 'application/fhir+json', body: definition } });
    expect(model.operations.find((o) => o.operationName === 'upload')!.searchParams).toEqual([
      { name: 'patient', type: 'id', required: true },
      { name: 'category', type: 'code' },
    ]);
    expect(model.notes).toContain(
      'OperationDefinition https://clinical-records.example/fhir/OperationDefinition/upload read at /fhir/R5/OperationDefinition/upload: query parameters patient, category',
    );
    expect(model.problems).toEqual([]);
  });
});

describe('discover: divergences', () => {
  it('reports an operation missing from the CapabilityStatement and one missing from the OpenAPI document', async () => {
    const docs = standard();
    const cs = capabilityR4();
    cs.rest[0].resource[0].interaction = cs.rest[0].resource[0].interaction.filter((i) => i.code !== 'create');
    cs.rest[0].resource[0].interaction.push(scoped('update', 'system/Encounter.cru'));
    docs['/fhir/R4/metadata'].body = cs;
    const model = await discoverFrom(docs);
    expect(model.divergences).toEqual([
      'POST /fhir/R4/Encounter (Encounter create) is in the OpenAPI document but not in the R4 CapabilityStatement',
      'PUT /fhir/R4/Encounter/{id} (Encounter update) is in the R4 CapabilityStatement but not in the OpenAPI document',
    ]);
    expect(model.operations.find((o) => o.method === 'PUT')!.sources).toEqual(['capability-r4']);
  });

  it('reports a different scope', async () => {
    const docs = standard();
    const cs = capabilityR4();
    cs.rest[0].resource[0].interaction[2] = scoped('create', 'system/Encounter.c');
    docs['/fhir/R4/metadata'].body = cs;
    const model = await discoverFrom(docs);
    expect(model.divergences).toEqual([
      'POST /fhir/R4/Encounter (Encounter create): scope differs: the OpenAPI document has system/Encounter.cru, the R4 CapabilityStatement has system/Encounter.c',
    ]);
    expect(model.operations.find((o) => o.operationId === 'Encounter.create')!.scope).toBe('system/Encounter.cru');
  });

  it('reports different search parameters', async () => {
    const docs = standard();
    const cs = capabilityR4();
    cs.rest[0].resource[0].searchParam = [
      { name: 'class', type: 'token' },
      { name: 'date', type: 'date' },
    ];
    docs['/fhir/R4/metadata'].body = cs;
    const model = await discoverFrom(docs);
    expect(model.divergences).toEqual([
      'GET /fhir/R4/Encounter (Encounter search-type): search parameters differ: only in the OpenAPI document: status; only in the R4 CapabilityStatement: class, date',
    ]);
  });
});

describe('discover: problems, never a throw', () => {
  it('reports an invalid OpenAPI document and keeps the CapabilityStatement operations', async () => {
    const docs = standard();
    const bad = openapi() as Record<string, unknown>;
    delete bad.info;
    docs['/openapi.json'].body = bad;
    const model = await discoverFrom(docs);
    expect(model.problems).toHaveLength(1);
    expect(model.problems[0]).toMatch(/^\/openapi\.json is not a valid OpenAPI document: .*info/);
    expect(model.divergences).toEqual([]);
    expect(model.operations.filter((o) => o.release === 'R4').map((o) => o.sources)).toEqual([['capability-r4'], ['capability-r4'], ['capability-r4']]);
  });

  it.each([
    ['Swagger 2.0', { swagger: '2.0', info: { title: 't', version: '1' }, paths: {} }, '/openapi.json is Swagger 2.0, expected OpenAPI 3.0.3'],
    ['OpenAPI 2.x', { ...openapi(), openapi: '2.1.0' }, '/openapi.json is OpenAPI 2.1.0, expected 3.0.3'],
  ])('reports a wrong version (%s)', async (_name, body, line) => {
    const model = await discoverFrom({ ...standard(), '/openapi.json': { body } });
    expect(model.problems).toEqual([line]);
    expect(model.openapi).toBeUndefined();
  });

  it('reads a 3.1 document as 3.1 but says so', async () => {
    const model = await discoverFrom({ ...standard(), '/openapi.json': { body: { ...openapi(), openapi: '3.1.0' } } });
    expect(model.problems).toEqual(['/openapi.json is OpenAPI 3.1.0, expected 3.0.3 (read anyway)']);
    expect(model.divergences).toEqual([]);
    expect(model.operations.filter((o) => o.release === 'R4').map((o) => o.sources)).toEqual([
      ['openapi', 'capability-r4'],
      ['openapi', 'capability-r4'],
      ['openapi', 'capability-r4'],
    ]);
  });

  it('reads an older 3.0.x document but says so', async () => {
    const model = await discoverFrom({ ...standard(), '/openapi.json': { body: { ...openapi(), openapi: '3.0.1' } } });
    expect(model.problems).toEqual(['/openapi.json is OpenAPI 3.0.1, expected 3.0.3 (read anyway)']);
    expect(model.divergences).toEqual([]);
  });

  it('reports HTML instead of JSON, a 500 and a non-CapabilityStatement', async () => {
    const model = await discoverFrom({
      '/openapi.json': { type: 'text/html', body: '<html><body>Welcome</body></html>' },
      '/fhir/R4/metadata': { status: 500, body: 'oops' },
      '/fhir/R5/metadata': { body: { resourceType: 'Bundle' } },
    });
    expect(model.problems).toEqual(['GET /openapi.json: body is not JSON (content-type text/html)', 'GET /fhir/R4/metadata answered 500, expected 200']);
    // The spec does not require an R5 CapabilityStatement: a bad one is a note.
    expect(model.notes?.[0]).toBe('/fhir/R5/metadata is not a CapabilityStatement (resourceType Bundle)');
    expect(model.operations.every((o) => o.sources.join() === 'spec')).toBe(true);
    expect(model.divergences).toEqual([]);
  });

  it('reports missing scopes; a wrong R5 fhirVersion and an operation without a published path are notes', async () => {
    const api = openapi();
    delete (api.paths['/fhir/R4/Encounter'].post as Record<string, unknown>)['x-service-scope'];
    const r5 = capabilityR5();
    r5.fhirVersion = '4.0.1';
    r5.rest[0].resource[0].operation[0].extension = [];
    const model = await discoverFrom({ ...standard(), '/openapi.json': { body: api }, '/fhir/R5/metadata': { body: r5 } });
    expect(model.problems).toEqual(['/openapi.json: POST /fhir/R4/Encounter has no x-service-scope']);
    expect(model.notes?.slice(0, 2)).toEqual([
      '/fhir/R5/metadata declares fhirVersion 4.0.1, expected 5.0.x',
      '/fhir/R5/metadata: operation $upload on DocumentReference publishes no path; /fhir/R5/DocumentReference/$upload assumed',
    ]);
    // The scope still comes from the CapabilityStatement.
    expect(model.operations.find((o) => o.operationId === 'Encounter.create')!.scope).toBe('system/Encounter.cru');
  });

  it('reports an unreachable target and throws only when interrupted', async () => {
    const s = await startServer(() => undefined);
    const url = s.url;
    await s.close();
    const http = new HttpClient({ baseUrl: url });
    cleanups.push(() => http.close());
    const model = await discover(http);
    expect(model.problems).toHaveLength(2);
    expect(model.problems[0]).toMatch(/^GET \/openapi\.json failed: ERR_TARGET_UNREACHABLE: connection refused by 127\.0\.0\.1:\d+$/);

    const controller = new AbortController();
    controller.abort();
    const stopped = new HttpClient({ baseUrl: url, signal: controller.signal });
    cleanups.push(() => stopped.close());
    const e = await discover(stopped).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(ConformanceError);
    expect((e as ConformanceError).code).toBe('ERR_INTERRUPTED');
  });
});

describe('discover: documents whose authentication is not stated', () => {
  /** /openapi.json answers 401 without `Bearer good`; the CapabilityStatements are open. Records the authorization each request carried. */
  async function protectedTarget() {
    const docs = standard();
    const seen: string[] = [];
    const s = await startServer((req, res) => {
      const auth = req.headers.authorization ?? 'none';
      seen.push(`${req.url} ${auth}`);
      const doc = docs[req.url ?? ''];
      if (!doc || (req.url === '/openapi.json' && auth !== 'Bearer good')) {
        res.writeHead(doc ? 401 : 404, { 'content-type': 'application/fhir+json' });
        res.end('{"resourceType":"OperationOutcome","issue":[{"severity":"error","code":"login","diagnostics":"no"}]}');
        return;
      }
      res.writeHead(200, { 'content-type': doc.type ?? 'application/json' });
      res.end(JSON.stringify(doc.body));
    });
    cleanups.push(() => s.close());
    const http = new HttpClient({ baseUrl: s.url });
    cleanups.push(() => http.close());
    return { http, seen };
  }

  it('reads a protected /openapi.json with the bearer it is given, once, and says so; /fhir/R4/metadata ("none") goes without', async () => {
    const { http, seen } = await protectedTarget();
    let asked = 0;
    const model = await discover(http, { bearer: async () => (asked++, 'good') });
    expect(model.problems).toEqual([]);
    expect(asked).toBe(1);
    expect(model.authenticated).toEqual(['/openapi.json']);
    expect(model.notes).toContain("GET /openapi.json answered 401 without a token (its authentication is not stated); read with the main client's bearer");
    expect(model.operations.find((o) => o.operationId === 'Encounter.read')?.sources).toEqual(['openapi', 'capability-r4']);
    // The $upload OperationDefinition the R5 statement names is looked for once (not served here).
    expect(seen).toEqual([
      '/openapi.json none',
      '/openapi.json Bearer good',
      '/fhir/R4/metadata none',
      '/fhir/R5/metadata none',
      '/fhir/R5/OperationDefinition/upload none',
    ]);
  });

  it('without a bearer to be had, the 401 is a problem as before', async () => {
    const { http } = await protectedTarget();
    const model = await discover(http, { bearer: async () => undefined });
    expect(model.problems).toEqual(['GET /openapi.json answered 401, expected 200']);
    expect(model.authenticated).toBeUndefined();
  });
});

describe('discover: R4 scopes the target does not publish', () => {
  it("falls back to the scope the spec's R4 tables state, reports it as a divergence, and keeps what the target publishes", async () => {
    const docs = standard();
    const api = openapi() as any;
    delete api.paths['/fhir/R4/Encounter/{id}'].get['x-service-scope'];
    delete api.paths['/fhir/R4/Encounter'].post['x-service-scope'];
    api.paths['/fhir/R4/Encounter'].get['x-service-scope'] = 'system/Encounter.read';
    docs['/openapi.json'].body = api;
    const r4 = capabilityR4() as any;
    r4.rest[0].resource[0].interaction = [{ code: 'read' }, { code: 'search-type' }, { code: 'create' }];
    docs['/fhir/R4/metadata'].body = r4;
    const model = await discoverFrom(docs);
    const byId = new Map(model.operations.map((o) => [o.operationId, o]));
    expect(byId.get('Encounter.read')).toMatchObject({ scope: 'system/Encounter.rs', sources: ['openapi', 'capability-r4', 'spec'] });
    expect(byId.get('Encounter.create')).toMatchObject({ scope: 'system/Encounter.cru', sources: ['openapi', 'capability-r4', 'spec'] });
    // Published wins, even where it differs from the spec.
    expect(byId.get('Encounter.search')).toMatchObject({ scope: 'system/Encounter.read' });
    expect(model.specDivergences).toEqual([
      "R4 Encounter create: no scope in the OpenAPI document and the R4 CapabilityStatement (the OpenAPI document must carry x-service-scope); the spec's system/Encounter.cru is used",
      "R4 Encounter read: no scope in the OpenAPI document and the R4 CapabilityStatement (the OpenAPI document must carry x-service-scope); the spec's system/Encounter.rs is used",
    ]);
  });
});
