import { describe, expect, it } from 'vitest';
import type { CheckContext } from '../../src/engine/context.js';
import type { HttpResponse } from '../../src/http/types.js';
import { burstBound, burstUntil429, waitUntil, type Hit, type Probe } from '../../suites/rate-limit/support.js';
import { integerHeader } from '../../src/service/index.js';

/** A context whose FHIR calls hit a key limited to `limit` requests (or never limited). */
function limitedContext(limit: number | undefined) {
  let served = 0;
  let inFlight = 0;
  const log: Array<{ status: number; inFlight: number }> = [];
  const ctx = {
    token: async () => 'token',
    async fhir(): Promise<HttpResponse> {
      inFlight++;
      const concurrent = inFlight;
      await new Promise((r) => setTimeout(r, 1));
      const status = limit !== undefined && served >= limit ? 429 : 200;
      if (status === 200) served++;
      inFlight--;
      log.push({ status, inFlight: concurrent });
      const remaining = String(Math.max(0, (limit ?? 1000) - served));
      return {
        status,
        headers: { 'x-ratelimit-remaining': remaining, ...(status === 429 ? { 'retry-after': '3' } : {}) },
        text: '',
        json: undefined,
        bodyTruncated: false,
        exchange: { id: `x-${log.length}` } as HttpResponse['exchange'],
      };
    },
  } as unknown as CheckContext;
  return { ctx, log };
}

const probe = (limit: number): Probe => ({ role: 'extra', url: '/fhir/R4/MedicationRequest/x', limit, windowMs: 5_000 });

describe('burstUntil429', () => {
  it('stops at the first 429, which is the only refused request and is sent alone', async () => {
    const { ctx, log } = limitedContext(50);
    const burst = await burstUntil429(ctx, probe(50), burstBound(probe(50)));
    expect(burst.refused?.res.status).toBe(429);
    expect(burst.hits).toHaveLength(51);
    expect(log.filter((l) => l.status === 429)).toHaveLength(1);
    expect(log.at(-1)).toEqual({ status: 429, inFlight: 1 });
    expect(Math.max(...log.map((l) => l.inFlight))).toBeGreaterThan(1);
  });

  it('sends at most the bound when the key is never refused', async () => {
    const { ctx, log } = limitedContext(undefined);
    const burst = await burstUntil429(ctx, probe(50), burstBound(probe(50)));
    expect(burst.refused).toBeUndefined();
    expect(log).toHaveLength(burstBound(probe(50)));
    expect(burstBound(probe(50))).toBe(60);
  });
});

describe('rate-limit header helpers', () => {
  it('reads non-negative integers only', () => {
    expect(integerHeader('60')).toBe(60);
    expect(integerHeader(' 7 ')).toBe(7);
    expect(integerHeader('1.5')).toBeUndefined();
    expect(integerHeader('-1')).toBeUndefined();
    expect(integerHeader(undefined)).toBeUndefined();
  });

  it('waits Retry-After from the 429, else until X-RateLimit-Reset, never beyond three windows and 30 s', () => {
    const h = (headers: Hit['headers']): Hit => ({ sentAt: 1_000_000, receivedAt: 1_000_000, res: {} as HttpResponse, headers });
    expect(waitUntil(h({ retryAfter: 2, reset: 9_999 }), probe(5))).toBe(1_002_100);
    expect(waitUntil(h({ reset: 1_003 }), probe(5))).toBe(1_003_100);
    expect(waitUntil(h({ retryAfter: 3_600 }), probe(5))).toBe(1_045_000);
  });
});
