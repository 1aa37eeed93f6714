import { describe, expect, it } from 'vitest';
import checks from '../../suites/issuance-limit/checks.js';
import { faults } from '../../src/reference/faults/issuance-limit.js';
import { conforming, notFailed, pick, runChecks } from '../auth/target.js';

/** Each fault and the checks it must fail. */
const CAUGHT_BY: Record<string, string[]> = {
  'issuance-limit-not-enforced': ['issuance-limit.excess-429'],
  'issuance-limit-wrong-code': ['issuance-limit.excess-429'],
  'issuance-limit-not-throttled': ['issuance-limit.excess-429'],
  'issuance-limit-no-retry-after': ['issuance-limit.excess-429'],
  'issuance-retry-after-too-short': ['issuance-limit.window-recovers'],
};

describe('issuance-limit suite', () => {
  it.concurrent.each([['first-request'], ['clock']] as const)('passes against the clean reference with the window aligned to the %s', async (issuanceWindow) => {
    const results = await runChecks(checks, { modes: { issuanceWindow } });
    expect(results.size).toBe(checks.length);
    expect(conforming(results)).toEqual([]);
    const burst = results.get('issuance-limit.excess-429')!.observations.find((o) => o.key === 'issuance-limit.burst')!.value as { issued: number };
    // 20 per window: at least 20 (a fresh window) and at most 40 (two windows) tokens before the 429.
    expect(burst.issued).toBeGreaterThanOrEqual(19);
    expect(burst.issued).toBeLessThanOrEqual(40);
  }, 120_000);

  it('has a proving expectation for every issuance-limit fault', () => {
    expect(faults.map((f) => f.name).filter((n) => !CAUGHT_BY[n])).toEqual([]);
  });

  it.concurrent.each(Object.entries(CAUGHT_BY))('fault %s fails %j', async (fault, ids) => {
    const results = await runChecks(pick(checks, ids), { faults: [fault] });
    expect(notFailed(results, ids)).toEqual([]);
  }, 120_000);

  it('without enforcement the recovery check skips with a reason instead of passing', async () => {
    const results = await runChecks(pick(checks, ['issuance-limit.window-recovers']), { faults: ['issuance-limit-not-enforced'] });
    expect(results.get('issuance-limit.window-recovers')).toMatchObject({ outcome: 'skip', message: expect.stringContaining('no 429') });
  });
});
