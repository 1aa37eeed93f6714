import { afterEach, describe, expect, it } from 'vitest';
import { ConformanceError } from '../../src/errors.js';
import { HttpClient } from '../../src/http/client.js';
import type { HttpClientOptions } from '../../src/http/types.js';
import { backoffDelayMs, parseRetryAfterMs } from '../../src/http/retry.js';
import { conformingHeaders, fakeClock, startServer, type TestServer } from './servers.js';
import { SERVICE_HTTP } from '../../src/service/http.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A server answering with the scripted statuses in turn (then 200), counting requests. */
async function scripted(statuses: Array<{ status: number; headers?: Record<string, string> }>) {
  const seen = { count: 0 };
  const s: TestServer = await startServer((_req, res) => {
    const step = statuses[seen.count++] ?? { status: 200 };
    res.writeHead(step.status, { 'content-type': 'application/fhir+json', ...conformingHeaders(), ...step.headers });
    res.end(JSON.stringify({ resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'exception', diagnostics: 'x' }] }));
  });
  cleanups.push(() => s.close());
  return { s, seen };
}

function client(baseUrl: string, extra: Partial<HttpClientOptions> = {}) {
  const clock = fakeClock(Date.now());
  const waits: Array<{ reason: string; ms: number; client?: string }> = [];
  const c = new HttpClient({ baseUrl, protocol: SERVICE_HTTP, now: clock.now, sleep: clock.sleep, random: () => 0.5, onWait: (w) => waits.push(w), ...extra });
  cleanups.push(() => c.close());
  return { c, clock, waits };
}

describe('retry helpers', () => {
  it('backs off 1 s, 2 s, 4 s ... capped at 60 s with +-10 % jitter', () => {
    expect([0, 1, 2, 6, 10].map((n) => backoffDelayMs(n, () => 0.5))).toEqual([1000, 2000, 4000, 60000, 60000]);
    expect(backoffDelayMs(0, () => 0)).toBe(900);
    expect(backoffDelayMs(2, () => 0.999999)).toBe(4400);
  });

  it('parses Retry-After as whole seconds only', () => {
    expect(parseRetryAfterMs('3')).toBe(3000);
    expect(parseRetryAfterMs(' 0 ')).toBe(0);
    expect(parseRetryAfterMs(undefined)).toBeUndefined();
    expect(parseRetryAfterMs('soon')).toBeUndefined();
    expect(parseRetryAfterMs('1.5')).toBeUndefined();
  });
});

describe('HttpClient retry rules', () => {
  it('honours Retry-After on 429, then succeeds; counts the unplanned 429', async () => {
    const { s, seen } = await scripted([{ status: 429, headers: { 'retry-after': '7' } }]);
    const { c, clock, waits } = client(s.url);
    const r = await c.request({ url: '/fhir/R4/Encounter', client: 'main', token: 'token-abcdefgh' });
    expect(r.status).toBe(200);
    expect(seen.count).toBe(2);
    expect(clock.state.delays).toEqual([7000]);
    expect(waits).toEqual([{ reason: '429: Retry-After 7 s', ms: 7000, client: 'main' }]);
    expect(c.stats).toMatchObject({ requests: 2, unplanned429: 1, waitsMs: 7000 });
  });

  it('does not count a 429 marked expect429', async () => {
    const { s } = await scripted([{ status: 429, headers: { 'retry-after': '1' } }]);
    const { c } = client(s.url);
    const r = await c.request({ url: '/fhir/R4/Encounter', expect429: true, retry: 'none' });
    expect(r.status).toBe(429);
    expect(c.stats.unplanned429).toBe(0);
  });

  it('backs off exponentially on 5xx (1 s, 2 s, 4 s +-10 %) and stops after 3 retries', async () => {
    const { s, seen } = await scripted([{ status: 500 }, { status: 502 }, { status: 500 }, { status: 500 }, { status: 500 }]);
    const randoms = [0, 0.5, 1 - 1e-9];
    const { c, clock } = client(s.url, { random: () => randoms.shift() ?? 0.5 });
    const r = await c.request({ url: '/fhir/R4/Encounter' });
    expect(r.status).toBe(500);
    expect(seen.count).toBe(4);
    expect(clock.state.delays).toEqual([900, 2000, 4400]);
  });

  it('uses Retry-After on a 503', async () => {
    const { s, seen } = await scripted([{ status: 503, headers: { 'retry-after': '5' } }]);
    const { c, clock } = client(s.url);
    expect((await c.request({ url: '/fhir/R4/Encounter' })).status).toBe(200);
    expect(seen.count).toBe(2);
    expect(clock.state.delays).toEqual([5000]);
  });

  it.each([400, 401, 403, 404, 409, 422])('never retries %i', async (status) => {
    const { s, seen } = await scripted([{ status }]);
    const { c, clock } = client(s.url);
    expect((await c.request({ url: '/fhir/R4/Encounter' })).status).toBe(status);
    expect(seen.count).toBe(1);
    expect(clock.state.delays).toEqual([]);
  });

  it("returns the first response with retry: 'none'", async () => {
    const { s, seen } = await scripted([{ status: 503, headers: { 'retry-after': '1' } }]);
    const { c } = client(s.url);
    const r = await c.request({ url: '/fhir/R4/Encounter', retry: 'none' });
    expect(r.status).toBe(503);
    expect(seen.count).toBe(1);
    // A provoked 5xx is a server error the outcome policy judges with the target's health, like one that outlasted the retries.
    expect(c.unjudgeableAnswer(r.exchange.id)).toEqual({
      kind: 'server-error',
      status: 503,
      attempts: 1,
      provoked: true,
      reason: `the target answered 503 to GET ${s.url}/fhir/R4/Encounter, a request sent without retries (server error)`,
    });
  });

  it("marks no provoked server error for a 4xx or 429 answered with retry: 'none', nor for a retried 5xx", async () => {
    const { s } = await scripted([
      { status: 400 },
      { status: 429, headers: { 'retry-after': '1' } },
      { status: 500 },
      { status: 500 },
      { status: 500 },
      { status: 500 },
    ]);
    const { c } = client(s.url);
    const bad = await c.request({ url: '/fhir/R4/Encounter', retry: 'none' });
    const throttled = await c.request({ url: '/fhir/R4/Encounter', retry: 'none', expect429: true });
    expect([bad.status, throttled.status]).toEqual([400, 429]);
    expect(c.unjudgeableAnswer(bad.exchange.id)).toBeUndefined();
    expect(c.unjudgeableAnswer(throttled.exchange.id)).toBeUndefined();
    const retried = await c.request({ url: '/fhir/R4/Encounter' });
    expect(retried.status).toBe(500);
    expect(c.unjudgeableAnswer(retried.exchange.id)).toMatchObject({ kind: 'server-error', status: 500, attempts: 4 });
    expect(c.unjudgeableAnswer(retried.exchange.id)?.provoked).toBeUndefined();
  });

  it('returns the 429 at once for a one-hour Retry-After, and never sends the role early', async () => {
    const { s, seen } = await scripted([{ status: 429, headers: { 'retry-after': '3600' } }]);
    const { c, clock } = client(s.url);
    const r = await c.request({ url: '/fhir/R4/Encounter', client: 'main' });
    expect(r.status).toBe(429);
    expect(seen.count).toBe(1);
    expect(clock.state.delays).toEqual([]);
    // The next request of that role would have to wait an hour: it fails instead of leaving early (Retry rule 1).
    const e = await c.request({ url: '/fhir/R4/Encounter', client: 'main' }).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(ConformanceError);
    expect((e as ConformanceError).code).toBe('ERR_DEADLINE');
    expect((e as Error).message).toMatch(/holds key main for 3600 s more .*not sent early/);
    expect(seen.count).toBe(1);
    // Another role is not held.
    expect((await c.request({ url: '/fhir/R4/Encounter', client: 'extra' })).status).toBe(200);
    expect(clock.state.delays).toEqual([]);
  });

  it('gives up with the 429 when Retry-After is absent or exceeds the remaining run time', async () => {
    const { s, seen } = await scripted([{ status: 429 }, { status: 429, headers: { 'retry-after': '30' } }]);
    const { c, clock } = client(s.url);
    expect((await c.request({ url: '/fhir/R4/Encounter' })).status).toBe(429);
    const { c: c2 } = client(s.url, { now: clock.now, sleep: clock.sleep, deadline: clock.now() + 10_000 });
    expect((await c2.request({ url: '/fhir/R4/Encounter' })).status).toBe(429);
    expect(seen.count).toBe(2);
    expect(clock.state.delays).toEqual([]);
  });

  it('fails with ERR_DEADLINE once the run deadline has passed', async () => {
    const { s, seen } = await scripted([]);
    const { c, clock } = client(s.url, { deadline: Date.now() + 1000 });
    clock.state.t += 2000;
    const e = await c.request({ url: '/fhir/R4/Encounter' }).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(ConformanceError);
    expect((e as ConformanceError).code).toBe('ERR_DEADLINE');
    expect(seen.count).toBe(0);
  });

  it('ends a pacing wait early with ERR_DEADLINE when it would outlive the run', async () => {
    const { s } = await scripted([{ status: 200, headers: { 'x-ratelimit-remaining': '0' } }]);
    const { c, clock } = client(s.url, { deadline: Date.now() + 5_000 });
    await c.request({ url: '/fhir/R4/Encounter', client: 'main' });
    const e = await c.request({ url: '/fhir/R4/Encounter', client: 'main' }).catch((err: unknown) => err);
    expect((e as ConformanceError).code).toBe('ERR_DEADLINE');
    expect(clock.state.delays).toEqual([]);
  });

  it('aborts an in-flight request and a wait with ERR_INTERRUPTED', async () => {
    const s = await startServer(() => undefined);
    cleanups.push(() => s.close());
    const controller = new AbortController();
    const c = new HttpClient({ baseUrl: s.url, signal: controller.signal });
    cleanups.push(() => c.close());
    const pending = c.request({ url: '/fhir/R4/Encounter' }).catch((err: unknown) => err);
    setTimeout(() => controller.abort(), 50);
    expect(((await pending) as ConformanceError).code).toBe('ERR_INTERRUPTED');

    const { s: s2 } = await scripted([{ status: 429, headers: { 'retry-after': '30' } }]);
    const controller2 = new AbortController();
    const c2 = new HttpClient({ baseUrl: s2.url, signal: controller2.signal, onWait: () => controller2.abort() });
    cleanups.push(() => c2.close());
    const e = await c2.request({ url: '/fhir/R4/Encounter' }).catch((err: unknown) => err);
    expect((e as ConformanceError).code).toBe('ERR_INTERRUPTED');
  });
});
