/**
 * The sliding window judged on the throttled operations' refills (scenarios.ts slideOnRefills):
 * a key's requests spread over a window in groups, then per operation a refill once the oldest
 * group has left, against the reference's window and against a fixed one.
 */
import { describe, expect, it } from 'vitest';
import type { HttpResponse } from '../../src/http/types.js';
import { retryAfterSeconds, SlidingWindowLog } from '../../src/reference/rate-limit.js';
import { keyWindowLog } from '../../src/reference/faults/rate-limit.js';
import type { Timed } from '../../src/service/limits/judge.js';
import type { Refill } from '../../suites/rate-limit/operations.js';
import { slideOnRefills } from '../../suites/rate-limit/scenarios.js';
import type { Hit } from '../../suites/rate-limit/support.js';

const T0 = 1_900_000_000_000;
const W = 12_000;
const LIMIT = 60;
const RTT = 20;
const SLACK = 600;
const probe = { limit: LIMIT, windowMs: W };

/** One key of `window`, answering at once: every request logged as the run logs a key's traffic. */
function key(window: SlidingWindowLog) {
  const log: Timed[] = [];
  const send = (t: number): Hit => {
    const d = window.hit('k', LIMIT, t);
    const status = d.allowed ? 200 : 429;
    log.push({ sentAt: t, receivedAt: t + RTT, status });
    const res = { status, headers: {}, exchange: { id: `x-${log.length}` } } as unknown as HttpResponse;
    return {
      sentAt: t,
      receivedAt: t + RTT,
      res,
      headers: { remaining: d.remaining, ...(d.allowed ? {} : { retryAfter: retryAfterSeconds(d.retryAtMs ?? d.resetMs, t) }) },
    };
  };
  return { log, send };
}

/**
 * A burst to 429, a window later eight groups 1.5 s apart filling the key, then `operations` times:
 * once the oldest group has left and the last Retry-After elapsed, a refill (its first request
 * recorded), filled until nothing is left, and an operation refused on the full key.
 */
function throttledPhase(window: SlidingWindowLog, operations = 5) {
  const { log, send } = key(window);
  let t = T0;
  for (let i = 0; i <= LIMIT; i++, t += 5) send(t);
  const start = T0 + 2 * W;
  const groups: Hit[][] = [];
  for (let i = 0; i < 8; i++) {
    const group: Hit[] = [];
    for (let j = 0, at = start + i * 1500; j < 8; j++, at += 30) {
      const h = send(at);
      group.push(h);
      if (h.headers.remaining === 0) break;
    }
    groups.push(group);
  }
  const refills: Refill[] = [];
  let lastRefusal: Hit | undefined;
  for (let op = 0; op < operations; op++) {
    const leaves = groups[op]!.at(-1)!.receivedAt + W + SLACK + 1;
    const retryAfterElapsedAt = lastRefusal ? lastRefusal.receivedAt + lastRefusal.headers.retryAfter! * 1000 : undefined;
    t = Math.max(leaves, retryAfterElapsedAt ?? 0);
    const first = send(t);
    refills.push({ hit: first, ...(retryAfterElapsedAt !== undefined ? { retryAfterElapsedAt } : {}) });
    let last = first;
    while (last.res.status === 200 && last.headers.remaining! > 0) last = send((t += 30));
    lastRefusal = send((t += 30));
  }
  return { log, refills };
}

describe('slideOnRefills', () => {
  it('the reference window: every refill judged, every one consistent with a sliding window', () => {
    const { log, refills } = throttledPhase(new SlidingWindowLog(W));
    const r = slideOnRefills(log, refills, probe)!;
    expect(r).toMatchObject({ judged: 5, passed: 5, slide: { verdict: 'pass' } });
    // The groups spread after the one that left are still inside: at most their complement is left.
    expect(r.slide.figures.inWindow).toBeGreaterThanOrEqual(LIMIT - 16);
    expect(r.slide.figures.remaining).toBeLessThanOrEqual(r.slide.figures.bound);
  });

  it('a fixed window fails at the first refill after its reset, with the figures', () => {
    const { log, refills } = throttledPhase(keyWindowLog(new Set(['rate-limit-fixed-window']), W));
    const r = slideOnRefills(log, refills, probe)!;
    expect(r.slide).toMatchObject({ verdict: 'fail', rule: 'not-sliding', requirement: 'rate-limit.sliding-window' });
    expect(r.passed).toBeLessThan(r.judged);
    expect(r.slide.figures.remaining).toBeGreaterThan(r.slide.figures.bound);
  });

  it('a refused refill is not judged (a window counting refused requests may still be full), and no judged refill gives undefined', () => {
    const { log, refills } = throttledPhase(new SlidingWindowLog(W), 1);
    const refused: Refill = { hit: { ...refills[0]!.hit, res: { ...refills[0]!.hit.res, status: 429 } as HttpResponse } };
    expect(slideOnRefills(log, [refused], probe)).toBeUndefined();
    expect(slideOnRefills(log, [], probe)).toBeUndefined();
  });

  it('a refill with nothing of the key having left the window is not judged', () => {
    const { log, send } = key(new SlidingWindowLog(W));
    const hits = [0, 10, 20].map((d) => send(T0 + d));
    expect(slideOnRefills(log, [{ hit: hits[2]! }], probe)).toBeUndefined();
  });
});
