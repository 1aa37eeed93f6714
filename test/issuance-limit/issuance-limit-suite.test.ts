import { describe, expect, it } from 'vitest';
import checks from '../../suites/issuance-limit/checks.js';
import { faults } from '../../src/reference/faults/issuance-limit.js';
import { TEST_LIMITS, conforming, notFailed, pick } from '../auth/target.js';
import { runInProcess, type InProcessOptions } from '../../src/run/in-process.js';
import type { ChecksExport } from '../../src/engine/catalog.js';

/**
 * 6 s windows: the first burst is spread over most of a window and the second must fit
 * in what is left of the window after a 429, which 2 s windows do not leave on a loaded machine.
 */
const LIMITS = { ...TEST_LIMITS, windowMs: 6000, tokenWindowMs: 6000, tokenLifetimeSec: 20, tokenIssuancePerWindow: 10 };
const L = LIMITS.tokenIssuancePerWindow;
const runChecks = (checks: ChecksExport, opts: InProcessOptions = {}) => runInProcess(checks, { limits: LIMITS, ...opts });

/** Each fault and the checks it must fail (as the fault declares them). */
const CAUGHT_BY: Record<string, string[]> = Object.fromEntries(faults.map((f) => [f.name, f.checks ?? []]));

describe('issuance-limit suite', () => {
  it.concurrent.each([['first-request'], ['clock']] as const)(
    'passes against the clean reference with the window aligned to the %s',
    async (issuanceWindow) => {
      const results = await runChecks(checks, { modes: { issuanceWindow } });
      expect(results.size).toBe(checks.length);
      expect(conforming(results)).toEqual([]);
      const burst = results.get('issuance-limit.excess-429')!.observations.find((o) => o.key === 'issuance-limit.burst')!.value as { issued: number };
      // L per window: about L (a fresh window, less the run's own earlier tokens) and at most 2 L (two windows) tokens before the 429.
      expect(burst.issued).toBeGreaterThanOrEqual(L - 3);
      expect(burst.issued).toBeLessThanOrEqual(2 * L);
    },
    120_000,
  );

  it('every issuance-limit fault names the checks it must fail', () => {
    expect(faults.filter((f) => !f.checks?.length).map((f) => f.name)).toEqual([]);
  });

  it.concurrent.each(Object.entries(CAUGHT_BY))(
    'fault %s fails %j',
    async (fault, ids) => {
      const results = await runChecks(pick(checks, ids), { faults: [fault] });
      expect(notFailed(results, ids)).toEqual([]);
    },
    120_000,
  );

  it('throttled early without the source address declared exclusive: recorded with its figures, not failed (other clients may share the window)', async () => {
    const shared = (raw: Record<string, unknown>) => Object.fromEntries(Object.entries(raw).filter(([k]) => k !== 'sourceAddress'));
    const id = 'issuance-limit.at-most-limit-per-window';
    const results = await runChecks(pick(checks, [id]), { faults: ['issuance-limit-throttles-early'], config: shared });
    const r = results.get(id)!;
    expect(r.outcome).toBe('pass');
    const seen = r.observations.find((o) => o.key === 'issuance-limit.refused-before-limit');
    expect(seen?.note).toContain('sourceAddress.exclusive');
    expect(seen?.value).toMatchObject({ refused: true, issued: Math.ceil((3 * L) / 4) });
  }, 120_000);

  it('behind a declared trusted proxy the burst carries no forwarding headers of the suite, and the spoofing check is an observation', async () => {
    const id = 'issuance-limit.forwarding-headers-not-trusted';
    const behindProxy = (raw: Record<string, unknown>) => ({ ...raw, sourceAddress: { exclusive: true, trustedProxy: true } });
    const results = await runChecks(pick(checks, [id]), { faults: ['issuance-limit-keyed-by-forwarded-for'], config: behindProxy });
    const r = results.get(id)!;
    expect(r.outcome).toBe('observation');
    expect(r.message).toContain('sourceAddress.trustedProxy');
    // No forwarding headers were sent, so the fault keyed on them counted by the address: the limit bound.
    expect(r.observations.find((o) => o.key === 'issuance-limit.forwarded-requests')?.value).toMatchObject({ withForwardingHeaders: 0 });
  }, 120_000);

  // Quick runs judge no recovery, so the first burst goes out at once (not spread over a window).
  const EXCESS = 'issuance-limit.excess-429';
  const burstOf = (r: { observations: { key: string; value: unknown }[] }) =>
    r.observations.find((o) => o.key === 'issuance-limit.burst')?.value as { spread: boolean } | undefined;
  it.concurrent.each([['first-request'], ['clock']] as const)(
    'quick profile: the burst goes out at once and passes the clean reference with the window aligned to the %s',
    async (issuanceWindow) => {
      const results = await runChecks(pick(checks, [EXCESS]), { profile: 'quick', modes: { issuanceWindow } });
      expect(results.get(EXCESS)!.outcome).toBe('pass');
      expect(burstOf(results.get(EXCESS)!)).toMatchObject({ spread: false });
    },
    120_000,
  );
  it.concurrent.each(Object.entries(CAUGHT_BY).filter(([, ids]) => ids.includes(EXCESS)))(
    'quick profile: fault %s still fails the burst sent at once',
    async (fault) => {
      const results = await runChecks(pick(checks, [EXCESS]), { profile: 'quick', faults: [fault] });
      // The check's message names why, should it end otherwise (an error once in a fresh clone, 2026-11-30).
      expect(results.get(EXCESS)!.outcome, results.get(EXCESS)!.message).toBe('fail');
      expect(burstOf(results.get(EXCESS)!)).toMatchObject({ spread: false });
    },
    120_000,
  );

  // A fresh-clone CLI run on a loaded machine crashed when its deadline passed inside the first burst:
  // the section passed the failure on to its first-burst promise after that had settled, so the
  // rejection had no handler. An interrupt there takes the same path, at a known moment.
  it('a run stopped inside the first burst ends with its results, and leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const stop = new AbortController();
      let burstRequests = 0;
      const results = await runChecks(checks, {
        signal: stop.signal,
        subscribers: [
          (e) => {
            if (e.type === 'exchange' && e.exchange.request.headers['x-forwarded-for'] !== undefined && ++burstRequests === 3) stop.abort();
          },
        ],
      });
      expect(burstRequests).toBeGreaterThanOrEqual(3);
      expect([...results.values()].filter((r) => r.outcome === 'fail')).toEqual([]);
      await new Promise((r) => setTimeout(r, 200));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  }, 120_000);

  it('without enforcement the recovery check skips with a reason instead of passing', async () => {
    const results = await runChecks(pick(checks, ['issuance-limit.window-recovers']), { faults: ['issuance-limit-not-enforced'] });
    expect(results.get('issuance-limit.window-recovers')).toMatchObject({ outcome: 'skip', message: expect.stringContaining('no 429') });
  });
});
