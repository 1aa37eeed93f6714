/**
 * The rate-limit judges on made-up timelines (an injected clock: every time is
 * an explicit number of ms): too slow -> inconclusive with its figures, fast
 * enough without 429 -> fail, 429 at the ceiling -> pass, 429 before it -> fail,
 * Retry-After too short -> fail, and the other verdicts the suites rest on.
 */
import { describe, expect, it } from 'vitest';
import {
  judgeIssuanceBurst,
  judgeIssuanceCeiling,
  judgeIssuanceFloor,
  judgeKeyBurst,
  judgeRemainingSteps,
  judgeRetryAfterValue,
  judgeRetryAfterWait,
  judgeSlide,
  judgeThrottled,
  mayLeaveWithin,
  maxServedWithinWindow,
  othersThan,
  type Timed,
} from '../../src/service/limits/judge.js';
import { leaveGap, throttlePlan } from '../../suites/rate-limit/operations.js';

const T0 = 1_900_000_000_000;

/** `n` requests one after the other from `from`, each answered `rtt` ms after it was sent, `gap` ms apart. */
function sequence(n: number, opts: { from?: number; gap?: number; rtt?: number; status?: (i: number) => number } = {}): Timed[] {
  const { from = T0, gap = 10, rtt = 5, status = () => 200 } = opts;
  return Array.from({ length: n }, (_, i) => ({ sentAt: from + i * gap, receivedAt: from + i * gap + rtt, status: status(i) }));
}

const W = 6_000;

describe('judgeKeyBurst (per-key sliding window)', () => {
  it('too slow to fill a window: inconclusive, with the figures that say how close it came', () => {
    // 40 requests over 7.9 s: a sliding window of 30 per 6 s lets them all through.
    const v = judgeKeyBurst({ limit: 30, windowMs: W, requests: sequence(40, { gap: 200 }), earlier: [], orgOthers: [] });
    expect(v.verdict).toBe('inconclusive');
    // (a window less its 300 ms of slack for targets that count in steps)
    expect(v.figures).toMatchObject({ sent: 40, served: 40, spanMs: 7805, maxServedInWindow: 29 });
    expect(v.verdict === 'inconclusive' && v.message).toMatch(
      /40 requests took 7\.8\d? s \(window 6\.00 s\); at most 29 of them fell within one window \(limit 30\)/,
    );
  });

  it('fast enough and no 429: fail, with the timings that prove it', () => {
    const v = judgeKeyBurst({ limit: 30, windowMs: W, requests: sequence(40, { gap: 100 }), earlier: [], orgOthers: [] });
    expect(v).toMatchObject({ verdict: 'fail', rule: 'late', requirement: 'rate-limit.excess-429' });
    expect(v.verdict === 'fail' && v.message).toMatch(
      /^40 requests of one key were served within 3\.9\d s \(sent from \+0 ms, last answered at \+3905 ms\), less than one 6\.00 s window: its limit is 30 per window$/,
    );
    expect(v.verdict === 'fail' && v.actual).toEqual({ servedWithinMs: 3905, served: 40, windowMs: W });
  });

  it('a 429 at the ceiling: pass', () => {
    const v = judgeKeyBurst({ limit: 30, windowMs: W, requests: sequence(31, { status: (i) => (i === 30 ? 429 : 200) }), earlier: [], orgOthers: [] });
    expect(v).toMatchObject({ verdict: 'pass', figures: { refusedAt: 31, possiblyInWindow: 30, certainlyInWindow: 30 } });
  });

  it('a 429 before the ceiling (45 of 60): fail early', () => {
    const v = judgeKeyBurst({ limit: 60, windowMs: W, requests: sequence(46, { status: (i) => (i === 45 ? 429 : 200) }), earlier: [], orgOthers: [] });
    expect(v).toMatchObject({
      verdict: 'fail',
      rule: 'early',
      requirement: 'rate-limit.per-key-default-60',
      actual: { refusedOnRequest: 46, possiblyInWindow: 45 },
    });
  });

  it('earlier requests of the key in the window explain a 429 before the burst reached the ceiling', () => {
    const earlier = sequence(15, { from: T0 - 3_000 });
    const v = judgeKeyBurst({ limit: 60, windowMs: W, requests: sequence(46, { status: (i) => (i === 45 ? 429 : 200) }), earlier, orgOthers: [] });
    expect(v.verdict).toBe('pass');
    // ... but not when they had left the window
    const old = sequence(15, { from: T0 - 7_000 });
    expect(
      judgeKeyBurst({ limit: 60, windowMs: W, requests: sequence(46, { status: (i) => (i === 45 ? 429 : 200) }), earlier: old, orgOthers: [] }).verdict,
    ).toBe('fail');
  });

  it('a window kept to the whole second may count a request up to a second past its window: not judged early', () => {
    // 15 requests answered 6.6..6.75 s before the 429 was sent: past the 300 ms slack, within the whole second
    const earlier = sequence(15, { from: T0 + 450 - 6_750, gap: 10, rtt: 5 });
    const v = judgeKeyBurst({ limit: 60, windowMs: W, requests: sequence(46, { status: (i) => (i === 45 ? 429 : 200) }), earlier, orgOthers: [] });
    expect(v).toMatchObject({ verdict: 'pass', figures: { possiblyInWindow: 60 } });
    // ... but not answered more than a second past the window
    const older = sequence(15, { from: T0 + 450 - 7_200, gap: 10, rtt: 5 });
    expect(
      judgeKeyBurst({ limit: 60, windowMs: W, requests: sequence(46, { status: (i) => (i === 45 ? 429 : 200) }), earlier: older, orgOthers: [] }),
    ).toMatchObject({
      verdict: 'fail',
      rule: 'early',
    });
  });

  it('gives a target that counts in steps (per-second buckets) a little more than a window', () => {
    // 15 requests answered 6.05..6.2 s before the 429 was sent: out of a 6 s window, within its 300 ms of slack
    const earlier = sequence(15, { from: T0 + 450 - 6_200, gap: 10, rtt: 5 });
    const v = judgeKeyBurst({ limit: 60, windowMs: W, requests: sequence(46, { status: (i) => (i === 45 ? 429 : 200) }), earlier, orgOthers: [] });
    expect(v).toMatchObject({ verdict: 'pass', figures: { possiblyInWindow: 60 } });
  });

  it("does not judge a 429 early when the key's earlier traffic is unknown or another key of the organization was busy", () => {
    const requests = sequence(46, { status: (i) => (i === 45 ? 429 : 200) });
    expect(judgeKeyBurst({ limit: 60, windowMs: W, requests })).toMatchObject({ verdict: 'pass', note: expect.stringMatching(/earlier traffic is unknown/) });
    const v = judgeKeyBurst({ limit: 60, windowMs: W, requests, earlier: [], orgOthers: sequence(20, { from: T0 - 1_000 }) });
    expect(v).toMatchObject({ verdict: 'pass', note: expect.stringMatching(/20 requests of other keys of its organization/) });
  });

  it('counts requests in flight beside a 429 as possibly before it (a concurrent batch)', () => {
    // 27 one at a time, then 4 at once: the 429 may have arrived after the other three.
    const batch = [0, 1, 2, 3].map((k) => ({ sentAt: T0 + 500, receivedAt: T0 + 520 + k, status: k === 1 ? 429 : 200 }));
    const v = judgeKeyBurst({ limit: 30, windowMs: W, requests: [...sequence(27), ...batch], earlier: [], orgOthers: [] });
    expect(v).toMatchObject({ verdict: 'pass', figures: { possiblyInWindow: 30, certainlyInWindow: 27 } });
  });

  it('a 503 once the limit is used up: fail; a 503 before it: error (the target in trouble)', () => {
    const at = (n: number) => sequence(n + 1, { status: (i) => (i === n ? 503 : 200) });
    expect(judgeKeyBurst({ limit: 30, windowMs: W, requests: at(30), earlier: [], orgOthers: [] })).toMatchObject({
      verdict: 'fail',
      rule: 'status',
      expected: { status: 429, code: 'HPB-00105' },
      actual: { status: 503, servedInWindow: 30 },
    });
    expect(judgeKeyBurst({ limit: 30, windowMs: W, requests: at(12), earlier: [], orgOthers: [] }).verdict).toBe('error');
  });

  it('maxServedWithinWindow only counts requests whose whole send-to-answer span fits', () => {
    expect(maxServedWithinWindow(sequence(10, { gap: 1000, rtt: 10 }), W)).toMatchObject({ count: 6 });
    expect(maxServedWithinWindow(sequence(10, { gap: 1000, rtt: 1010 }), W)).toMatchObject({ count: 5 });
  });
});

describe('judgeSlide (capacity returns as requests leave the window)', () => {
  const first = sequence(15);
  const second = sequence(16, { from: T0 + 3_000, status: (i) => (i === 15 ? 429 : 200) });
  const after = (remaining: number, at = T0 + 6_500) => ({ sentAt: at, receivedAt: at + 5, status: 200, remaining });

  it('a sliding window still counts the second half: pass', () => {
    expect(judgeSlide({ limit: 30, windowMs: W, first, second, after: after(14) })).toMatchObject({ verdict: 'pass', figures: { inWindow: 15, bound: 15 } });
  });

  it('capacity back all at once (a fixed window): fail with the timings', () => {
    const v = judgeSlide({ limit: 30, windowMs: W, first, second, after: after(29) });
    expect(v).toMatchObject({ verdict: 'fail', requirement: 'rate-limit.sliding-window', expected: '<= 15', actual: { remaining: 29, inWindow: 15 } });
    expect(v.verdict === 'fail' && v.message).toMatch(
      /X-RateLimit-Remaining is 29 at \+6500 ms, but 15 served requests sent from \+3000 ms are still inside the 6\.00 s window/,
    );
  });

  it('still 429 once the first half left and Retry-After elapsed: fail', () => {
    const v = judgeSlide({
      limit: 30,
      windowMs: W,
      first,
      second,
      after: { sentAt: T0 + 6_500, receivedAt: T0 + 6_505, status: 429 },
      retryAfterElapsedAt: T0 + 6_100,
    });
    expect(v).toMatchObject({ verdict: 'fail', actual: { status: 429 } });
  });

  it('a probe too late for the second half to be in the window: inconclusive with the figures', () => {
    const v = judgeSlide({ limit: 30, windowMs: W, first, second, after: after(29, T0 + 9_200) });
    expect(v.verdict).toBe('inconclusive');
    expect(v.verdict === 'inconclusive' && v.message).toMatch(/only 0 served requests of the second half \(sent \+3000 ms\.\.\+3155 ms\)/);
  });

  it('a probe sent before the first half left is our error, never a verdict on the target', () => {
    expect(judgeSlide({ limit: 30, windowMs: W, first, second, after: after(29, T0 + 5_000) }).verdict).toBe('error');
  });
});

describe('judgeRetryAfterWait and judgeRetryAfterValue', () => {
  const refused = { sentAt: T0, receivedAt: T0 + 10, status: 429 };

  it('served once Retry-After elapsed: pass; still 429: fail (the Retry-After was too short)', () => {
    expect(judgeRetryAfterWait({ refused, retryAfterS: 3, after: { sentAt: T0 + 3_110, receivedAt: T0 + 3_120, status: 200 } }).verdict).toBe('pass');
    const v = judgeRetryAfterWait({ refused, retryAfterS: 3, after: { sentAt: T0 + 3_110, receivedAt: T0 + 3_120, status: 429 } });
    expect(v).toMatchObject({ verdict: 'fail', requirement: 'rate-limit.retry-after', actual: { status: 429, waitedMs: 3_100, retryAfterS: 3 } });
    expect(v.verdict === 'fail' && v.message).toMatch(/still 429 when retried 3\.10 s after a 429 that said Retry-After: 3/);
  });

  it('a wait shorter than Retry-After (longer than the episode waits) or no Retry-After: inconclusive here, never a fail', () => {
    expect(judgeRetryAfterWait({ refused, retryAfterS: 3, after: { sentAt: T0 + 2_000, receivedAt: T0 + 2_010, status: 429 } }).verdict).toBe('inconclusive');
    expect(judgeRetryAfterWait({ refused, after: { sentAt: T0 + 2_000, receivedAt: T0 + 2_010, status: 429 } }).verdict).toBe('inconclusive');
  });

  it('Retry-After: 0 or missing on a 429 is a violation, not a reason to skip', () => {
    expect(judgeRetryAfterValue('0', 60, 5)).toMatchObject({ ok: false, message: expect.stringMatching(/Retry-After: 0/) });
    expect(judgeRetryAfterValue(undefined, 60, 5)).toMatchObject({ ok: false });
    expect(judgeRetryAfterValue('1.5', 60, 5)).toMatchObject({ ok: false });
    expect(judgeRetryAfterValue('120', 60, 5)).toMatchObject({ ok: false });
    expect(judgeRetryAfterValue('7', 60, 5)).toEqual({ ok: true, seconds: 7 });
  });
});

describe('judgeRemainingSteps (X-RateLimit-Remaining falls by one per request)', () => {
  const hits = (values: number[]) => values.map((remaining, i) => ({ sentAt: T0 + i * 20, receivedAt: T0 + i * 20 + 5, status: 200, remaining }));

  it('by one each time: pass; not at all, or by two, with nothing else counted or leaving: fail', () => {
    expect(judgeRemainingSteps({ windowMs: W, hits: hits([20, 19, 18, 17, 16, 15]), others: [] }).verdict).toBe('pass');
    expect(judgeRemainingSteps({ windowMs: W, hits: hits([20, 20, 20, 20, 20, 20]), others: [] })).toMatchObject({ verdict: 'fail', expected: 19, at: 1 });
    expect(judgeRemainingSteps({ windowMs: W, hits: hits([20, 18, 16, 14, 12, 10]), others: [] })).toMatchObject({ verdict: 'fail', expected: 19 });
  });

  it("allows a step of zero only when one of the run's requests of the key could have left the window then", () => {
    const values = hits([20, 19, 19, 18, 17, 16]);
    const leaving = { sentAt: T0 + 20 - W, receivedAt: T0 + 25 - W, status: 200 };
    expect(judgeRemainingSteps({ windowMs: W, hits: values, others: [leaving], leaveSlackMs: 0 }).verdict).toBe('pass');
    expect(
      judgeRemainingSteps({
        windowMs: W,
        hits: values,
        others: [{ ...leaving, sentAt: leaving.sentAt - 5_000, receivedAt: leaving.receivedAt - 5_000 }],
        leaveSlackMs: 0,
      }).verdict,
    ).toBe('fail');
  });

  it("counts the sequence's own previous request as leaving when a window passed between two of its requests", () => {
    // 'other limits' mode of a fresh clone: 3 s windows, a pause of 3.1 s between requests 2 and 3 (Remaining 691 -> 699 with 8 others leaving).
    const w = 3000;
    const seq = [
      { sentAt: T0, receivedAt: T0 + 5, status: 200, remaining: 10 },
      { sentAt: T0 + 3_100, receivedAt: T0 + 3_105, status: 200, remaining: 10 },
    ];
    expect(judgeRemainingSteps({ windowMs: w, hits: seq, others: [] })).toMatchObject({ verdict: 'pass', figures: { steps: [{ delta: 0, couldLeave: 1 }] } });
    // The same two requests 100 ms apart: nothing could have left.
    expect(judgeRemainingSteps({ windowMs: w, hits: [seq[0]!, { ...seq[1]!, sentAt: T0 + 100, receivedAt: T0 + 105 }], others: [] }).verdict).toBe('fail');
  });

  it('lets a request leave up to a second after a window from its answer (a window kept to the whole second, rounded up)', () => {
    // Mode keyWindowAccounting=coarse of a fresh clone: Remaining 997 -> 997 over two requests 4 ms apart, a request of the key answered 5.6 s before.
    const w = 5000;
    const seq = [
      { sentAt: T0, receivedAt: T0 + 4, status: 200, remaining: 997 },
      { sentAt: T0 + 4, receivedAt: T0 + 8, status: 200, remaining: 997 },
    ];
    const other = { sentAt: T0 - 5_600, receivedAt: T0 - 5_595, status: 200 };
    expect(judgeRemainingSteps({ windowMs: w, hits: seq, others: [other] }).verdict).toBe('pass');
    // Answered more than a window and a second before: it left before the sequence.
    expect(judgeRemainingSteps({ windowMs: w, hits: seq, others: [{ sentAt: T0 - 6_200, receivedAt: T0 - 6_195, status: 200 }] }).verdict).toBe('fail');
  });

  it('allows a step of two only when another request of the key was in flight in between', () => {
    const values = hits([20, 18, 17, 16, 15, 14]);
    expect(judgeRemainingSteps({ windowMs: W, hits: values, others: [{ sentAt: T0 + 3, receivedAt: T0 + 30, status: 200 }] }).verdict).toBe('pass');
    expect(judgeRemainingSteps({ windowMs: W, hits: values, others: [] }).verdict).toBe('fail');
  });

  it("requests in the key's window that the run did not send (a run just before, another client) excuse a step of zero as inconclusive, never a step of two", () => {
    // Limit 30, Remaining 20 at the first hit: ten requests in the window, one of them the hit itself, none the run's.
    const stalled = hits([20, 19, 19, 18, 17, 16]);
    expect(judgeRemainingSteps({ windowMs: W, hits: stalled, others: [], limit: 30 })).toMatchObject({
      verdict: 'inconclusive',
      figures: { unseen: 9 },
      message: expect.stringMatching(/held 9 request\(s\) this run did not send/),
    });
    // The same window, all of it the run's own earlier requests (known, and too old or too young to leave then): fail.
    const own = Array.from({ length: 9 }, (_, i) => ({ sentAt: T0 - 100 - i, receivedAt: T0 - 95 - i, status: 200 }));
    expect(judgeRemainingSteps({ windowMs: W, hits: stalled, others: own, limit: 30 })).toMatchObject({ verdict: 'fail', at: 2, figures: { unseen: 0 } });
    // Never an excuse for falling too much, nor for a Remaining stuck at the limit (nothing unseen).
    expect(judgeRemainingSteps({ windowMs: W, hits: hits([20, 18, 17, 16, 15, 14]), others: [], limit: 30 }).verdict).toBe('fail');
    expect(judgeRemainingSteps({ windowMs: W, hits: hits([30, 30, 30, 30, 30, 30]), others: [], limit: 30 })).toMatchObject({ verdict: 'fail', at: 1 });
    // A step of zero more than a window after the first hit: the unseen requests have left by then.
    const late = stalled.map((h, k) => (k >= 1 ? { ...h, sentAt: h.sentAt + W + 2_000, receivedAt: h.receivedAt + W + 2_000 } : h));
    expect(judgeRemainingSteps({ windowMs: W, hits: late, others: [], limit: 30 })).toMatchObject({ verdict: 'fail', at: 2 });
    // Sent before the run started (unseenBefore), they have left a window after it, even within a window of the first hit.
    expect(judgeRemainingSteps({ windowMs: W, hits: stalled, others: [], limit: 30, unseenBefore: T0 - W - 1_000 })).toMatchObject({ verdict: 'fail', at: 2 });
    expect(judgeRemainingSteps({ windowMs: W, hits: stalled, others: [], limit: 30, unseenBefore: T0 - 1_000 }).verdict).toBe('inconclusive');
  });
});

describe('token issuance (fixed window, alignment open)', () => {
  it('more than twice the limit within less than a window: fail; slower: inconclusive; a 429: pass', () => {
    expect(judgeIssuanceBurst({ limit: 20, windowMs: W, requests: sequence(41, { gap: 100 }) })).toMatchObject({
      verdict: 'fail',
      rule: 'late',
      requirement: 'issuance-limit.twenty-per-minute',
    });
    expect(judgeIssuanceBurst({ limit: 20, windowMs: W, requests: sequence(41, { gap: 200 }) }).verdict).toBe('inconclusive');
    expect(judgeIssuanceBurst({ limit: 20, windowMs: W, requests: sequence(31, { status: (i) => (i === 30 ? 429 : 200) }) }).verdict).toBe('pass');
  });

  it("a 503 once the limit is used up (by the burst, or by the endpoint's own count): fail; earlier: error", () => {
    expect(judgeIssuanceBurst({ limit: 20, windowMs: W, requests: sequence(21, { status: (i) => (i === 20 ? 503 : 200) }) })).toMatchObject({
      verdict: 'fail',
      rule: 'status',
    });
    const counted = sequence(16, { status: (i) => (i === 15 ? 503 : 200) }).map((r, i) => ({ ...r, remaining: Math.max(0, 14 - i) }));
    expect(judgeIssuanceBurst({ limit: 20, windowMs: W, requests: counted })).toMatchObject({ verdict: 'fail', rule: 'status' });
    expect(judgeIssuanceBurst({ limit: 20, windowMs: W, requests: sequence(6, { status: (i) => (i === 5 ? 503 : 200) }) }).verdict).toBe('error');
  });

  it("a 503 after the endpoint's count said 0, its answers crossing (the last sent said 1): fail, not error", () => {
    // Tokens of the window issued before the burst: 16 of the burst's own, then the 503. The two last
    // tokens were in flight together and the endpoint counted them the other way round.
    const requests = sequence(17, { status: (i) => (i === 16 ? 503 : 200) }).map((r, i) => ({ ...r, ...(i < 16 ? { remaining: Math.max(0, 15 - i) } : {}) }));
    requests[14] = { ...requests[14]!, remaining: 0 };
    requests[15] = { ...requests[15]!, remaining: 1, sentAt: requests[14]!.sentAt, receivedAt: requests[14]!.receivedAt + 1 };
    expect(judgeIssuanceBurst({ limit: 20, windowMs: W, requests })).toMatchObject({ verdict: 'fail', rule: 'status' });
    // The same answers with no 0 among them: nothing says the limit was used up, so the 503 is the target in trouble.
    const unsaid = requests.map((r) => (r.remaining === 0 ? { ...r, remaining: 1 } : r));
    expect(judgeIssuanceBurst({ limit: 20, windowMs: W, requests: unsaid }).verdict).toBe('error');
  });

  const anchor = { sentAt: T0, receivedAt: T0 + 10, status: 429 };

  it('more tokens than the limit inside the window that follows a 429: fail, whatever the alignment', () => {
    const later = sequence(41, { from: T0 + 2_000, gap: 50, status: (i) => (i === 40 ? 429 : 200) });
    const v = judgeIssuanceCeiling({ limit: 20, windowMs: W, anchor, later });
    expect(v).toMatchObject({ verdict: 'fail', requirement: 'issuance-limit.twenty-per-minute', figures: { issuedInWindow: 40 } });
  });

  it('refused after at most the limit: pass; too late to count and not refused at the limit: inconclusive', () => {
    expect(
      judgeIssuanceCeiling({ limit: 20, windowMs: W, anchor, later: sequence(21, { from: T0 + 5_000, status: (i) => (i === 20 ? 429 : 200) }) }).verdict,
    ).toBe('pass');
    const v = judgeIssuanceCeiling({ limit: 20, windowMs: W, anchor, later: sequence(41, { from: T0 + 5_900, status: (i) => (i === 40 ? 429 : 200) }) });
    expect(v).toMatchObject({ verdict: 'inconclusive', figures: { issuedBeforeRefusal: 40, answeredInWindow: 10 } });
  });
});

describe('judgeIssuanceFloor (no fewer than the limit, the run the only client of its source address)', () => {
  const anchor = { sentAt: T0, receivedAt: T0 + 10, status: 429 };
  const burst = (issued: number) => sequence(issued + 1, { from: T0 + 5_000, status: (i) => (i === issued ? 429 : 200) });

  it("refused after the limit less the run's other token requests that may count: pass; fewer: fail with the figures", () => {
    expect(judgeIssuanceFloor({ limit: 20, anchor, later: burst(20), others: [] }).verdict).toBe('pass');
    // Three renewals answered after the anchor's send may have taken three of the window's 20.
    const renewals = sequence(3, { from: T0 + 2_000, gap: 500 });
    expect(judgeIssuanceFloor({ limit: 20, anchor, later: burst(17), others: renewals })).toMatchObject({ verdict: 'pass', figures: { floor: 17 } });
    expect(judgeIssuanceFloor({ limit: 20, anchor, later: burst(15), others: renewals })).toMatchObject({
      verdict: 'fail',
      rule: 'issuance-too-strict',
      requirement: 'issuance-limit.twenty-per-minute',
      figures: { issued: 15, othersInWindow: 3, floor: 17 },
    });
  });

  it('requests answered before the anchor was sent count in the window before it; a burst never refused leaves the excess to judgeIssuanceCeiling', () => {
    const earlier = sequence(10, { from: T0 - 3_000 });
    expect(judgeIssuanceFloor({ limit: 20, anchor, later: burst(15), others: earlier })).toMatchObject({ verdict: 'fail', figures: { othersInWindow: 0 } });
    expect(judgeIssuanceFloor({ limit: 20, anchor, later: sequence(5, { from: T0 + 5_000 }), others: [] }).verdict).toBe('pass');
  });

  it('othersThan leaves out one log entry per hit (its own exchange)', () => {
    const log = [...sequence(3, { from: T0 }), ...sequence(2, { from: T0 + 1_000 })];
    expect(othersThan(log, sequence(2, { from: T0 + 1_000 }))).toEqual(sequence(3, { from: T0 }));
  });
});

describe('judgeThrottled (an operation sent on a full key)', () => {
  // Six groups of five, 1 s apart, the last answered at T0 + 5 010: the window (6 s) holds all 30 until T0 + 6 000 - slack.
  const groups = Array.from({ length: 6 }, (_, g) => sequence(5, { from: T0 + g * 1_000, gap: 1, rtt: 5 })).flat();
  const before = { ...groups.at(-1)!, remaining: 0 };
  const others = groups.slice(0, -1);
  const op = (status: number, sentAt = T0 + 5_020) => ({ sentAt, receivedAt: sentAt + 10, status });
  const input = { requirement: 'encounter.create-429', limit: 30, windowMs: W, before, others };

  it('a 429 is the refusal due: pass (its code is judged by the check)', () => {
    expect(judgeThrottled({ ...input, op: op(429) }).verdict).toBe('pass');
  });

  it('served right after Remaining 0, with nothing able to leave the window in between: fail', () => {
    const v = judgeThrottled({ ...input, op: op(201) });
    expect(v).toMatchObject({ verdict: 'fail', requirement: 'encounter.create-429', figures: { beforeRemaining: 0, mayHaveLeft: 0, servedInWindow: 30 } });
    expect(v.verdict === 'fail' && v.message).toMatch(/answered 201 while the key was over its limit/);
  });

  it('served when a request of the key may have left the window since the fill: inconclusive, never a fail', () => {
    // Sent as the first group may leave (T0 + 6 000 - 300 ms slack): a slot may have freed.
    const late = { ...before, sentAt: T0 + 5_690, receivedAt: T0 + 5_695 };
    const v = judgeThrottled({ ...input, before: late, op: op(201, T0 + 5_700) });
    expect(v.verdict).toBe('inconclusive');
    expect(v.figures.mayHaveLeft).toBeGreaterThan(0);
  });

  it('served after a Remaining above 0, or with no Remaining, and fewer than the limit certainly in the window: inconclusive', () => {
    expect(judgeThrottled({ ...input, before: { ...before, remaining: 1 }, others: others.slice(1), op: op(200) }).verdict).toBe('inconclusive');
    expect(judgeThrottled({ ...input, before: { ...before, remaining: undefined }, others: others.slice(1), op: op(200) }).verdict).toBe('inconclusive');
  });

  it('served with the limit of served requests certainly in the window, whatever the headers said: fail', () => {
    expect(judgeThrottled({ ...input, before: { ...before, remaining: undefined }, op: op(404) })).toMatchObject({
      verdict: 'fail',
      figures: { servedInWindow: 30 },
    });
  });
});

describe("placing a fill and an operation between the key's leaves (mayLeaveWithin, leaveGap, throttlePlan)", () => {
  const slack = 300; // windowSlackMs(6 s)
  const late = 1_000; // leaveLateMs(6 s): a whole-second window may count a request up to a second longer
  const a = { sentAt: T0, receivedAt: T0 + 10, status: 200 };
  const b = { sentAt: T0 + 2_000, receivedAt: T0 + 2_010, status: 200 };

  it('a request may leave a window after its send, less the slack, until a window and a whole second after its answer', () => {
    expect(mayLeaveWithin([a], T0 + W - slack - 50, T0 + W - slack - 1, W)).toEqual([]);
    expect(mayLeaveWithin([a], T0 + W - slack - 50, T0 + W - slack, W)).toEqual([a]);
    expect(mayLeaveWithin([a], T0 + W + 10 + late, T0 + W + 2_000, W)).toEqual([a]);
    expect(mayLeaveWithin([a], T0 + W + 11 + late, T0 + W + 2_000, W)).toEqual([]);
  });

  it('finds the first gap between leaves wide enough for a fill and an operation: past a leave under way, or a gap too narrow, the next one', () => {
    // From now to a's leave.
    expect(leaveGap([a, b], T0 + 5_000, W, 400)).toEqual({ start: T0 + 5_000, end: T0 + W - slack });
    // Inside a's leave: from its end to b's leave.
    expect(leaveGap([a, b], T0 + W, W, 400)).toEqual({ start: T0 + 10 + W + late + 1, end: T0 + 2_000 + W - slack });
    // A gap of 0.69 s between the two leaves is too narrow for 0.7 s: after b's, with nothing left to leave.
    expect(leaveGap([a, b], T0 + W, W, 700)).toEqual({ start: T0 + 2_010 + W + late + 1, end: Infinity });
    expect(leaveGap([], T0, W, 400)).toEqual({ start: T0, end: Infinity });
  });

  it('spaces the groups a second and the step slack apart at least, at most half a window', () => {
    expect(throttlePlan({ role: 'extra', url: '/x', limit: 60, windowMs: 60_000 }, 100, 8)).toMatchObject({
      tickMs: 2_800,
      ticks: 21,
      budgetMs: 120_000 + 8 * 3 * 3_800,
    });
    // A window of fewer groups than operations: the operations' own groups leave in their turn, and the gaps
    // between their leaves must hold a fill and an operation again (twice the room, 2 s at least: 2_160 -> 2_500, at most half the window).
    expect(throttlePlan({ role: 'extra', url: '/x', limit: 1_000, windowMs: 5_000 }, 2, 8)).toMatchObject({ tickMs: 2_500, ticks: 2 });
    expect(throttlePlan({ role: 'extra', url: '/x', limit: 60, windowMs: 12_000 }, 12, 12)).toMatchObject({ tickMs: 3_600, ticks: 3 });
    expect(throttlePlan({ role: 'extra', url: '/x', limit: 60, windowMs: 12_000 }, 250, 12)).toMatchObject({ tickMs: 4_700, ticks: 2 });
    expect(throttlePlan({ role: 'extra', url: '/x', limit: 60, windowMs: 12_000 }, 12, 5)).toMatchObject({ tickMs: 1_960, ticks: 6 });
    expect(throttlePlan({ role: 'extra', url: '/x', limit: 30, windowMs: 2_000 }, 2, 8)).toMatchObject({ tickMs: 1_000, ticks: 2 });
  });
});
