/**
 * Pacing from the target's X-RateLimit-* headers and the configured ceiling, on a
 * fake clock (no real waits): the order and length of the waits, and the count
 * of paced requests the pacing figures use.
 */
import { describe, expect, it } from 'vitest';
import { Pacer } from '../../src/http/pacer.js';
import { rateLimitHints } from '../../src/service/rate-limit.js';

const T0 = 1_700_000_000_000;

function pacer(ceilings: Record<string, number> = { main: 60, extra: 60 }) {
  const clock = { t: T0 };
  const waits: Array<{ at: number; ms: number; bucket: string; reason: string }> = [];
  const p = new Pacer({
    windowSec: 60,
    defaultCeiling: 60,
    ceilings,
    now: () => clock.t,
    wait: async (ms, reason, bucket) => {
      waits.push({ at: clock.t - T0, ms, bucket, reason });
      clock.t += ms;
    },
  });
  return { p, clock, waits };
}

/** Headers of a response of a sliding-window target: `remaining` left, the next slot frees at `resetAt` (ms from T0). */
const headers = (limit: number, remaining: number, resetAt: number) => ({
  'x-ratelimit-limit': String(limit),
  'x-ratelimit-remaining': String(remaining),
  'x-ratelimit-reset': String(Math.ceil((T0 + resetAt) / 1000)),
});

describe('pacing from headers (fake clock)', () => {
  it('a run of responses counting down holds the key only once Remaining reaches 1, until the announced reset', async () => {
    const { p, clock, waits } = pacer();
    for (let remaining = 5; remaining >= 1; remaining--) {
      await p.acquire('main', true);
      p.observe('main', rateLimitHints(headers(60, remaining, 30_000)));
      clock.t += 100;
    }
    expect(waits).toEqual([]);
    await p.acquire('main', true);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatchObject({ bucket: 'main', reason: expect.stringContaining('reset') });
    expect(waits[0]!.at + waits[0]!.ms).toBe(30_000);
  });

  it('adopts a lower X-RateLimit-Limit: the sliding limiter then paces at that ceiling, one below it', async () => {
    const { p, clock, waits } = pacer();
    p.observe('main', rateLimitHints({ 'x-ratelimit-limit': '4' }));
    for (let i = 0; i < 3; i++) {
      await p.acquire('main', true);
      clock.t += 1000;
    }
    expect(waits).toEqual([]);
    await p.acquire('main', true);
    // three requests at 0, 1 and 2 s: the fourth goes when the first leaves the 60 s window
    expect(waits.map((w) => [w.bucket, w.at + w.ms])).toEqual([['main', 60_000]]);
  });

  it('keeps keys apart: a held key does not hold another one', async () => {
    const { p, waits } = pacer();
    p.observe('extra', rateLimitHints(headers(60, 0, 45_000)));
    await p.acquire('main', true);
    expect(waits).toEqual([]);
    await p.acquire('extra', true);
    expect(waits.map((w) => w.bucket)).toEqual(['extra']);
  });

  it('counts the requests that went through the limiter per key, not the unpaced buckets', async () => {
    const { p } = pacer();
    for (let i = 0; i < 3; i++) await p.acquire('main', true);
    await p.acquire('extra', true);
    await p.acquire('token-endpoint', false);
    expect(p.limitedRequests()).toEqual({ main: 3, extra: 1 });
  });

  it('paces a long run of one key to ceiling - 1 per window: each 59 requests sent at once cost one window', async () => {
    const { p, waits } = pacer();
    for (let i = 0; i < 177; i++) await p.acquire('main', true);
    expect(waits.map((w) => [w.at, w.ms])).toEqual([
      [0, 60_000],
      [60_000, 60_000],
    ]);
    expect(p.limitedRequests()).toEqual({ main: 177 });
  });
});
