/**
 * The burst and sliding-window episodes against a simulated target on a fake
 * clock (vitest fake timers): one server thread that takes `processMs` per
 * request and decides with the reference's window logic (or a faulty one).
 * A slow target makes the rule unobservable (skip with figures, never fail);
 * a fast one is judged exactly.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CheckContext } from '../../src/engine/context.js';
import type { HttpResponse } from '../../src/http/types.js';
import { SlidingWindowLog, rateLimitHeaders, retryAfterSeconds } from '../../src/reference/rate-limit.js';
import { keyWindowLog } from '../../src/reference/faults/rate-limit.js';
import { burstBound, burstUntil429, timed, type Probe } from '../../suites/rate-limit/support.js';
import { judgeKeyBurst, type Timed } from '../../src/service/limits/judge.js';
import { runSliding } from '../../suites/rate-limit/scenarios.js';

const T0 = 1_900_000_000_000;
const W = 6_000;
const LIMIT = 30;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/** A context whose probes reach one simulated key on a single-threaded server. */
function simulated(window: SlidingWindowLog, processMs: number, netMs = 2) {
  let freeAt = 0;
  const log: Timed[] = [];
  const ctx = {
    limits: { windowSec: W / 1000, tokenLifetimeSec: 300, tokenIssuancePerMinute: 20 },
    config: { clients: [{ role: 'second-org' }, { role: 'main' }] },
    run: { keyRequests: (role: string) => (role === 'second-org' ? log : []) },
    tokens: { token: async () => 'token' },
    token: async () => 'token',
    sleep,
    waiting: () => undefined,
    async fhir(): Promise<HttpResponse> {
      const sentAt = Date.now();
      await sleep(netMs);
      freeAt = Math.max(Date.now(), freeAt) + processMs;
      await sleep(freeAt - Date.now());
      const now = Date.now();
      const d = window.hit('k', LIMIT, now);
      const headers: Record<string, string> = Object.fromEntries(Object.entries(rateLimitHeaders(d)).map(([k, v]) => [k.toLowerCase(), v]));
      if (!d.allowed) headers['retry-after'] = String(retryAfterSeconds(d.retryAtMs ?? d.resetMs, now));
      await sleep(netMs);
      const status = d.allowed ? 200 : 429;
      log.push({ sentAt, receivedAt: Date.now(), status });
      return { status, headers, text: '', json: undefined, bodyTruncated: false, exchange: { id: `x-${log.length}` } } as unknown as HttpResponse;
    },
  } as unknown as CheckContext;
  return { ctx, log };
}

const probe: Probe = { role: 'second-org', url: '/fhir/R4/MedicationRequest/x', limit: LIMIT, windowMs: W };

async function settle<T>(p: Promise<T>): Promise<T> {
  await vi.runAllTimersAsync();
  return p;
}

async function burstVerdict(window: SlidingWindowLog, processMs: number, concurrency = 8) {
  const { ctx } = simulated(window, processMs);
  const burst = await settle(burstUntil429(ctx, probe, burstBound(probe), concurrency));
  return judgeKeyBurst({ limit: LIMIT, windowMs: W, requests: burst.hits.map(timed), earlier: [], orgOthers: [], concurrency });
}

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('a burst against a simulated key (30 per 6 s)', () => {
  it('a fast target is refused at its ceiling: pass', async () => {
    expect(await burstVerdict(new SlidingWindowLog(W), 5)).toMatchObject({ verdict: 'pass', figures: { sent: 31, served: 30, refusedAt: 31 } });
  });

  it('a target too slow to fill a window: inconclusive with figures, also when re-sent with more in flight, never fail', async () => {
    for (const concurrency of [8, 32]) {
      const v = await burstVerdict(new SlidingWindowLog(W), 250, concurrency);
      expect(v.verdict).toBe('inconclusive');
      expect(v.figures).toMatchObject({ sent: 40, served: 40 });
      expect(v.figures.maxServedInWindow).toBeLessThanOrEqual(LIMIT);
      expect(v.verdict === 'inconclusive' && v.message).toMatch(
        /^40 requests took 10\.\d+ s \(window 6\.00 s\); at most 2\d of them fell within one window \(limit 30\)/,
      );
    }
  });

  it('a limit 50 % too loose, sent fast enough: fail with the timings', async () => {
    const v = await burstVerdict(keyWindowLog(new Set(['rate-limit-allows-150-percent']), W), 5);
    expect(v).toMatchObject({ verdict: 'fail', rule: 'late', actual: { served: 40 } });
  });

  it('a key throttled at three quarters of its ceiling: fail early', async () => {
    const v = await burstVerdict(keyWindowLog(new Set(['rate-limit-throttles-early']), W), 5);
    expect(v).toMatchObject({ verdict: 'fail', rule: 'early', actual: { refusedOnRequest: 23 } });
  });
});

describe('the sliding-window episode against a simulated key', () => {
  it('the reference window passes', async () => {
    const { ctx } = simulated(new SlidingWindowLog(W), 5);
    const s = await settle(runSliding(ctx, probe));
    expect(s.verdict.verdict).toBe('pass');
    expect(s.slide).toMatchObject({ verdict: 'pass', figures: { inWindow: 15 } });
    expect(s.attempts).toHaveLength(1);
  });

  it('a fixed window fails, with the timings', async () => {
    const { ctx } = simulated(keyWindowLog(new Set(['rate-limit-fixed-window']), W), 5);
    const s = await settle(runSliding(ctx, probe));
    expect(s.slide).toMatchObject({ verdict: 'fail', requirement: 'rate-limit.sliding-window', actual: { remaining: 29, inWindow: 15 } });
  });

  it('a target too slow for the halves to fit: two tries, then inconclusive with the figures of each', async () => {
    const { ctx } = simulated(new SlidingWindowLog(W), 400);
    const s = await settle(runSliding(ctx, probe));
    expect(s.attempts.map((a) => a.concurrency)).toEqual([8, 32]);
    expect(s.verdict.verdict === 'inconclusive' || s.slide?.verdict === 'inconclusive').toBe(true);
    expect(s.attempts.every((a) => /took|only \d+ served/.test(a.message ?? ''))).toBe(true);
  });
});
