import { describe, expect, it } from 'vitest';
import checks from '../../suites/headers/checks.js';
import { faults } from '../../src/reference/faults/headers.js';
import { conforming, runChecks } from '../auth/target.js';

describe('headers suite', () => {
  it('passes against the clean reference', async () => {
    const results = await runChecks(checks);
    expect(results.size).toBe(checks.length);
    expect(conforming(results)).toEqual([]);
  });

  // That each planted fault fails the checks it names is the mutation shards' assertion
  // (test/mutation/faults-1.test.ts, faults-2.test.ts), not repeated here.
  it('every headers fault names the checks it must fail', () => {
    expect(faults.filter((f) => !f.checks?.length).map((f) => f.name)).toEqual([]);
  });

  it('only the targeted check fails for a kind-specific fault', async () => {
    const results = await runChecks(checks, { faults: ['correlation-id-missing-on-token-endpoint'] });
    expect([...results.values()].filter((r) => r.outcome === 'fail').map((r) => r.id)).toEqual(['headers.correlation-id-on-token-endpoint']);
  });
});
