/**
 * A seeded fuzz of the reference over HTTP, larger and structure-aware where
 * test/reference/core/fuzz.test.ts (300 requests from fixed lists) is not:
 * 3,600 requests built from random methods, paths (fixture and foreign ids,
 * junk segments), query strings, header sets, mutated valid resources, deeply
 * nested and huge JSON. No answer is a 5xx, the server stays up, and no stored
 * record changes unless a write to it was accepted.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createReferenceServer } from '../../src/reference/index.js';
import type { ReferenceServer } from '../../src/reference/server.js';
import { referenceFixtures } from '../cli/cli.js';
import { ALL_SCOPES, accessToken, call } from '../reference/core/helpers.js';

const SEED = 0x5eed_f022;
const REQUESTS = 3600;
const CONCURRENCY = 8;

/** mulberry32: a small seeded PRNG. */
function seeded(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  return { next, int, pick, chance: (p: number) => next() < p };
}
type Rng = ReturnType<typeof seeded>;

const FIXTURE_IDS = Object.values(referenceFixtures());
const METHODS = ['GET', 'GET', 'POST', 'PUT', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'PROPFIND'];
const PREFIXES = ['/fhir/R4', '/fhir/R5', '/fhir/R3', '/fhir', '', '/auth', '/fhir/R4/../R5', '/FHIR/r4'];
const TYPES = ['MedicationRequest', 'Encounter', 'DocumentReference', 'Patient', 'Observation', 'metadata', '.well-known', 'medicationrequest', ''];
const OPS = ['$upload', '$binary-upload', '_history', '_history/1', '$everything', '%00', '..', 'x/y/z'];
const PARAMS = [
  'patient',
  'encounter',
  '_count',
  '_cursor',
  '_offset',
  'date',
  'status',
  'class',
  '_id',
  'practitioner',
  'type',
  'category',
  'subject',
  '_sort',
  '',
];
const SCALARS: unknown[] = [null, true, 0, -1, 1e308, '', 'x'.repeat(5000), '\u0000', '\ud800', '<script>', [], {}, [[[]]], { reference: 'Patient/../..' }];

function junk(r: Rng): string {
  return r.pick([
    '',
    '%',
    '%zz',
    '%E0%A4%A',
    '..%2F..',
    '\u00e9\u00e8',
    '+',
    ' ',
    '%20',
    '&',
    '=',
    'null',
    'undefined',
    '-1',
    '1e309',
    'x'.repeat(r.int(3000)),
  ]);
}

function idOf(r: Rng): string {
  return r.pick([() => r.pick(FIXTURE_IDS), () => randomUUIDFrom(r), () => junk(r), () => r.pick(FIXTURE_IDS).toUpperCase()])();
}

function randomUUIDFrom(r: Rng): string {
  const hex = () => r.int(16).toString(16);
  return 'xxxxxxxx-xxxx-4xxx-8xxx-xxxxxxxxxxxx'.replace(/x/g, hex);
}

function pathOf(r: Rng): string {
  const parts = [r.pick(PREFIXES), r.pick(TYPES)];
  if (r.chance(0.6)) parts.push(encodeURIComponent(idOf(r)));
  if (r.chance(0.15)) parts.push(r.pick(OPS));
  let path = parts.join('/').replace(/\/+$/, '') || '/';
  if (r.chance(0.5)) {
    const n = 1 + r.int(4);
    const q = Array.from(
      { length: n },
      () =>
        `${r.pick(PARAMS)}=${encodeURIComponent(String(r.pick([() => idOf(r), () => junk(r), () => r.pick(['ge2025-01-01', 'xx2025', 'lt', '101', '0', 'AMB', 'finished'])])()))}`,
    );
    path += `?${q.join('&')}${r.chance(0.1) ? '&&&=' : ''}`;
  }
  return path;
}

/** A valid-looking resource with random fields deleted, replaced or added. */
function mutatedResource(r: Rng): unknown {
  const patient = r.pick(FIXTURE_IDS);
  const base: Record<string, unknown> = r.pick([
    () => ({
      resourceType: 'MedicationRequest',
      status: 'active',
      intent: 'order',
      subject: { reference: `Patient/${patient}` },
      medicationCodeableConcept: { coding: [{ system: 'http://www.nlm.nih.gov/research/umls/rxnorm', code: '197361' }] },
    }),
    () => ({
      resourceType: 'Encounter',
      status: 'planned',
      class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB' },
      subject: { reference: `Patient/${patient}` },
      period: { start: new Date().toISOString() },
    }),
    () => ({
      resourceType: 'DocumentReference',
      status: 'current',
      subject: { reference: `Patient/${patient}` },
      content: [{ attachment: { contentType: 'text/plain', data: 'aGk=' } }],
    }),
  ])();
  for (let i = r.int(4); i > 0; i--) {
    const keys = Object.keys(base);
    const key = r.chance(0.3) ? r.pick(['id', 'meta', 'extension', '__proto__', 'constructor', 'contained', 'resourceType']) : r.pick(keys);
    if (r.chance(0.4)) delete base[key];
    else base[key] = r.pick(SCALARS);
  }
  return base;
}

function nested(depth: number): string {
  return `${'{"a":['.repeat(depth)}1${']}'.repeat(depth)}`;
}

function bodyOf(r: Rng): string | Buffer | undefined {
  return r.pick<() => string | Buffer | undefined>([
    () => undefined,
    () => JSON.stringify(mutatedResource(r)),
    () => JSON.stringify(mutatedResource(r)),
    () => JSON.stringify(mutatedResource(r)).slice(0, r.int(120)),
    () => nested(r.pick([64, 1000, 20_000])),
    () => `[${'1,'.repeat(300_000)}1]`,
    () => `{"resourceType":"Encounter","note":"${'x'.repeat(1_200_000)}"}`,
    () => Buffer.from(Array.from({ length: 512 }, () => r.int(256))),
    () =>
      new URLSearchParams({
        grant_type: 'client_credentials',
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: `${junk(r)}.${junk(r)}.x`,
      }).toString(),
  ])();
}

function headersOf(r: Rng, tokens: string[]): Record<string, string> {
  const h: Record<string, string> = {};
  const auth = r.next();
  if (auth < 0.55) h.authorization = `Bearer ${r.pick(tokens)}`;
  else if (auth < 0.75)
    h.authorization = r.pick([
      'Bearer',
      'Basic Zm9vOmJhcg==',
      `Bearer ${r.pick(tokens)}x`,
      'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
      `Bearer ${'A'.repeat(8000)}`,
    ]);
  if (r.chance(0.8))
    h['content-type'] = r.pick([
      'application/fhir+json',
      'application/json',
      'application/fhir+json; charset=utf-8',
      'application/fhir+xml',
      'application/x-www-form-urlencoded',
      'text/plain',
      'multipart/form-data',
      ';',
      'application/fhir+json; fhirVersion=5.0',
    ]);
  if (r.chance(0.5)) h.accept = r.pick(['application/fhir+json', '*/*', 'application/xml', 'text/html', '', 'application/fhir+json;q=0']);
  if (r.chance(0.15)) h['if-match'] = r.pick(['*', 'W/"1"', '"2"', 'W/', '"', 'W/"999999999999999999999"']);
  if (r.chance(0.1)) h.origin = r.pick(['https://app.example', 'null', '']);
  if (r.chance(0.1)) h['x-correlation-id'] = junk(r).slice(0, 200);
  return h;
}

const WRITE_ROUTES = ['MedicationRequest', 'Encounter', 'DocumentReference'];

function deepWrite(r: Rng, tokens: string[]): { method: string; path: string; headers: Record<string, string>; body: string | Buffer | undefined } {
  const type = r.pick(WRITE_ROUTES);
  const update = r.chance(0.4);
  return {
    method: update ? 'PUT' : 'POST',
    path: `/fhir/R4/${type}${update ? `/${r.pick(FIXTURE_IDS)}` : ''}`,
    headers: { authorization: `Bearer ${tokens[0]!}`, 'content-type': 'application/fhir+json', accept: 'application/fhir+json' },
    body: bodyOf(r),
  };
}

describe('reference under a seeded fuzz', () => {
  let server: ReferenceServer;
  let tokens: string[];
  beforeAll(async () => {
    server = await createReferenceServer({ port: 0, limits: { enforceRateLimits: false, tokenIssuancePerWindow: 1000 } });
    tokens = [
      await accessToken(server, 'main', ALL_SCOPES),
      await accessToken(server, 'main', 'system/Encounter.rs'),
      await accessToken(server, 'second-org', ALL_SCOPES),
      await accessToken(server, 'production', ALL_SCOPES),
    ];
  });
  afterAll(() => server.close());

  test(`${REQUESTS} malformed requests: no 5xx, still up, no stored record changed without an accepted write`, async () => {
    type Row = { id: string };
    const before = server.resources.snapshot() as Record<string, Row[]>;
    const r = seeded(SEED);
    const plans = Array.from({ length: REQUESTS }, () => {
      // One in eight is a well-formed write (real route, valid token, JSON media type) with a
      // random body, so the seed reaches the body stages (size, syntax, validation) whatever
      // the other random draws do.
      if (r.chance(0.125)) return deepWrite(r, tokens);
      const method = r.pick(METHODS);
      return { method, path: pathOf(r), headers: headersOf(r, tokens), body: method === 'GET' || method === 'HEAD' ? undefined : bodyOf(r) };
    });
    const serverErrors: string[] = [];
    const written = new Set<string>();
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < plans.length) {
        const p = plans[next++]!;
        const res = await call(`${server.url}${p.path}`, p);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status >= 500) serverErrors.push(`${p.method} ${p.path.slice(0, 120)} -> ${res.status}`);
        if (p.method !== 'GET' && p.method !== 'HEAD' && res.status < 300) {
          for (const id of FIXTURE_IDS) if (p.path.toLowerCase().includes(id)) written.add(id);
          const created = (res.json as { id?: unknown } | undefined)?.id;
          if (typeof created === 'string') written.add(created);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));

    expect(serverErrors).toEqual([]);
    expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBe(REQUESTS);
    // The seed reaches the deep stages: successes, validation, auth, scope, not found, method, media type, size.
    for (const s of [200, 400, 401, 403, 404, 405, 413, 415]) expect(statuses.get(s) ?? 0, `status ${s}`).toBeGreaterThan(0);
    expect((await call(`${server.url}/fhir/R4/metadata`, { headers: { accept: 'application/fhir+json' } })).status).toBe(200);

    const after = server.resources.snapshot() as Record<string, Row[]>;
    for (const [kind, rows] of Object.entries(before)) {
      const now = new Map((after[kind] ?? []).map((row) => [row.id, JSON.stringify(row)]));
      const changed = rows.filter((row) => !written.has(row.id) && now.get(row.id) !== JSON.stringify(row)).map((row) => row.id);
      expect(changed, `${kind} changed without an accepted write`).toEqual([]);
    }
    // A fresh id is still unknown: the fuzz created nothing under ids it did not get back.
    expect((await call(`${server.url}/fhir/R4/Encounter/${randomUUID()}`, { headers: { authorization: `Bearer ${tokens[0]}` } })).status).toBe(404);
  }, 120_000);
});
