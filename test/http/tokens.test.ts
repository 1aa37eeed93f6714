/**
 * The token lifecycle in the HTTP client and the 429 hold (fake clock, local server):
 * a token is taken when its request leaves, after every wait; a 401 HPB-00107 on a broker
 * token is re-sent once with a re-issued token; after a 429 nothing of that key leaves
 * before Retry-After, except a deliberate early retry.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/http/client.js';
import type { HttpClientOptions, TokenRenewal } from '../../src/http/types.js';
import type { Exchange } from '../../src/engine/types.js';
import { conformingHeaders, fakeClock, startServer } from './servers.js';
import { SERVICE_HTTP } from '../../src/service/http.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

interface Seen {
  at: number;
  path: string;
  authorization?: string;
}

type Step = { status: number; headers?: Record<string, string>; body?: unknown };

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
const UNAUTHORIZED = { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'login', diagnostics: 'SVC-00004: Unauthorized' }] };

/** A server answering by `reply(request number, authorization)`, noting when (fake clock) each request came. */
async function target(clock: ReturnType<typeof fakeClock>, reply: (n: number, authorization: string | undefined, path: string) => Step) {
  const seen: Seen[] = [];
  const s = await startServer((req, res) => {
    const authorization = req.headers.authorization;
    const path = req.url ?? '/';
    seen.push({ at: clock.now(), path, authorization });
    const step = reply(seen.length, authorization, path);
    res.writeHead(step.status, { 'content-type': 'application/fhir+json', ...conformingHeaders(clock.now()), ...step.headers });
    res.end(JSON.stringify(step.body ?? { resourceType: 'Bundle' }));
  });
  cleanups.push(() => s.close());
  return { s, seen };
}

function client(baseUrl: string, clock: ReturnType<typeof fakeClock>, extra: Partial<HttpClientOptions> = {}) {
  const waits: Array<{ reason: string; ms: number; client?: string }> = [];
  const reissued: Array<{ exchange: Exchange; client?: string; ageMs: number; lifetimeMs: number }> = [];
  const c = new HttpClient({
    protocol: SERVICE_HTTP,
    baseUrl,
    now: clock.now,
    sleep: clock.sleep,
    random: () => 0.5,
    onWait: (w) => waits.push(w),
    onTokenReissued: (info) => reissued.push(info),
    ...extra,
  });
  cleanups.push(() => c.close());
  return { c, waits, reissued };
}

/** A token source whose tokens name when (fake clock, ms after t0) they were taken. */
function source(clock: ReturnType<typeof fakeClock>) {
  const t0 = clock.now();
  return { next: async () => `source-token-at-${clock.now() - t0}` };
}

describe('HttpClient: a token is taken when its request leaves', () => {
  it('after the pacing wait, not before it', async () => {
    const clock = fakeClock();
    const { s, seen } = await target(clock, () => ({ status: 200 }));
    // Ceiling 2 per 60 s keeps one of headroom: the second request waits a whole window.
    const { c, waits } = client(s.url, clock, { windowSec: 60, ratePerMinute: { main: 2 } });
    const t0 = clock.now();
    const tokens = source(clock);
    await c.request({ url: '/fhir/R4/Encounter', client: 'main', token: tokens.next });
    await c.request({ url: '/fhir/R4/Encounter', client: 'main', token: tokens.next });
    expect(waits).toEqual([{ reason: 'client-side pacing at 2 per 60 s', ms: 60_000, client: 'main' }]);
    expect(seen.map((x) => [x.at - t0, x.authorization])).toEqual([
      [0, 'Bearer source-token-at-0'],
      [60_000, 'Bearer source-token-at-60000'],
    ]);
  });

  it('again before each retry, after the 5xx back-off', async () => {
    const clock = fakeClock();
    const { s, seen } = await target(clock, (n) => ({ status: n <= 2 ? 503 : 200 }));
    const { c } = client(s.url, clock);
    const t0 = clock.now();
    const tokens = source(clock);
    const r = await c.request({ url: '/fhir/R4/Encounter', client: 'main', token: tokens.next });
    expect(r.status).toBe(200);
    // Back-off 1 s then 2 s (jitter 0): each attempt carries a token taken right before it left.
    expect(seen.map((x) => [x.at - t0, x.authorization])).toEqual([
      [0, 'Bearer source-token-at-0'],
      [1000, 'Bearer source-token-at-1000'],
      [3000, 'Bearer source-token-at-3000'],
    ]);
  });

  it('a broker token string is renewed at send time; any other string goes as is', async () => {
    const clock = fakeClock();
    const { s, seen } = await target(clock, () => ({ status: 200 }));
    const tokens: TokenRenewal = {
      current: async (t) => (t === 'broker-token-near-expiry' ? 'broker-token-renewed' : undefined),
      replaceExpired: async () => undefined,
    };
    const { c } = client(s.url, clock, { tokens });
    await c.request({ url: '/fhir/R4/Encounter', client: 'main', token: 'broker-token-near-expiry' });
    await c.request({ url: '/fhir/R4/Encounter', client: 'main', token: 'a-deliberately-expired-token' });
    expect(seen.map((x) => x.authorization)).toEqual(['Bearer broker-token-renewed', 'Bearer a-deliberately-expired-token']);
  });
});

describe('HttpClient: 401 HPB-00107 on a token the suite held valid', () => {
  function renewal(replacements: Record<string, string>) {
    const asked: string[] = [];
    const tokens: TokenRenewal = {
      current: async (t) => t,
      replaceExpired: async (t) => {
        asked.push(t);
        const token = replacements[t];
        return token === undefined ? undefined : { token, ageMs: 7_900, lifetimeMs: 8_000 };
      },
    };
    return { tokens, asked };
  }

  it("re-issues once, re-sends, and records it as the suite's (not the target's)", async () => {
    const clock = fakeClock();
    const { s, seen } = await target(clock, (_n, auth) => (auth === 'Bearer old-broker-token' ? { status: 401, body: EXPIRED } : { status: 200 }));
    const { tokens, asked } = renewal({ 'old-broker-token': 'new-broker-token' });
    const { c, reissued } = client(s.url, clock, { tokens });
    const r = await c.request({ url: '/fhir/R4/Encounter', client: 'main', token: 'old-broker-token', retry: 'none' });
    expect(r.status).toBe(200);
    expect(seen.map((x) => x.authorization)).toEqual(['Bearer old-broker-token', 'Bearer new-broker-token']);
    expect(asked).toEqual(['old-broker-token']);
    expect(reissued).toHaveLength(1);
    expect(reissued[0]).toMatchObject({ client: 'main', ageMs: 7_900, lifetimeMs: 8_000 });
    expect(reissued[0]!.exchange.response?.status).toBe(401);
    expect(reissued[0]!.exchange.id).not.toBe(r.exchange.id);
    expect(c.stats.tokenReissues).toBe(1);
    // Neither token reaches the evidence.
    expect(JSON.stringify(reissued[0]!.exchange)).not.toContain('broker-token');
  });

  it('only once: a second HPB-00107 is returned as is', async () => {
    const clock = fakeClock();
    const { s, seen } = await target(clock, () => ({ status: 401, body: EXPIRED }));
    const { tokens } = renewal({ 'old-broker-token': 'new-broker-token', 'new-broker-token': 'newer-broker-token' });
    const { c } = client(s.url, clock, { tokens });
    const r = await c.request({ url: '/fhir/R4/Encounter', client: 'main', token: 'old-broker-token' });
    expect(r.status).toBe(401);
    expect(seen).toHaveLength(2);
    expect(c.stats.tokenReissues).toBe(1);
  });

  it("an explicit token (not the broker's) gets its 401 back as is", async () => {
    const clock = fakeClock();
    const { s, seen } = await target(clock, () => ({ status: 401, body: EXPIRED }));
    const { tokens, asked } = renewal({});
    const { c, reissued } = client(s.url, clock, { tokens });
    const r = await c.request({ url: '/fhir/R4/Encounter', client: 'main', token: 'expired-probe-token' });
    expect(r.status).toBe(401);
    expect(seen).toHaveLength(1);
    expect(asked).toEqual(['expired-probe-token']);
    expect(reissued).toEqual([]);
    expect(c.stats.tokenReissues).toBe(0);
  });

  it('another 401 (SVC-00004) is never retried', async () => {
    const clock = fakeClock();
    const { s, seen } = await target(clock, () => ({ status: 401, body: UNAUTHORIZED }));
    const { tokens, asked } = renewal({ 'old-broker-token': 'new-broker-token' });
    const { c } = client(s.url, clock, { tokens });
    expect((await c.request({ url: '/fhir/R4/Encounter', client: 'main', token: 'old-broker-token' })).status).toBe(401);
    expect(seen).toHaveLength(1);
    expect(asked).toEqual([]);
  });
});

describe("HttpClient: nothing of a key leaves before a 429's Retry-After", () => {
  it('holds paced, unpaced and urgent requests of the key; lets an earlyRetry through; other keys are free', async () => {
    const clock = fakeClock();
    const { s, seen } = await target(clock, (n) => (n === 1 ? { status: 429, headers: { 'retry-after': '5' } } : { status: 200 }));
    const { c, waits } = client(s.url, clock);
    const t0 = clock.now();
    const probe = { url: '/fhir/R4/MedicationRequest/x', client: 'extra', token: 'token-extra-0001', pace: false, retry: 'none', expect429: true } as const;
    expect((await c.request(probe)).status).toBe(429);
    clock.state.t = t0 + 1_500;
    // The deliberate early retry and another key go at once.
    await c.request({ ...probe, earlyRetry: true });
    await c.request({ url: '/fhir/R4/Encounter', client: 'main', token: 'token-main-0001' });
    expect(seen.map((x) => x.at - t0)).toEqual([0, 1_500, 1_500]);
    expect(waits).toEqual([]);
    // Any other request of the key waits until t0 + 5 s: unpaced, urgent, paced alike.
    await c.request(probe);
    expect(waits).toEqual([{ reason: '429 on this key: no request before its Retry-After elapses', ms: 3_500, client: 'extra' }]);
    await c.request({ ...probe, pace: true, urgent: true });
    await c.request({ ...probe, pace: true });
    expect(seen.map((x) => x.at - t0)).toEqual([0, 1_500, 1_500, 5_000, 5_000, 5_000]);
    expect(waits).toHaveLength(1);
  });
});
