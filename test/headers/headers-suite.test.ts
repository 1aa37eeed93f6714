import { describe, expect, it } from 'vitest';
import checks from '../../suites/headers/checks.js';
import { faults } from '../../src/reference/faults/headers.js';
import { conforming, notFailed, runChecks } from '../auth/target.js';

/** Each fault and the checks it must fail: what it declares (`checks`); no-correlation-id (a core fault) fails them all. */
const CAUGHT_BY: Record<string, string[]> = {
  'no-correlation-id': checks.map((c) => c.id),
  ...Object.fromEntries(faults.map((f) => [f.name, f.checks ?? []])),
};

describe('headers suite', () => {
  it('passes against the clean reference', async () => {
    const results = await runChecks(checks);
    expect(results.size).toBe(checks.length);
    expect(conforming(results)).toEqual([]);
  });

  it('every headers fault names the checks it must fail', () => {
    expect(faults.filter((f) => !f.checks?.length).map((f) => f.name)).toEqual([]);
  });

  it.concurrent.each(Object.entries(CAUGHT_BY))('fault %s fails %j', async (fault, ids) => {
    const results = await runChecks('all', { faults: [fault], ids, requirements: [] });
    expect(notFailed(results, ids)).toEqual([]);
  });

  it('only the targeted check fails for a kind-specific fault', async () => {
    const results = await runChecks(checks, { faults: ['correlation-id-missing-on-token-endpoint'] });
    expect([...results.values()].filter((r) => r.outcome === 'fail').map((r) => r.id)).toEqual(['headers.correlation-id-on-token-endpoint']);
  });
});
