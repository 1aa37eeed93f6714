import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/http/client.js';
import { Pacer } from '../../src/http/pacer.js';
import { fakeClock, startServer } from './servers.js';
import { rateLimitHints } from '../../src/service/rate-limit.js';
import { SERVICE_HTTP } from '../../src/service/http.js';

function pacer(opts: { ceilings?: Record<string, number>; defaultCeiling?: number } = {}) {
  const clock = fakeClock();
  const waits: Array<{ ms: number; reason: string; bucket: string }> = [];
  const p = new Pacer({
    windowSec: 60,
    defaultCeiling: opts.defaultCeiling ?? 60,
    ceilings: opts.ceilings,
    now: clock.now,
    wait: async (ms, reason, bucket) => {
      waits.push({ ms, reason, bucket });
      await clock.sleep(ms);
    },
  });
  return { p, clock, waits };
}

describe('Pacer: client-side sliding window', () => {
  it('allows ceiling - 1 requests per window, then waits for the oldest to leave the window', async () => {
    const { p, clock, waits } = pacer({ ceilings: { main: 5 } });
    for (let i = 0; i < 4; i++) {
      await p.acquire('main', true);
      clock.state.t += 1000;
    }
    expect(waits).toEqual([]);
    await p.acquire('main', true);
    // First request at t0; the fifth may go at t0 + 60 s (now is t0 + 4 s).
    expect(waits).toEqual([{ ms: 56_000, reason: 'client-side pacing at 5 per 60 s', bucket: 'main' }]);
  });

  it('keeps roles apart and leaves unlimited buckets to the headers', async () => {
    const { p, waits } = pacer({ defaultCeiling: 2 });
    await p.acquire('main', true);
    await p.acquire('extra', true);
    for (let i = 0; i < 10; i++) await p.acquire('anonymous', false);
    expect(waits).toEqual([]);
    await p.acquire('main', true);
    expect(waits.map((w) => w.bucket)).toEqual(['main']);
  });
});

describe('Pacer: header-driven', () => {
  it('waits until X-RateLimit-Reset when Remaining <= 1', async () => {
    const { p, clock, waits } = pacer();
    const resetS = Math.floor(clock.now() / 1000) + 20;
    p.observe('main', rateLimitHints({ 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': String(resetS) }));
    await p.acquire('main', true);
    expect(waits).toEqual([{ ms: resetS * 1000 - 1_700_000_000_000, reason: 'rate-limit headers: remaining exhausted, waiting for reset', bucket: 'main' }]);
  });

  it('a Reset that names the whole window free: waits only until its own log says two slots are free (slack for a whole-second window)', async () => {
    const { p, clock, waits } = pacer();
    const t0 = clock.now();
    // 59 requests within the first 590 ms, then the 60th when the first left the window by our count.
    for (let i = 0; i < 59; i++) {
      await p.acquire('main', true);
      clock.state.t += 10;
    }
    clock.state.t = t0 + 60_100;
    await p.acquire('main', true);
    expect(waits).toEqual([]);
    // The target still counts all 60 (whole seconds) and names the moment its newest leaves.
    const resetS = Math.ceil((clock.now() + 60_000) / 1000);
    p.observe('main', rateLimitHints({ 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(resetS) }));
    await p.acquire('main', true);
    // Two must leave: the second request of the log (t0 + 10 ms) a window and the slack (1.5 s) later.
    expect(waits).toEqual([{ ms: t0 + 10 + 61_500 - (t0 + 60_100), reason: 'rate-limit headers: remaining exhausted, waiting for reset', bucket: 'main' }]);
  });

  it('a target counting more than its own log (another client, an unpaced burst) is waited out to its Reset', async () => {
    const { p, clock, waits } = pacer();
    for (let i = 0; i < 10; i++) await p.acquire('main', true);
    const resetS = Math.floor(clock.now() / 1000) + 50;
    p.observe('main', rateLimitHints({ 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': String(resetS) }));
    await p.acquire('main', true);
    expect(waits).toEqual([{ ms: resetS * 1000 - 1_700_000_000_000, reason: 'rate-limit headers: remaining exhausted, waiting for reset', bucket: 'main' }]);
  });

  it('does not wait while Remaining > 1, and bounds a hostile Reset by window + 5 s', async () => {
    const { p, clock, waits } = pacer();
    const nowS = Math.floor(clock.now() / 1000);
    p.observe('anonymous', rateLimitHints({ 'x-ratelimit-remaining': '2', 'x-ratelimit-reset': String(nowS + 30) }));
    await p.acquire('anonymous', false);
    expect(waits).toEqual([]);
    p.observe('anonymous', rateLimitHints({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(clock.now()) })); // milliseconds
    await p.acquire('anonymous', false);
    expect(waits.map((w) => w.ms)).toEqual([65_000]);
  });

  it('adopts a header limit lower than the configured ceiling, never a higher one', () => {
    const { p } = pacer();
    p.observe('main', rateLimitHints({ 'x-ratelimit-limit': '10' }));
    expect(p.ceiling('main')).toBe(10);
    p.observe('main', rateLimitHints({ 'x-ratelimit-limit': '100' }));
    expect(p.ceiling('main')).toBe(10);
    p.observe('main', rateLimitHints({ 'x-ratelimit-limit': 'lots' }));
    expect(p.ceiling('main')).toBe(10);
  });
});

describe('Pacer: the hold after a 429', () => {
  it('holds every request of the bucket until Retry-After, urgent or unpaced; earlyRetry and other buckets pass', async () => {
    const { p, clock, waits } = pacer();
    const t0 = clock.now();
    p.hold('extra', t0 + 5_000);
    await p.acquire('extra', true, false, { earlyRetry: true });
    await p.acquire('main', true, true);
    await p.acquire('anonymous', false);
    expect(waits).toEqual([]);
    clock.state.t = t0 + 1_500;
    await p.acquire('extra', true, true);
    expect(waits).toEqual([{ ms: 3_500, reason: '429 on this key: no request before its Retry-After elapses', bucket: 'extra' }]);
    expect(clock.now()).toBe(t0 + 5_000);
    p.hold('extra', t0 + 8_000);
    await p.acquire('extra', true, false, { paced: false });
    expect(clock.now()).toBe(t0 + 8_000);
  });

  it('is never shortened by a later, shorter Retry-After, nor bounded by the window', () => {
    const { p, clock } = pacer();
    const t0 = clock.now();
    p.hold('extra', t0 + 300_000);
    p.hold('extra', t0 + 2_000);
    expect(p.heldUntil('extra')).toBe(t0 + 300_000);
    expect(p.heldUntil('main')).toBe(0);
  });

  it('an unpaced request takes no slot of the sliding window', async () => {
    const { p, waits } = pacer({ ceilings: { main: 2 } });
    for (let i = 0; i < 5; i++) await p.acquire('main', true, false, { paced: false });
    await p.acquire('main', true);
    expect(waits).toEqual([]);
    expect(p.limitedRequests()).toEqual({ main: 1 });
  });

  it('a hold longer than maxHoldMs fails the request instead of sending it early', async () => {
    const clock = fakeClock();
    const p = new Pacer({ windowSec: 60, defaultCeiling: 60, now: clock.now, wait: async (ms) => clock.sleep(ms), maxHoldMs: 120_000 });
    p.hold('extra', clock.now() + 3_600_000);
    await expect(p.acquire('extra', true)).rejects.toThrow(/holds key extra for 3600 s more .*not sent early/);
    await expect(p.acquire('extra', true, false, { earlyRetry: true })).resolves.toBeUndefined();
  });
});

describe('HttpClient pacing', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });

  it('paces a role from the response headers, and pace: false bypasses it', async () => {
    const clock = fakeClock(Date.now());
    const resetS = Math.floor(clock.now() / 1000) + 10;
    const s = await startServer((_req, res) => {
      res.writeHead(200, { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(resetS) });
      res.end();
    });
    cleanups.push(() => s.close());
    const waits: Array<{ ms: number; client?: string }> = [];
    const c = new HttpClient({
      baseUrl: s.url,
      protocol: SERVICE_HTTP,
      now: clock.now,
      sleep: clock.sleep,
      onWait: ({ ms, client }) => waits.push({ ms, client }),
    });
    cleanups.push(() => c.close());
    await c.request({ url: '/fhir/R4/Encounter', client: 'main' });
    await c.request({ url: '/fhir/R4/Encounter', client: 'extra' });
    expect(waits).toEqual([]);
    await c.request({ url: '/fhir/R4/Encounter', client: 'main', pace: false });
    expect(waits).toEqual([]);
    const before = clock.now();
    await c.request({ url: '/fhir/R4/Encounter', client: 'main' });
    expect(waits).toEqual([{ ms: resetS * 1000 - before, client: 'main' }]);
    expect(c.stats.waitsMs).toBe(waits[0].ms);
  });
});
