/** A seeded fuzz of malformed requests: nothing a client sends may produce a 5xx. */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connect } from 'node:net';
import { createReferenceServer } from '../../../src/reference/index.js';
import type { ReferenceServer } from '../../../src/reference/server.js';
import { accessToken, call, startStub } from './helpers.js';

const SEED = 20240611;
const ROUNDS = 300;

function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!, bytes: (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(next() * 256))) };
}

const LIMITS = { maxBodyBytes: 64 * 1024, documentMaxBytes: 64 * 1024, tokenIssuancePerWindow: 1000 };
const TARGETS: Array<[string, () => Promise<ReferenceServer>]> = [
  ['stub resources', () => startStub({ limits: LIMITS })],
  ['real resources', () => createReferenceServer({ limits: LIMITS })],
];

const PATHS = [
  '/fhir/R4/MedicationRequest', '/fhir/R4/MedicationRequest/abc', '/fhir/R4/Encounter', '/fhir/R4/Encounter/%E0%A4%A',
  '/fhir/R5/DocumentReference', '/fhir/R5/DocumentReference/x/$upload', '/auth/token', '/openapi.json', '/fhir/R4/metadata',
  '/fhir/R5/metadata', '/fhir/.well-known/smart-configuration', '/fhir/.well-known/jwks.json', '/', '//', '/fhir/R4/../R4/metadata',
  '/fhir/R4/MedicationRequest/a/b/c', '/%00', '/fhir/R4/MedicationRequest?patient=%zz&_count=-1', '/fhir/R4/Encounter?date=le&&&=',
  `/fhir/R4/MedicationRequest/${'x'.repeat(3000)}`,
];
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'];
const TYPES = ['application/fhir+json', 'application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', '', ';;;', 'application/fhir+json; charset=latin1'];
const BODIES = [
  () => '', () => '{', () => '[1,2', () => 'null', () => '{"resourceType":"MedicationRequest"}', () => '{"resourceType":{"a":1}}',
  () => '{"__proto__":{"x":1},"resourceType":"Encounter"}', () => 'grant_type=client_credentials&client_assertion=a.b.c&client_assertion_type=x',
  () => 'x'.repeat(100_000), () => '"\\ud800"',
];

function rawExchange(port: number, payload: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(payload));
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => { data += chunk; });
    socket.on('end', () => resolve(data));
    socket.on('error', (e) => (data ? resolve(data) : reject(e)));
    socket.setTimeout(5_000, () => { socket.destroy(); resolve(data); });
  });
}

describe.each(TARGETS)('%s', (_name, start) => {
  let server: ReferenceServer;
  let token: string;
  beforeAll(async () => {
    server = await start();
    token = await accessToken(server);
  });
  afterAll(() => server.close());

  test(`seeded fuzz: ${ROUNDS} malformed requests never get a 5xx`, async () => {
    const rnd = prng(SEED);
    const seen = new Set<number>();
    for (let i = 0; i < ROUNDS; i++) {
      const method = rnd.pick(METHODS);
      const headers: Record<string, string> = {};
      const auth = rnd.next();
      if (auth < 0.5) headers.authorization = `Bearer ${token}`;
      else if (auth < 0.7) headers.authorization = rnd.pick(['Bearer', 'Bearer a.b.c', `Bearer ${token.slice(0, -4)}AAAA`, 'bearer  x', `Bearer ${'A'.repeat(5000)}`]);
      const type = rnd.pick(TYPES);
      if (type) headers['content-type'] = type;
      if (rnd.next() < 0.2) headers.origin = 'https://app.example';
      if (rnd.next() < 0.2) headers['x-correlation-id'] = rnd.pick(['', 'a b', 'x'.repeat(100), '../etc', 'ok-id']);
      if (rnd.next() < 0.1) headers['if-match'] = rnd.pick(['*', 'W/"x"', '"']);
      const withBody = method !== 'GET' && method !== 'HEAD' && rnd.next() < 0.9;
      const body = withBody ? (rnd.next() < 0.15 ? rnd.bytes(2000) : rnd.pick(BODIES)()) : undefined;
      const r = await call(`${server.url}${rnd.pick(PATHS)}`, { method, headers, body });
      seen.add(r.status);
      expect(r.status, `${method} request ${i}`).toBeLessThan(500);
      expect(r.headers['x-correlation-id']).toBeTruthy();
      expect(r.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
      if (r.status >= 400 && method !== 'HEAD') expect(r.json?.resourceType).toBe('OperationOutcome');
    }
    // the seed reaches every stage of the pipeline
    for (const status of [200, 400, 401, 404, 405, 415]) expect(seen).toContain(status);
  });

  test('malformed HTTP gets a 4xx OperationOutcome with a correlation id', async () => {
    const payloads = [
      'GARBAGE\r\n\r\n',
      'GET /fhir/R4/metadata HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n',
      `GET /fhir/R4/metadata HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      'POST /fhir/R4/Encounter HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      'GET /fhir/R4/metadata HTTP/9.9\r\n\r\n',
    ];
    for (const p of payloads) {
      const response = await rawExchange(server.port, p);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1]);
      expect(status, JSON.stringify(p.slice(0, 60))).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(500);
      expect(response.toLowerCase()).toContain('x-correlation-id:');
      expect(response).toContain('"resourceType":"OperationOutcome"');
    }
  });
});
