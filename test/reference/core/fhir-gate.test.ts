import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Readable } from 'node:stream';
import { request } from 'undici';
import type { ReferenceServer } from '../../../src/reference/server.js';
import { hasScope, scopeCovers } from '../../../src/reference/auth.js';
import { accessToken, call, codeOf, fakeClock, startStub } from './helpers.js';

const FHIR = 'application/fhir+json; charset=utf-8';
const MR = '/fhir/R4/MedicationRequest';
const bearer = (token: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...extra });

let server: ReferenceServer;
let token: string;

beforeAll(async () => {
  server = await startStub({ limits: { tokenIssuancePerWindow: 1000, perKeyPerWindow: 10_000, perOrgPerWindow: 100_000 } });
  token = await accessToken(server);
});
afterAll(() => server.close());

describe('authentication', () => {
  test('missing, malformed and foreign tokens -> 401 SVC-00004', async () => {
    const foreign = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln';
    for (const headers of [{}, { authorization: 'Basic abc' }, { authorization: 'Bearer' }, bearer('not-a-jwt'), bearer(foreign)]) {
      const r = await call(`${server.url}${MR}/x`, { headers });
      expect(r.status).toBe(401);
      expect(codeOf(r)).toBe('SVC-00004');
      expect(r.json.issue[0]).toMatchObject({ severity: 'error', code: 'login', diagnostics: expect.stringMatching(/^SVC-00004: /) });
      expect(r.headers['content-type']).toBe(FHIR);
      expect(r.headers['x-ratelimit-limit']).toBe('600');
    }
  });

  test('a token from another server instance -> 401 SVC-00004', async () => {
    const other = await startStub();
    try {
      const t = await accessToken(other);
      const r = await call(`${server.url}${MR}/x`, { headers: bearer(t) });
      expect(r.status).toBe(401);
      expect(codeOf(r)).toBe('SVC-00004');
    } finally {
      await other.close();
    }
  });

  test('expired token -> 401 HPB-00107 (short lifetime, also once cached)', async () => {
    const clock = fakeClock();
    const s = await startStub({ now: clock.now, limits: { tokenLifetimeSec: 2 } });
    try {
      const t = await accessToken(s, 'main', undefined, clock.now());
      const unused = await accessToken(s, 'extra', undefined, clock.now());
      expect((await call(`${s.url}${MR}/x`, { headers: bearer(t) })).status).toBe(200);
      clock.advance(2_000);
      const r = await call(`${s.url}${MR}/x`, { headers: bearer(t) });
      expect(r.status).toBe(401);
      expect(codeOf(r)).toBe('HPB-00107');
      expect(r.json.issue[0].code).toBe('login');
      const uncached = await call(`${s.url}${MR}/x`, { headers: bearer(unused) });
      expect(codeOf(uncached)).toBe('HPB-00107');
    } finally {
      await s.close();
    }
  });
});

describe('scopes (letter rule)', () => {
  test('scopeCovers', () => {
    expect(scopeCovers('system/MedicationRequest.cruds', 'system/MedicationRequest.rs')).toBe(true);
    expect(scopeCovers('system/MedicationRequest.cruds', 'system/MedicationRequest.cru')).toBe(true);
    expect(scopeCovers('system/MedicationRequest.cru', 'system/MedicationRequest.rs')).toBe(false);
    expect(scopeCovers('system/MedicationRequest.c', 'system/MedicationRequest.c')).toBe(true);
    expect(scopeCovers('system/MedicationRequest.rs', 'system/MedicationRequest.c')).toBe(false);
    expect(scopeCovers('system/Encounter.cruds', 'system/MedicationRequest.rs')).toBe(false);
    expect(scopeCovers('patient/MedicationRequest.rs', 'system/MedicationRequest.rs')).toBe(false);
    expect(hasScope(['system/Encounter.rs', 'system/MedicationRequest.cru'], 'system/MedicationRequest.c')).toBe(true);
  });

  const cases: Array<[string, string, string, number]> = [
    ['.rs covers read', 'system/MedicationRequest.rs', 'GET /x', 200],
    ['.cru does not cover read', 'system/MedicationRequest.cru', 'GET /x', 403],
    ['.c covers MedicationRequest create', 'system/MedicationRequest.c', 'POST ', 201],
    ['.rs covers no write', 'system/MedicationRequest.rs', 'POST ', 403],
    ['.rs does not cover update', 'system/MedicationRequest.rs', 'PUT /x', 403],
    ['other resource scope does not count', 'system/Encounter.rs', 'GET /x', 403],
  ];
  test.each(cases)('%s', async (_n, scope, req, status) => {
    const s = await startStub({ modes: { excessScope: 'narrow' } });
    try {
      const [method, suffix] = req.split(' ');
      const t = await accessToken(s, 'main', scope);
      const body = method === 'GET' ? undefined : JSON.stringify({ resourceType: 'MedicationRequest' });
      const r = await call(`${s.url}${MR}${suffix}`, { method, headers: bearer(t, { 'content-type': 'application/fhir+json' }), body });
      expect(r.status).toBe(status);
      if (status === 403) expect(codeOf(r)).toBe('HPB-00104');
    } finally {
      await s.close();
    }
  });

  test('scopes are shared across R4 and R5', async () => {
    const r = await call(`${server.url}/fhir/R5/DocumentReference/abc`, { headers: bearer(token) });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ resourceType: 'DocumentReference', id: 'abc' });
  });
});

describe('origin', () => {
  test('production key + Origin -> 403 HPB-00124; without Origin allowed', async () => {
    const prod = await accessToken(server, 'production');
    const r = await call(`${server.url}${MR}/x`, { headers: bearer(prod, { origin: 'https://app.example' }) });
    expect(r.status).toBe(403);
    expect(codeOf(r)).toBe('HPB-00124');
    expect(r.json.issue[0].code).toBe('forbidden');
    expect((await call(`${server.url}${MR}/x`, { headers: bearer(prod) })).status).toBe(200);
  });

  test('sandbox key + Origin allowed', async () => {
    const r = await call(`${server.url}${MR}/x`, { headers: bearer(token, { origin: 'https://app.example' }) });
    expect(r.status).toBe(200);
  });
});

describe('per-key sliding window', () => {
  test('headers arithmetic, 429 throttled + Retry-After, early retry extends, recovery', async () => {
    const clock = fakeClock();
    const s = await startStub({ now: clock.now, limits: { perKeyPerWindow: 3, windowMs: 10_000 } });
    try {
      const t = await accessToken(s, 'main', undefined, clock.now());
      const start = clock.now();
      const statuses: number[] = [];
      const remaining: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await call(`${s.url}${MR}/x`, { headers: bearer(t) });
        statuses.push(r.status);
        remaining.push(r.headers['x-ratelimit-remaining']!);
        expect(r.headers['x-ratelimit-limit']).toBe('3');
        expect(r.headers['x-ratelimit-reset']).toBe(String(Math.ceil((start + 10_000) / 1000)));
        clock.advance(1_000);
      }
      expect(statuses).toEqual([200, 200, 200]);
      expect(remaining).toEqual(['2', '1', '0']);
      const refused = await call(`${s.url}${MR}/x`, { headers: bearer(t) });
      expect(refused.status).toBe(429);
      expect(codeOf(refused)).toBe('HPB-00105');
      expect(refused.json.issue[0].code).toBe('throttled');
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');
      // refused request recorded: a slot frees when the request at start+1s leaves
      expect(refused.headers['retry-after']).toBe('8');
      clock.advance(1_000);
      const early = await call(`${s.url}${MR}/x`, { headers: bearer(t) });
      expect(early.status).toBe(429);
      expect(Number(early.headers['x-ratelimit-reset'])).toBeGreaterThan(Number(refused.headers['x-ratelimit-reset']));
      clock.advance(Number(early.headers['retry-after']) * 1000);
      const ok = await call(`${s.url}${MR}/x`, { headers: bearer(t) });
      expect(ok.status).toBe(200);
      // other keys are not affected
      const other = await accessToken(s, 'second-org', undefined, clock.now());
      expect((await call(`${s.url}${MR}/x`, { headers: bearer(other) })).headers['x-ratelimit-remaining']).toBe('2');
    } finally {
      await s.close();
    }
  });

  test('per-organization window refuses across keys of one org', async () => {
    const clock = fakeClock();
    const s = await startStub({ now: clock.now, limits: { perKeyPerWindow: 100, perOrgPerWindow: 2, windowMs: 10_000 } });
    try {
      const a = await accessToken(s, 'main', undefined, clock.now());
      const b = await accessToken(s, 'extra', undefined, clock.now());
      const c = await accessToken(s, 'second-org', undefined, clock.now());
      expect((await call(`${s.url}${MR}/x`, { headers: bearer(a) })).status).toBe(200);
      expect((await call(`${s.url}${MR}/x`, { headers: bearer(b) })).status).toBe(200);
      const refused = await call(`${s.url}${MR}/x`, { headers: bearer(a) });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect((await call(`${s.url}${MR}/x`, { headers: bearer(c) })).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  test('enforceRateLimits=false sends headers but never refuses', async () => {
    const s = await startStub({ limits: { perKeyPerWindow: 1, enforceRateLimits: false } });
    try {
      const t = await accessToken(s);
      for (let i = 0; i < 3; i++) {
        const r = await call(`${s.url}${MR}/x`, { headers: bearer(t) });
        expect(r.status).toBe(200);
        expect(r.headers['x-ratelimit-remaining']).toBe('0');
      }
    } finally {
      await s.close();
    }
  });
});

describe('routing, bodies and headers', () => {
  test('unknown path -> 404 SVC-00002; wrong method -> 405 with Allow', async () => {
    const nf = await call(`${server.url}/fhir/R4/Patient/1`);
    expect(nf.status).toBe(404);
    expect(codeOf(nf)).toBe('SVC-00002');
    expect(nf.json.issue[0].code).toBe('not-found');
    const wrong = await call(`${server.url}${MR}/x`, { method: 'DELETE', headers: bearer(token) });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('GET, PUT');
    expect(wrong.headers['content-type']).toBe(FHIR);
  });

  test('correlation id: echoed when sane, generated otherwise, distinct per request', async () => {
    const echoed = await call(`${server.url}/fhir/R4/metadata`, { headers: { 'x-correlation-id': 'abc-123' } });
    expect(echoed.headers['x-correlation-id']).toBe('abc-123');
    const junk = await call(`${server.url}/fhir/R4/metadata`, { headers: { 'x-correlation-id': 'x'.repeat(65) } });
    expect(junk.headers['x-correlation-id']).toMatch(/^[0-9a-f-]{36}$/);
    const other = await call(`${server.url}/fhir/R4/metadata`);
    expect(other.headers['x-correlation-id']).not.toBe(junk.headers['x-correlation-id']);
  });

  test('handler errors become OperationOutcomes; a crash is 500 SVC-00001', async () => {
    const nf = await call(`${server.url}${MR}/missing`, { headers: bearer(token) });
    expect(nf.status).toBe(404);
    expect(nf.json.issue[0]).toEqual({
      severity: 'error',
      code: 'not-found',
      diagnostics: 'HPB-00102: Resource not found',
      details: { coding: [{ system: 'https://clinical-records.example/fhir/CodeSystem/error-catalog', code: 'HPB-00102' }] },
    });
    const boom = await call(`${server.url}${MR}/boom`, { headers: bearer(token) });
    expect(boom.status).toBe(500);
    expect(codeOf(boom)).toBe('SVC-00001');
    expect(boom.json.issue[0].code).toBe('exception');
    expect(boom.headers['x-correlation-id']).toBeTruthy();
  });

  test('writes: 415 for other media types, 400 HPB-00101 for bad JSON / non-objects / wrong resourceType, 413 when too large', async () => {
    const s = await startStub({ limits: { maxBodyBytes: 1_000 } });
    try {
      const t = await accessToken(s);
      const post = (contentType: string, body: string | Buffer) =>
        call(`${s.url}${MR}`, { method: 'POST', headers: bearer(t, { 'content-type': contentType }), body });
      const media = await post('text/plain', '{}');
      expect(media.status).toBe(415);
      expect(media.json.issue[0].code).toBe('not-supported');
      for (const body of ['{', '[]', '"x"', 'null', '{"resourceType":"Encounter"}', '{"status":"active"}']) {
        const r = await post('application/fhir+json', body);
        expect(r.status, body).toBe(400);
        expect(codeOf(r)).toBe('HPB-00101');
        expect(r.json.issue[0].code).toBe('invalid');
      }
      const ok = await post('application/json; charset=utf-8', '{"resourceType":"MedicationRequest"}');
      expect(ok.status).toBe(201);
      const big = await post('application/fhir+json', JSON.stringify({ resourceType: 'MedicationRequest', note: 'x'.repeat(5_000_000) }));
      expect(big.status).toBe(413);
      expect(big.json.issue[0].code).toBe('too-long');
      expect(big.headers['x-correlation-id']).toBeTruthy();
      // no Content-Length (chunked): reading stops at the cap
      async function* chunks() {
        for (let i = 0; i < 200; i++) yield Buffer.alloc(16_384, 0x61);
      }
      const streamed = await request(`${s.url}${MR}`, {
        method: 'POST',
        headers: bearer(t, { 'content-type': 'application/fhir+json' }),
        body: Readable.from(chunks()),
      });
      expect(streamed.statusCode).toBe(413);
      expect(JSON.parse(await streamed.body.text()).issue[0].code).toBe('too-long');
    } finally {
      await s.close();
    }
  });

  test('search: unknown parameters -> 400 HPB-00101, known ones reach the handler', async () => {
    const bad = await call(`${server.url}${MR}?patient=p&foo=1`, { headers: bearer(token) });
    expect(bad.status).toBe(400);
    expect(codeOf(bad)).toBe('HPB-00101');
    const ok = await call(`${server.url}${MR}?patient=p&_count=5`, { headers: bearer(token) });
    expect(ok.status).toBe(200);
    expect(ok.json.resourceType).toBe('Bundle');
  });

  test('$upload passes the raw body and content type; the path follows modes.uploadPath', async () => {
    const up = await call(`${server.url}/fhir/R5/DocumentReference/d1/$upload`, {
      method: 'POST',
      headers: bearer(token, { 'content-type': 'application/pdf' }),
      body: Buffer.alloc(10, 1),
    });
    expect(up.status).toBe(200);
    expect(up.json).toMatchObject({ size: 10, type: 'application/pdf' });
    const s0 = await startStub({ limits: { documentMaxBytes: 100 } });
    try {
      const t0 = await accessToken(s0);
      const big = await call(`${s0.url}/fhir/R5/DocumentReference/d1/$upload`, {
        method: 'POST',
        headers: bearer(t0, { 'content-type': 'application/pdf' }),
        body: Buffer.alloc(2_000_000, 1),
      });
      expect(big.status).toBe(413);
      expect(codeOf(big)).toBe('HPB-00119');
    } finally {
      await s0.close();
    }
    const s = await startStub({ modes: { uploadPath: '$binary-upload' } });
    try {
      const t = await accessToken(s);
      const moved = await call(`${s.url}/fhir/R5/DocumentReference/d1/$binary-upload`, {
        method: 'POST',
        headers: bearer(t, { 'content-type': 'application/pdf' }),
        body: 'x',
      });
      expect(moved.status).toBe(200);
      expect((await call(`${s.url}/fhir/R5/DocumentReference/d1/$upload`, { method: 'POST', headers: bearer(t) })).status).toBe(404);
    } finally {
      await s.close();
    }
  });

  test('handler receives caller, decoded id and parsed body', async () => {
    const r = await call(`${server.url}${MR}/a%20b`, {
      method: 'PUT',
      headers: bearer(token, { 'content-type': 'application/fhir+json' }),
      body: '{"resourceType":"MedicationRequest","status":"active"}',
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: 'a b', status: 'active', caller: 'conformance-main' });
    expect(r.headers.etag).toBe('W/"1"');
    expect(r.headers['content-type']).toBe(FHIR);
  });
});
