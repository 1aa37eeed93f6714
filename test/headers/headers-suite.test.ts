import { describe, expect, it } from 'vitest';
import checks from '../../suites/headers/checks.js';
import { faults } from '../../src/reference/faults/headers.js';
import { conforming, notFailed, pick, runChecks } from '../auth/target.js';

/** Each fault and the checks it must fail. */
const CAUGHT_BY: Record<string, string[]> = {
  'no-correlation-id': checks.map((c) => c.id),
  'correlation-id-missing-on-errors': ['headers.correlation-id-on-errors'],
  'correlation-id-missing-on-success': ['headers.correlation-id-on-success'],
  'correlation-id-missing-on-token-endpoint': ['headers.correlation-id-on-token-endpoint'],
  'correlation-id-missing-on-discovery': ['headers.correlation-id-on-discovery'],
  'correlation-id-constant': ['headers.correlation-id-distinct'],
};

describe('headers suite', () => {
  it('passes against the clean reference', async () => {
    const results = await runChecks(checks);
    expect(results.size).toBe(checks.length);
    expect(conforming(results)).toEqual([]);
  });

  it('has a proving expectation for every headers fault', () => {
    expect(faults.map((f) => f.name).filter((n) => !CAUGHT_BY[n])).toEqual([]);
  });

  it.concurrent.each(Object.entries(CAUGHT_BY))('fault %s fails %j', async (fault, ids) => {
    const results = await runChecks(pick(checks, ids), { faults: [fault] });
    expect(notFailed(results, ids)).toEqual([]);
  });

  it('only the targeted check fails for a kind-specific fault', async () => {
    const results = await runChecks(checks, { faults: ['correlation-id-missing-on-token-endpoint'] });
    expect([...results.values()].filter((r) => r.outcome === 'fail').map((r) => r.id)).toEqual(['headers.correlation-id-on-token-endpoint']);
  });
});
