/** The HTTP core in front of the real resource module (src/reference/resources). */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createReferenceServer } from '../../../src/reference/index.js';
import type { ReferenceServer } from '../../../src/reference/server.js';
import { accessToken, call, codeOf, fakeClock } from './helpers.js';

const FHIR = 'application/fhir+json; charset=utf-8';
let server: ReferenceServer;
let auth: Record<string, string>;

beforeAll(async () => {
  server = await createReferenceServer({ limits: { tokenIssuancePerWindow: 1000 } });
  auth = { authorization: `Bearer ${await accessToken(server)}` };
});
afterAll(() => server.close());

test('read of a fixture: 200 with FHIR content type, versioning, correlation and rate-limit headers', async () => {
  const r = await call(`${server.url}/fhir/R4/MedicationRequest/${server.fixtureIds.medicationRequest}`, { headers: auth });
  expect(r.status).toBe(200);
  expect(r.headers['content-type']).toBe(FHIR);
  expect(r.json).toMatchObject({ resourceType: 'MedicationRequest', id: server.fixtureIds.medicationRequest });
  expect(r.headers.etag).toBeTruthy();
  expect(r.headers['x-correlation-id']).toMatch(/^[0-9a-f-]{36}$/);
  expect(r.headers['x-ratelimit-limit']).toBe('60');
  expect(Number(r.headers['x-ratelimit-remaining'])).toBeLessThan(60);
});

test("another organization's id: 404 OperationOutcome from the handler", async () => {
  const r = await call(`${server.url}/fhir/R4/Encounter/${server.fixtureIds.otherOrgEncounter}`, { headers: auth });
  expect(r.status).toBe(404);
  expect(r.headers['content-type']).toBe(FHIR);
  expect(r.json.issue[0].code).toBe('not-found');
});

test('core checks precede the handlers: unknown search parameter, wrong resourceType, media type', async () => {
  const search = await call(`${server.url}/fhir/R4/Encounter?patient=${server.fixtureIds.patient}&bogus=1`, { headers: auth });
  expect(search.status).toBe(400);
  expect(codeOf(search)).toBe('HPB-00101');
  const wrongType = await call(`${server.url}/fhir/R4/Encounter`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/fhir+json' },
    body: '{"resourceType":"MedicationRequest"}',
  });
  expect(wrongType.status).toBe(400);
  expect(codeOf(wrongType)).toBe('HPB-00101');
  const media = await call(`${server.url}/fhir/R4/Encounter`, { method: 'POST', headers: { ...auth, 'content-type': 'text/xml' }, body: '<Encounter/>' });
  expect(media.status).toBe(415);
});

test('create and search reach the real handlers', async () => {
  const created = await call(`${server.url}/fhir/R4/MedicationRequest`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/fhir+json' },
    body: JSON.stringify({
      resourceType: 'MedicationRequest',
      intent: 'order',
      medicationCodeableConcept: { text: 'paracetamol' },
      subject: { reference: `Patient/${server.fixtureIds.patient}` },
    }),
  });
  expect(created.status).toBe(201);
  const search = await call(`${server.url}/fhir/R4/MedicationRequest?patient=${server.fixtureIds.patient}&_count=5`, { headers: auth });
  expect(search.status).toBe(200);
  expect(search.json).toMatchObject({ resourceType: 'Bundle', type: 'searchset' });
  expect(search.json.entry.length).toBeLessThanOrEqual(5);
});

test('expired token and production key with Origin, in front of real handlers', async () => {
  const clock = fakeClock(Date.now());
  const s = await createReferenceServer({ now: clock.now, limits: { tokenLifetimeSec: 1 } });
  try {
    const t = await accessToken(s, 'main', undefined, clock.now());
    const prod = await accessToken(s, 'production', undefined, clock.now());
    const mr = `${s.url}/fhir/R4/MedicationRequest/${s.fixtureIds.medicationRequest}`;
    const origin = await call(mr, { headers: { authorization: `Bearer ${prod}`, origin: 'https://app.example' } });
    expect(codeOf(origin)).toBe('HPB-00124');
    clock.advance(1_000);
    const expired = await call(mr, { headers: { authorization: `Bearer ${t}` } });
    expect(expired.status).toBe(401);
    expect(codeOf(expired)).toBe('HPB-00107');
  } finally {
    await s.close();
  }
});
