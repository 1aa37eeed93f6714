/**
 * The versioning checks pass on the clean reference (weak and strong ETags) and
 * each versioning fault names versioning checks. That each planted fault makes
 * the checks it names fail is the mutation shards' assertion
 * (test/mutation/faults-1.test.ts, faults-2.test.ts), not repeated here.
 */
import { describe, expect, it } from 'vitest';
import checks from '../../suites/versioning/checks.js';
import { faults } from '../../src/reference/faults/versioning.js';
import { describeResults, runChecks } from '../medication-request/target.js';

const byId = new Map(checks.map((c) => [c.id, c]));

describe('versioning checks on the clean reference', () => {
  it.each([['weak'], ['strong']] as const)(
    'ETag %s: no fail, no error, no skip',
    async (etag) => {
      const results = await runChecks(checks, { profile: 'full', modes: { etag, updateStatus: 201 } });
      expect(describeResults(results).filter((l) => /: (fail|error|skip)/.test(l))).toEqual([]);
      const stale = results.get('versioning.stale-if-match-every-type')!.observations;
      expect(stale.map((o) => o.key)).toEqual(['versioning.stale-if-match.R4.Encounter', 'versioning.stale-if-match.R5.DocumentReference', 'surfaces']);
    },
    120_000,
  );
});

describe('each planted versioning fault is caught', () => {
  // Running each fault against the checks it names is the mutation shards' work (test/mutation/faults.ts).
  it('every versioning fault names versioning checks', () => {
    expect(faults.filter((f) => !f.checks?.length || !f.checks.every((id) => byId.has(id))).map((f) => f.name)).toEqual([]);
  });
});
