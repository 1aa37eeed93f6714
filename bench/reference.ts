/**
 * bench:reference — authenticated reads per second on loopback (rate limits
 * lifted) with autocannon, and the reference server's start-up time.
 * Prints figures; asserts nothing (targets: >= 2,000 reads/s, start-up < 1 s).
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import autocannon from 'autocannon';
import { createReferenceServer } from '../src/reference/index.js';
import { resolveConfig } from '../src/config/index.js';
import { HttpClient } from '../src/http/client.js';
import { TokenBroker } from '../src/auth/broker.js';
import { PROJECT_ROOT } from '../src/paths.js';
import { SERVICE_HTTP } from '../src/service/http.js';

/** Cold start: spawn `fhir-conformance serve` and wait for its ready line. */
async function coldStartMs(): Promise<number> {
  const t = performance.now();
  const child = spawn(process.execPath, [resolve(PROJECT_ROOT, 'bin/fhir-conformance.js'), 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((done, fail) => {
    child.stdout.on('data', (b: Buffer) => b.toString().includes('listening on') && done());
    child.on('exit', (code) => fail(new Error(`serve exited with ${code}`)));
  });
  const ms = performance.now() - t;
  child.kill('SIGTERM');
  return ms;
}
const coldMs = await coldStartMs();

const t0 = performance.now();
const server = await createReferenceServer({ port: 0, limits: { enforceRateLimits: false } });
const startupMs = performance.now() - t0;

const config = await resolveConfig(server.targetConfig(), PROJECT_ROOT);
const http = new HttpClient({ baseUrl: server.url, protocol: SERVICE_HTTP });
const broker = new TokenBroker({
  http,
  tokenUrl: `${server.url}/auth/token`,
  clients: config.clients,
  issuancePerMinute: 20,
  windowSec: 60,
  tokenLifetimeSec: 300,
});
const token = await broker.token('main', ['system/MedicationRequest.rs']);
const id = server.fixtureIds.medicationRequest;

const result = await autocannon({
  url: `${server.url}/fhir/R4/MedicationRequest/${id}`,
  connections: 20,
  duration: 10,
  headers: { authorization: `Bearer ${token}`, accept: 'application/fhir+json' },
});
await http.close();
await server.close();

const figures = {
  startup_ms: Math.round(startupMs),
  cold_start_ms: Math.round(coldMs),
  reads_per_s: Math.round(result.requests.average),
  latency_p99_ms: result.latency.p99,
  non_2xx: result.non2xx,
  errors: result.errors,
};
console.log(
  `reference start-up: ${figures.startup_ms} ms in-process; ${figures.cold_start_ms} ms from \`fhir-conformance serve\` to listening, process start included (target < 1000)`,
);
console.log(
  `authenticated reads: ${figures.reads_per_s}/s over 10 s, 20 connections, p99 ${figures.latency_p99_ms} ms, non-2xx ${figures.non_2xx} (target >= 2000/s)`,
);
console.log(JSON.stringify(figures));
