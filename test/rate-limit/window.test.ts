import { describe, expect, it } from 'vitest';
import { FixedWindowCounter, SlidingWindowLog, rateLimitHeaders, retryAfterSeconds } from '../../src/reference/rate-limit.js';
import { faults, keyWindowLog } from '../../src/reference/faults/rate-limit.js';
import { faults as issuanceFaults, issuanceCounter } from '../../src/reference/faults/issuance-limit.js';

const T0 = 1_900_000_000_000;
const W = 5_000;

/** `limit` accepted requests at `at`. */
function fill(log: SlidingWindowLog, limit: number, at: number): void {
  for (let i = 0; i < limit; i++) expect(log.hit('k', limit, at).allowed).toBe(true);
}

describe('reference per-key window (Retry rule 1)', () => {
  it('refuses a retry sooner than Retry-After even when a slot has freed, and moves the reset by whole seconds', () => {
    const log = new SlidingWindowLog(W);
    for (const at of [T0, T0 + 1_000, T0 + 1_000]) expect(log.hit('k', 3, at).allowed).toBe(true);
    const first = log.hit('k', 3, T0 + 4_500);
    expect(first.allowed).toBe(false);
    // the two requests of T0+1s leave at T0+6s, before the announced Retry-After (whole seconds) elapses
    expect(first.resetMs).toBeGreaterThan(T0 + 6_200);
    const early = log.hit('k', 3, T0 + 6_200);
    expect(early.allowed).toBe(false);
    const [before, after] = [first, early].map((d) => Number(rateLimitHeaders(d)['X-RateLimit-Reset']));
    expect(after).toBeGreaterThan(before!);
    // waiting the early retry's Retry-After recovers
    const wait = retryAfterSeconds(early.resetMs, T0 + 6_200);
    expect(log.hit('k', 3, T0 + 6_200 + wait * 1000).allowed).toBe(true);
  });

  it('the reset of a refusal is the moment its Retry-After elapses', () => {
    const log = new SlidingWindowLog(W);
    fill(log, 2, T0);
    const refused = log.hit('k', 2, T0 + 1_234);
    expect(refused.resetMs).toBe(T0 + 1_234 + retryAfterSeconds(refused.resetMs, T0 + 1_234) * 1000);
    expect(log.hit('k', 2, refused.resetMs).allowed).toBe(true);
  });
});

describe('alternative readings of the per-key window (modes rateLimitReset and retryAfter)', () => {
  it('window-free: X-RateLimit-Reset is when the newest request leaves; a 429 still waits only until a slot frees', () => {
    const log = new SlidingWindowLog(W, { reset: 'window-free' });
    expect(log.hit('k', 2, T0).resetMs).toBe(T0 + W);
    expect(log.hit('k', 2, T0 + 1_000).resetMs).toBe(T0 + 1_000 + W);
    const refused = log.hit('k', 2, T0 + 2_500);
    expect(refused.allowed).toBe(false);
    expect(refused.resetMs).toBe(T0 + 2_500 + W);
    // the refusal displaced the oldest request: a slot frees when the one of T0+1s leaves, rounded up to whole seconds
    expect(refused.retryAtMs).toBe(T0 + 6_500);
    expect(log.hit('k', 2, T0 + 6_500).allowed).toBe(true);
  });

  it('plus-one: Retry-After is one second more than the rounded-up wait, and the key is held that long', () => {
    const log = new SlidingWindowLog(W, { retryAfterPadS: 1 });
    fill(log, 2, T0);
    const refused = log.hit('k', 2, T0 + 2_500);
    expect(retryAfterSeconds(refused.resetMs, T0 + 2_500)).toBe(4);
    expect(log.hit('k', 2, T0 + W + 100).allowed).toBe(false);
  });
});

describe('per-key window faults', () => {
  const window = (name?: string) => keyWindowLog(new Set(name ? [name] : []), W);

  it('without a fault the core gets the reference window', () => {
    expect(window().constructor).toBe(SlidingWindowLog);
  });

  it('rate-limit-not-enforced never refuses', () => {
    const log = window('rate-limit-not-enforced');
    for (let i = 0; i < 10; i++) expect(log.hit('k', 3, T0 + i).allowed).toBe(true);
  });

  it('early-retry-not-extended leaves the reset where it was', () => {
    const log = window('early-retry-not-extended');
    fill(log, 2, T0);
    const first = log.hit('k', 2, T0 + 1_000);
    const early = log.hit('k', 2, T0 + 3_000);
    expect([first.allowed, early.allowed]).toEqual([false, false]);
    expect(early.resetMs).toBe(first.resetMs);
  });

  it('rate-limit-fixed-window returns all capacity at once', () => {
    const log = window('rate-limit-fixed-window');
    log.hit('k', 4, T0);
    log.hit('k', 4, T0 + 3_000);
    expect(log.hit('k', 4, T0 + W + 1).remaining).toBe(3);
    const sliding = window();
    sliding.hit('k', 4, T0);
    sliding.hit('k', 4, T0 + 3_000);
    expect(sliding.hit('k', 4, T0 + W + 1).remaining).toBe(2);
  });

  it('rate-limit-window-never-slides keeps a throttled key throttled', () => {
    const log = window('rate-limit-window-never-slides');
    fill(log, 2, T0);
    expect(log.hit('k', 2, T0 + 10 * W).allowed).toBe(false);
  });

  it('rate-limit-throttles-early refuses at three quarters of the ceiling, headers counting against the full one', () => {
    const log = window('rate-limit-throttles-early');
    for (let i = 0; i < 45; i++) expect(log.hit('k', 60, T0 + i).allowed).toBe(true);
    expect(log.hit('k', 60, T0 + 50)).toMatchObject({ allowed: false, limit: 60, remaining: 15 });
  });

  it('rate-limit-allows-150-percent refuses only at one and a half times the ceiling; Remaining reaches 0 at the ceiling', () => {
    const log = window('rate-limit-allows-150-percent');
    for (let i = 0; i < 90; i++) expect(log.hit('k', 60, T0 + i)).toMatchObject({ allowed: true, limit: 60, remaining: Math.max(0, 59 - i) });
    expect(log.hit('k', 60, T0 + 100).allowed).toBe(false);
  });

  it('every window fault is in the catalog', () => {
    const names = faults.map((f) => f.name);
    for (const n of [
      'rate-limit-not-enforced',
      'early-retry-not-extended',
      'rate-limit-fixed-window',
      'rate-limit-window-never-slides',
      'rate-limit-throttles-early',
      'rate-limit-allows-150-percent',
    ]) {
      expect(names).toContain(n);
      expect(window(n).constructor).not.toBe(SlidingWindowLog);
    }
  });
});

describe('rate-limit header faults', () => {
  const base = {
    status: 429,
    headers: { 'X-RateLimit-Limit': '60', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '1900000060', 'Retry-After': '7' },
    body: {
      resourceType: 'OperationOutcome',
      issue: [{ severity: 'error', code: 'throttled', diagnostics: 'HPB-00105: Rate limit exceeded' }],
    },
  };
  const apply = (name: string) =>
    faults.find((f) => f.name === name)!.transformResponse!(structuredClone(base), { method: 'GET', path: '/fhir/R4/MedicationRequest/x' });

  it.each([
    ['rate-limit-headers-missing', (h: Record<string, string>) => expect(Object.keys(h)).toEqual(['Retry-After'])],
    ['rate-limit-limit-not-key-ceiling', (h: Record<string, string>) => expect(h['x-ratelimit-limit']).toBe('120')],
    ['rate-limit-remaining-not-decremented', (h: Record<string, string>) => expect(h['x-ratelimit-remaining']).toBe('60')],
    ['rate-limit-reset-in-milliseconds', (h: Record<string, string>) => expect(h['x-ratelimit-reset']).toBe('1900000060000')],
    ['retry-after-missing', (h: Record<string, string>) => expect(h['retry-after']).toBeUndefined()],
  ] as const)('%s', (name, expectHeaders) => {
    expectHeaders(apply(name).headers);
  });

  it.each([
    ['rate-limit-remaining-decrements-by-two', { status: 200, remaining: '50' }, (h: Record<string, string>) => expect(h['x-ratelimit-remaining']).toBe('40')],
    ['rate-limit-retry-after-too-short', {}, (h: Record<string, string>) => expect(h['retry-after']).toBe('3')],
    ['rate-limit-retry-after-zero', {}, (h: Record<string, string>) => expect(h['retry-after']).toBe('0')],
  ] as const)('%s', (name, over, expectHeaders) => {
    const res = structuredClone(base);
    if ('status' in over) res.status = over.status;
    if ('remaining' in over) res.headers['X-RateLimit-Remaining'] = over.remaining;
    expectHeaders(faults.find((f) => f.name === name)!.transformResponse!(res, { method: 'GET', path: '/fhir/R4/MedicationRequest/x' }).headers);
    // never on the token endpoint (its headers and 429 are the issuance limit's)
    expect(faults.find((f) => f.name === name)!.transformResponse!(structuredClone(base), { method: 'POST', path: '/auth/token' })).toEqual(base);
  });

  it('rate-limit-exhausted-503 answers 503 SVC-00007 with the Retry-After kept', () => {
    const res = apply('rate-limit-exhausted-503');
    expect(res.status).toBe(503);
    expect(res.headers['Retry-After']).toBe('7');
    expect(JSON.stringify(res.body)).toContain('SVC-00007');
  });

  it('throttled-issue-code-wrong changes only the issue code', () => {
    const res = apply('throttled-issue-code-wrong');
    expect((res.body as typeof base.body).issue[0]).toEqual({ ...base.body.issue[0], code: 'processing' });
  });
});

describe('issuance-limit faults', () => {
  it('issuance-limit-doubled issues twice the limit per window while its headers count down from the limit', () => {
    const counter = issuanceCounter(new Set(['issuance-limit-doubled']), W, 20, 'first-request');
    for (let i = 0; i < 40; i++) expect(counter.hit('ip', T0 + i)).toMatchObject({ allowed: true, limit: 20, remaining: Math.max(0, 19 - i) });
    expect(counter.hit('ip', T0 + 50).allowed).toBe(false);
    expect(issuanceCounter(new Set(), W, 20, 'clock')).toBeInstanceOf(FixedWindowCounter);
  });

  it('issuance-early-retry-not-extended refuses an early retry and leaves the reset where it was', () => {
    const counter = issuanceCounter(new Set(['issuance-early-retry-not-extended']), W, 1, 'first-request');
    counter.hit('ip', T0);
    const first = counter.hit('ip', T0 + 10);
    const early = counter.hit('ip', T0 + 1_500);
    expect(early).toMatchObject({ allowed: false, resetMs: first.resetMs });
    expect(counter.hit('ip', first.resetMs).allowed).toBe(true);
  });

  it('issuance-early-retry-served issues a token to the first request after a 429, before its reset, and refuses the next', () => {
    const counter = issuanceCounter(new Set(['issuance-early-retry-served']), W, 1, 'first-request');
    counter.hit('ip', T0);
    const first = counter.hit('ip', T0 + 10);
    expect(first.allowed).toBe(false);
    expect(counter.hit('ip', T0 + 1_500)).toMatchObject({ allowed: true, limit: 1, remaining: 0 });
    expect(counter.hit('ip', T0 + 1_600).allowed).toBe(false);
  });

  it('issuance-early-retry-500 throws on the first request after a 429, before its reset', () => {
    const counter = issuanceCounter(new Set(['issuance-early-retry-500']), W, 1, 'first-request');
    counter.hit('ip', T0);
    expect(counter.hit('ip', T0 + 10).allowed).toBe(false);
    expect(() => counter.hit('ip', T0 + 1_500)).toThrow(/issuance-early-retry-500/);
  });

  it("issuance-limit-exhausted-503 turns the token endpoint's 429 into a 503, nothing else", () => {
    const fault = issuanceFaults.find((f) => f.name === 'issuance-limit-exhausted-503')!;
    const res = { status: 429, headers: { 'Retry-After': '9' }, body: {} };
    expect(fault.transformResponse!(res, { method: 'POST', path: '/auth/token' })).toMatchObject({ status: 503, headers: { 'Retry-After': '9' } });
    expect(fault.transformResponse!(res, { method: 'GET', path: '/fhir/R4/MedicationRequest/x' })).toBe(res);
  });
});
