import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { createReferenceServer, type ReferenceServer } from '../../../src/reference/index.js';
import { resolveConfig } from '../../../src/config/index.js';
import { HttpClient } from '../../../src/http/client.js';
import { TokenBroker } from '../../../src/auth/broker.js';
import { PROJECT_ROOT } from '../../../src/paths.js';

let server: ReferenceServer;
let token: string;

beforeAll(async () => {
  server = await createReferenceServer({ port: 0 });
  const config = await resolveConfig(server.targetConfig(), PROJECT_ROOT);
  const http = new HttpClient({ baseUrl: server.url });
  const broker = new TokenBroker({
    http,
    tokenUrl: `${server.url}/auth/token`,
    clients: config.clients,
    issuancePerMinute: 20,
    windowSec: 60,
    tokenLifetimeSec: 300,
  });
  token = await broker.token('main', ['system/MedicationRequest.rs']);
  await http.close();
});
afterAll(() => server.close());

const get = (path: string, headers: Record<string, string> = {}) =>
  request(`${server.url}${path}`, { headers: { accept: 'application/fhir+json', ...headers } }).then(async (r) => ({
    status: r.statusCode,
    headers: r.headers,
    body: await r.body.text(),
  }));

describe('audit trail (spec: Authentication > Audit)', () => {
  it('writes one immutable record per authenticated request, with the fields the spec lists', async () => {
    const before = server.audit().length;
    const ids = server.fixtureIds;
    const read = await get(`/fhir/R4/MedicationRequest/${ids.medicationRequest}`, { authorization: `Bearer ${token}` });
    const search = await get(`/fhir/R4/MedicationRequest?patient=${ids.patient}&_count=7`, { authorization: `Bearer ${token}` });
    await get('/fhir/R4/metadata'); // unauthenticated: no record
    await get(`/fhir/R4/MedicationRequest/${ids.medicationRequest}`); // no token: no record
    const records = server.audit().slice(before);
    expect(records).toHaveLength(2);
    expect(records[0]).toMatchObject({
      resourceType: 'MedicationRequest',
      resourceId: ids.medicationRequest,
      apiKey: 'conformance-main',
      organization: 'org-a',
      returned: 1,
      status: read.status,
      correlationId: read.headers['x-correlation-id'],
    });
    expect(records[0]!.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
    expect(records[0]!.clientIp).toMatch(/127\.0\.0\.1/);
    expect(records[1]).toMatchObject({ query: { patient: ids.patient, _count: '7' }, returned: 7, correlationId: search.headers['x-correlation-id'] });
    expect(Object.isFrozen(records[1])).toBe(true);
    expect(() => {
      (records[1] as { returned: number }).returned = 0;
    }).toThrow();
  });
});
