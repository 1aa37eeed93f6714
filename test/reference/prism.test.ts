/**
 * An independent check of the reference against its own OpenAPI document: the
 * Prism validation proxy (@stoplight/prism-cli) sits in front of the server
 * and flags any request or response that breaks the document.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReferenceServer, type ReferenceServer } from '../../src/reference/index.js';
import { resolveConfig } from '../../src/config/index.js';
import { HttpClient } from '../../src/http/client.js';
import { TokenBroker } from '../../src/auth/broker.js';
import { PROJECT_ROOT } from '../../src/paths.js';

let server: ReferenceServer;
let prism: ChildProcess;
let proxy: string;
let token: string;
let dir: string;

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => ok(port));
    });
  });
}

beforeAll(async () => {
  server = await createReferenceServer({ port: 0, limits: { enforceRateLimits: false } });
  dir = await mkdtemp(join(tmpdir(), 'prism-'));
  const openapi = await (await request(`${server.url}/openapi.json`)).body.text();
  await writeFile(join(dir, 'openapi.json'), openapi);
  const port = await freePort();
  proxy = `http://127.0.0.1:${port}`;
  prism = spawn(
    resolve(PROJECT_ROOT, 'node_modules/.bin/prism'),
    ['proxy', join(dir, 'openapi.json'), server.url, '--errors', '--host', '127.0.0.1', '--port', String(port)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  await new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error('prism did not start within 60 s')), 60_000);
    prism.stdout!.on('data', (b: Buffer) => {
      if (b.toString().includes('Prism is listening')) clearTimeout(timer), ok();
    });
    prism.on('exit', (code) => fail(new Error(`prism exited with ${code}`)));
  });
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
  token = await broker.token('main', [
    'system/MedicationRequest.rs',
    'system/MedicationRequest.cru',
    'system/MedicationRequest.c',
    'system/Encounter.rs',
    'system/Encounter.cru',
  ]);
  await http.close();
}, 90_000);

afterAll(async () => {
  if (prism?.pid) prism.kill('SIGTERM');
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function through(method: string, path: string, body?: unknown, auth = true) {
  const res = await request(`${proxy}${path}`, {
    method: method as 'GET',
    headers: {
      accept: 'application/fhir+json',
      ...(auth ? { authorization: `Bearer ${token}` } : {}),
      ...(body ? { 'content-type': 'application/fhir+json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.body.text();
  return { status: res.statusCode, violations: res.headers['sl-violations'], text };
}

describe('the reference against its own OpenAPI document (Prism proxy)', () => {
  it('flags no request or response of the main interactions', async () => {
    const ids = server.fixtureIds;
    const mr = {
      resourceType: 'MedicationRequest',
      intent: 'order',
      medicationCodeableConcept: { text: 'Amoxicillin 500 mg' },
      subject: { reference: `Patient/${ids.patient}` },
    };
    const enc = {
      resourceType: 'Encounter',
      status: 'planned',
      class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB', display: 'ambulatory' },
      subject: { reference: `Patient/${ids.patient}` },
    };
    const calls: Array<[string, string, unknown?, boolean?]> = [
      ['GET', `/fhir/R4/MedicationRequest/${ids.medicationRequest}`],
      ['GET', `/fhir/R4/MedicationRequest?patient=${ids.patient}&_count=5`],
      ['POST', '/fhir/R4/MedicationRequest', mr],
      ['PUT', `/fhir/R4/MedicationRequest/${ids.medicationRequest}`, { ...mr, id: ids.medicationRequest, status: 'active' }],
      ['GET', `/fhir/R4/Encounter/${ids.encounter}`],
      ['GET', `/fhir/R4/Encounter?patient=${ids.patient}`],
      ['POST', '/fhir/R4/Encounter', enc],
      ['GET', '/fhir/R4/MedicationRequest/00000000-0000-4000-8000-000000000000'],
      ['GET', `/fhir/R4/MedicationRequest/${ids.medicationRequest}`, undefined, false],
      ['GET', '/fhir/R4/MedicationRequest'],
    ];
    const flagged: string[] = [];
    for (const [method, path, body, auth] of calls) {
      const r = await through(method, path, body, auth);
      if (r.violations || r.status === 500 || (r.status === 422 && r.text.includes('sl-violations')))
        flagged.push(`${method} ${path} -> ${r.status} ${String(r.violations ?? r.text.slice(0, 200))}`);
    }
    expect(flagged).toEqual([]);
  }, 60_000);
});
