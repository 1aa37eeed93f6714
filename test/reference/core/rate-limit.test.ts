import { describe, expect, test } from 'vitest';
import { FixedWindowCounter, SlidingWindowLog, rateLimitHeaders, retryAfterSeconds } from '../../../src/reference/rate-limit.js';

const T0 = 1_900_000_000_000;

describe('SlidingWindowLog', () => {
  test('counts down remaining and reports the oldest request leaving the window', () => {
    const log = new SlidingWindowLog(60_000);
    const a = log.hit('k', 3, T0);
    expect(a).toEqual({ allowed: true, limit: 3, remaining: 2, resetMs: T0 + 60_000 });
    const b = log.hit('k', 3, T0 + 10_000);
    expect(b).toMatchObject({ allowed: true, remaining: 1, resetMs: T0 + 60_000 });
    expect(log.hit('k', 3, T0 + 20_000)).toMatchObject({ allowed: true, remaining: 0 });
    const refused = log.hit('k', 3, T0 + 30_000);
    expect(refused.allowed).toBe(false);
    expect(refused.remaining).toBe(0);
    // the refused request is recorded: a slot frees when the 3rd most recent (T0+10s) leaves
    expect(refused.resetMs).toBe(T0 + 70_000);
    expect(retryAfterSeconds(refused.resetMs, T0 + 30_000)).toBe(40);
  });

  test('whole seconds (mode keyWindowAccounting=coarse): a request stays counted until the end of its second a window later', () => {
    const coarse = new SlidingWindowLog(60_000, { wholeSeconds: true });
    const exact = new SlidingWindowLog(60_000);
    for (const log of [coarse, exact]) {
      log.hit('k', 2, T0 + 200);
      log.hit('k', 2, T0 + 300);
    }
    // The window is full; the first request leaves at T0+60.2 s (exact) or at T0+61 s (coarse).
    expect(exact.hit('k', 2, T0 + 60_500).allowed).toBe(true);
    const refused = coarse.hit('k', 2, T0 + 60_500);
    expect(refused).toMatchObject({ allowed: false, remaining: 0 });
    // Retry-After 1 s: the first request leaves at T0+61 s, rounded up to whole seconds from now.
    expect(refused.resetMs).toBe(T0 + 61_500);
    expect(coarse.hit('k', 2, T0 + 62_000).allowed).toBe(true);
  });

  test('an early retry extends the reset; waiting Retry-After recovers', () => {
    const log = new SlidingWindowLog(60_000);
    for (let i = 0; i < 2; i++) log.hit('k', 2, T0 + i * 1000);
    const first = log.hit('k', 2, T0 + 5_000);
    const early = log.hit('k', 2, T0 + 6_000);
    expect(early.allowed).toBe(false);
    expect(early.resetMs).toBeGreaterThan(first.resetMs);
    const wait = retryAfterSeconds(early.resetMs, T0 + 6_000);
    expect(log.hit('k', 2, T0 + 6_000 + wait * 1000).allowed).toBe(true);
  });

  test('prematureRetry extend-steep: each request before Retry-After doubles the remaining wait', () => {
    const steep = new SlidingWindowLog(60_000);
    steep.prematureRetry = 'extend-steep';
    const plain = new SlidingWindowLog(60_000);
    for (const log of [steep, plain]) for (let i = 0; i < 2; i++) log.hit('k', 2, T0 + i * 1000);
    // Refused at T0+5 s: the block ends when T0+1 s leaves the window (56 s later).
    expect(steep.hit('k', 2, T0 + 5_000).resetMs).toBe(T0 + 61_000);
    expect(plain.hit('k', 2, T0 + 5_000).resetMs).toBe(T0 + 61_000);
    // 55 s remained at T0+6 s: steep doubles it to 110 s; the default moves it to when the
    // refused T0+5 s request leaves the window (at least one second later).
    expect(steep.hit('k', 2, T0 + 6_000)).toMatchObject({ allowed: false, resetMs: T0 + 116_000 });
    expect(plain.hit('k', 2, T0 + 6_000)).toMatchObject({ allowed: false, resetMs: T0 + 65_000 });
    expect(steep.hit('k', 2, T0 + 16_000).resetMs).toBe(T0 + 216_000);
    // Waiting it out is served.
    expect(steep.hit('k', 2, T0 + 216_000).allowed).toBe(true);
  });

  test('keys are independent and an empty window resets now', () => {
    const log = new SlidingWindowLog(1_000);
    log.hit('a', 1, T0);
    expect(log.hit('a', 1, T0 + 1).allowed).toBe(false);
    expect(log.hit('b', 1, T0 + 1).allowed).toBe(true);
    expect(log.hit('a', 1, T0 + 5_000)).toEqual({ allowed: true, limit: 1, remaining: 0, resetMs: T0 + 6_000 });
  });

  test('headers: whole-second unix reset, rounded up', () => {
    expect(rateLimitHeaders({ allowed: true, limit: 60, remaining: 59, resetMs: T0 + 1_500 })).toEqual({
      'X-RateLimit-Limit': '60',
      'X-RateLimit-Remaining': '59',
      'X-RateLimit-Reset': String(Math.ceil((T0 + 1_500) / 1000)),
    });
    expect(retryAfterSeconds(T0, T0)).toBe(1);
  });
});

describe('SlidingWindowLog, mode keyWindowAtStart earlier-run', () => {
  test("a key's window holds three tenths of its limit at its first request, spread over the window before it; they leave within that window", () => {
    const w = new SlidingWindowLog(60_000, { earlierUse: 0.3 });
    const first = w.hit('k', 60, T0);
    expect(first).toMatchObject({ allowed: true, remaining: 60 - 18 - 1 });
    // The oldest earlier request leaves first: one slot more a little after a twentieth of the window (60 s / 19).
    expect(w.hit('k', 60, T0 + 3_200).remaining).toBe(60 - 17 - 2);
    expect(w.hit('k', 60, T0 + 59_999).remaining).toBe(60 - 0 - 3);
    // Another key gets its own earlier requests at its own first request.
    expect(w.hit('other', 60, T0 + 59_999).remaining).toBe(60 - 18 - 1);
  });
});

describe('FixedWindowCounter', () => {
  test('first-request mode: the window starts at the first request', () => {
    const c = new FixedWindowCounter(60_000, 2, 'first-request');
    const start = T0 + 12_345;
    expect(c.hit('ip', start)).toEqual({ allowed: true, limit: 2, remaining: 1, resetMs: start + 60_000 });
    expect(c.hit('ip', start + 1).allowed).toBe(true);
    expect(c.hit('ip', start + 2)).toMatchObject({ allowed: false, remaining: 0, resetMs: start + 60_000 });
    expect(c.hit('ip', start + 60_000)).toMatchObject({ allowed: true, remaining: 1, resetMs: start + 120_000 });
  });

  test('clock mode: windows align to multiples of the window length', () => {
    const c = new FixedWindowCounter(60_000, 1, 'clock');
    const aligned = Math.floor(T0 / 60_000) * 60_000;
    expect(c.hit('ip', aligned + 59_000).resetMs).toBe(aligned + 60_000);
    expect(c.hit('ip', aligned + 59_500).allowed).toBe(false);
    expect(c.hit('ip', aligned + 60_000)).toMatchObject({ allowed: true, resetMs: aligned + 120_000 });
  });

  test.each(['clock', 'first-request'] as const)('%s mode, issuancePrematureRetry=plus-second: an early retry moves the reset by one second', (mode) => {
    const c = new FixedWindowCounter(60_000, 1, mode, 'plus-second');
    c.hit('ip', T0);
    const first = c.hit('ip', T0 + 100);
    const early = c.hit('ip', T0 + 1_600);
    expect(early).toMatchObject({ allowed: false, resetMs: first.resetMs + 1000 });
    expect(Math.ceil(early.resetMs / 1000)).toBe(Math.ceil(first.resetMs / 1000) + 1);
    expect(c.hit('ip', early.resetMs).allowed).toBe(true);
  });

  test("issuancePrematureRetry=same-client: only the refused client's own early retry moves the reset", () => {
    const c = new FixedWindowCounter(60_000, 1, 'first-request', 'same-client');
    c.hit('ip', T0, 'a');
    const first = c.hit('ip', T0 + 100, 'b');
    expect(first.allowed).toBe(false);
    const other = c.hit('ip', T0 + 1_600, 'c');
    expect(other).toMatchObject({ allowed: false, resetMs: first.resetMs });
    const retry = c.hit('ip', T0 + 1_700, 'b');
    expect(retry.allowed).toBe(false);
    expect(Math.ceil(retry.resetMs / 1000)).toBeGreaterThan(Math.ceil(first.resetMs / 1000));
  });

  test.each(['clock', 'first-request'] as const)('%s mode: a retry before the reset extends it', (mode) => {
    const c = new FixedWindowCounter(60_000, 1, mode);
    c.hit('ip', T0);
    const first = c.hit('ip', T0 + 100);
    expect(first.allowed).toBe(false);
    const early = c.hit('ip', T0 + 200);
    expect(early.allowed).toBe(false);
    expect(Math.ceil(early.resetMs / 1000)).toBeGreaterThan(Math.ceil(first.resetMs / 1000));
    // still refused just before the extended reset, allowed at it
    expect(c.hit('ip', early.resetMs - 1).allowed).toBe(false);
    const later = c.hit('ip', T0 + 10 * 60_000);
    expect(later.allowed).toBe(true);
  });
});
