/**
 * The versioning checks pass on the clean reference (weak and strong ETags) and
 * each planted versioning fault makes its checks fail.
 */
import { describe, expect, it } from 'vitest';
import checks from '../../suites/versioning/checks.js';
import { faults } from '../../src/reference/faults/versioning.js';
import { describeResults, runChecks } from '../medication-request/target.js';

const byId = new Map(checks.map((c) => [c.id, c]));

/** Fault -> the checks that must fail with it planted (each fault names them in `checks`). */
const CAUGHT_BY: Array<[string, string[]]> = faults.map((f) => [f.name, f.checks ?? []]);

describe('versioning checks on the clean reference', () => {
  it.each([['weak'], ['strong']] as const)(
    'ETag %s: no fail, no error, no skip',
    async (etag) => {
      const results = await runChecks(checks, { modes: { etag, updateStatus: 201 } });
      expect(describeResults(results).filter((l) => /: (fail|error|skip)/.test(l))).toEqual([]);
      const stale = results.get('versioning.if-match-other-resources')!.observations;
      expect(stale.map((o) => o.key)).toEqual(['versioning.stale-if-match.Encounter', 'versioning.stale-if-match.DocumentReference']);
    },
    120_000,
  );
});

describe('each planted versioning fault is caught', () => {
  it.each(CAUGHT_BY)(
    '%s fails %j',
    async (fault, ids) => {
      const results = await runChecks(
        ids.map((id) => byId.get(id)!),
        { faults: [fault] },
      );
      expect(describeResults(results)).toEqual(ids.map((id) => expect.stringMatching(new RegExp(`^${id.replace(/\./g, '\\.')}: fail`))));
    },
    60_000,
  );
});
