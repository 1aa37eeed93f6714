/**
 * Token lifecycle end to end (HTTP client + token broker + a local target with 8 s tokens,
 * on a fake clock): whatever a request waits (Retry-After, back-off, a 429's hold), the token
 * it carries is still valid when it arrives, and a token the target calls expired early is
 * re-issued once and recorded.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/http/client.js';
import { TokenBroker } from '../../src/auth/broker.js';
import type { ResolvedClient } from '../../src/config/index.js';
import { conformingHeaders, fakeClock, startServer } from '../http/servers.js';
import { testClient } from './helpers.js';
import { SERVICE_HTTP } from '../../src/service/http.js';

const LIFETIME_MS = 8_000;
const EXPIRED = {
  resourceType: 'OperationOutcome',
  issue: [
    {
      severity: 'error',
      code: 'login',
      diagnostics: 'HPB-00107: access token expired',
      details: { coding: [{ system: 'https://example.org/codes', code: 'HPB-00107' }] },
    },
  ],
};

let main: ResolvedClient;
beforeAll(() => {
  main = testClient('main');
});

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/**
 * A target issuing `tok-N` valid 8 s (by the fake clock). FHIR calls answer `script(n)` when
 * the token is valid (n counts FHIR calls), 401 HPB-00107 when it has expired or is revoked.
 */
async function setUp(script: (n: number) => { status: number; headers?: Record<string, string> }) {
  const clock = fakeClock();
  const issued = new Map<string, number>();
  const revoked = new Set<string>();
  const fhir: Array<{ at: number; token: string; status: number }> = [];
  const s = await startServer((req, res) => {
    const headers = { 'content-type': 'application/fhir+json', ...conformingHeaders(clock.now()) };
    if (req.url === '/auth/token') {
      const token = `tok-${issued.size + 1}`;
      issued.set(token, clock.now());
      res.writeHead(200, { ...headers, 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: LIFETIME_MS / 1000 }));
      return;
    }
    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    const from = issued.get(token);
    const valid = from !== undefined && clock.now() < from + LIFETIME_MS && !revoked.has(token);
    const step = valid ? script(fhir.length + 1) : { status: 401 };
    fhir.push({ at: clock.now(), token, status: step.status });
    res.writeHead(step.status, { ...headers, ...step.headers });
    res.end(JSON.stringify(valid ? { resourceType: 'Bundle' } : EXPIRED));
  });
  cleanups.push(() => s.close());
  const reissued: string[] = [];
  let broker: TokenBroker | undefined;
  const http = new HttpClient({
    protocol: SERVICE_HTTP,
    baseUrl: s.url,
    now: clock.now,
    sleep: clock.sleep,
    random: () => 0.5,
    timeoutMs: 15_000,
    tokens: { current: async (t) => broker?.current(t), replaceExpired: async (t) => broker?.replaceExpired(t) },
    onTokenReissued: (info) => reissued.push(info.exchange.id),
  });
  cleanups.push(() => http.close());
  broker = new TokenBroker({
    http,
    tokenUrl: `${s.url}/auth/token`,
    clients: [main],
    issuancePerMinute: 20,
    windowSec: 60,
    tokenLifetimeSec: LIFETIME_MS / 1000,
    sendMarginMs: 15_000,
    now: clock.now,
    sleep: clock.sleep,
  });
  const t0 = clock.now();
  const tokenOf = () => broker!.token('main', ['system/Encounter.rs']);
  return { clock, http, broker, fhir, issued, revoked, reissued, t0, tokenOf };
}

describe('token lifecycle end to end (8 s tokens)', () => {
  it('a 429 with Retry-After 9 s: the retry carries a token taken after the wait', async () => {
    const env = await setUp((n) => (n === 1 ? { status: 429, headers: { 'retry-after': '9' } } : { status: 200 }));
    const r = await env.http.request({ url: '/fhir/R4/Encounter', client: 'main', token: env.tokenOf });
    expect(r.status).toBe(200);
    expect(env.fhir.map((x) => [x.at - env.t0, x.token, x.status])).toEqual([
      [0, 'tok-1', 429],
      [9_000, 'tok-2', 200],
    ]);
  });

  it('5xx back-off of 1 + 2 + 4 s: no attempt leaves with a token that expires before it arrives', async () => {
    const env = await setUp((n) => ({ status: n <= 3 ? 503 : 200 }));
    // The token was taken at 3 s before the first attempt (another request used it earlier).
    await env.tokenOf();
    env.clock.state.t += 3_000;
    const r = await env.http.request({ url: '/fhir/R4/Encounter', client: 'main', token: env.tokenOf });
    expect(r.status).toBe(200);
    expect(env.fhir.map((x) => x.status)).toEqual([503, 503, 503, 200]);
    for (const x of env.fhir) expect(x.at, `${x.token} used at ${x.at - env.t0} ms`).toBeLessThan(env.issued.get(x.token)! + LIFETIME_MS - 2_000);
  });

  it('a check that kept a broker token string past a long hold gets a fresh one when its request leaves', async () => {
    const env = await setUp(() => ({ status: 200 }));
    const kept = await env.tokenOf();
    env.clock.state.t += 7_000;
    const r = await env.http.request({ url: '/fhir/R4/Encounter', client: 'main', token: kept });
    expect(r.status).toBe(200);
    expect(env.fhir.map((x) => x.token)).toEqual(['tok-2']);
  });

  it('401 HPB-00107 on a token held valid: one re-issue, one re-send, recorded; an explicit foreign token gets its 401', async () => {
    const env = await setUp(() => ({ status: 200 }));
    const token = await env.tokenOf();
    env.revoked.add(token);
    const r = await env.http.request({ url: '/fhir/R4/Encounter', client: 'main', token: env.tokenOf });
    expect(r.status).toBe(200);
    expect(env.fhir.map((x) => [x.token, x.status])).toEqual([
      ['tok-1', 401],
      ['tok-2', 200],
    ]);
    expect(env.reissued).toHaveLength(1);
    expect(env.http.stats.tokenReissues).toBe(1);
    expect(env.broker.issued).toBe(2);

    const probe = await env.broker.freshToken('main', ['system/Encounter.rs']);
    env.clock.state.t += LIFETIME_MS;
    const expired = await env.http.request({ url: '/fhir/R4/Encounter', client: 'main', token: probe });
    expect(expired.status).toBe(401);
    expect(env.http.stats.tokenReissues).toBe(1);
  });
});
