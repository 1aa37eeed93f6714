/**
 * The pagination checks pass on the clean reference in its alternative-conformant
 * modes, and each pagination fault names checks of this suite. That each planted
 * fault makes the checks it names fail is the mutation shards' assertion
 * (test/mutation/faults-1.test.ts, faults-2.test.ts: every named check of every
 * fault fails), not repeated here.
 */
import { describe, expect, it } from 'vitest';
import checks from '../../suites/pagination/checks.js';
import { faults } from '../../src/reference/faults/pagination.js';
import { describeResults, runChecks } from './target.js';

const byId = new Map(checks.map((c) => [c.id, c]));
/** Fault -> the checks that must fail with it planted (each fault names them in `checks`; those of this suite). */
const CAUGHT_BY: Array<[string, string[]]> = faults.map((f) => [f.name, (f.checks ?? []).filter((id) => byId.has(id))]);

const MODES = [
  {},
  { countOver100: 'reject', cursorEncoding: 'handle', tieBreak: 'uuid-desc' },
  { createStatus: 200, validationStatus: 400, etag: 'strong' },
  { orderBy: 'resource-time' },
  { orderBy: 'last-updated', orderDirection: 'descending', tieBreak: 'uuid-desc' },
] as const;

describe('pagination checks on the clean reference', () => {
  it.each(MODES.map((m) => [JSON.stringify(m), m] as const))(
    'mode %s: no fail, no error, no skip (but _count=101 where every match fits one page)',
    async (_label, modes) => {
      const results = await runChecks(checks, { modes });
      // The fixture patient has about 30 Encounters and DocumentReferences: a clamp of _count=101 cannot show there.
      const unobservable = (l: string) => /^pagination\.count-maximum\.(encounter|document-reference): skip .*shows only when more than 100 match/.test(l);
      expect(describeResults(results).filter((l) => /: (fail|error|skip)/.test(l) && !unobservable(l))).toEqual([]);
      const observed = [...results.values()].filter((r) => r.level === 'observation');
      expect(observed.length).toBeGreaterThan(0);
      expect(observed.every((r) => r.outcome === 'observation' && r.observations.length > 0)).toBe(true);
    },
    120_000,
  );

  it('records which reading of _count over 100 the target chose', async () => {
    const check = [byId.get('pagination.count-maximum.medication-request')!];
    const reading = async (modes: { countOver100: 'clamp' | 'reject' }) =>
      (await runChecks(check, { modes })).get(check[0]!.id)!.observations.find((o) => o.key === 'pagination.count-above-maximum')?.value;
    expect(await reading({ countOver100: 'clamp' })).toMatchObject({ reading: 'clamped to 100', entries: 100 });
    expect(await reading({ countOver100: 'reject' })).toMatchObject({ reading: 'refused', status: 400, code: 'HPB-00101' });
  }, 60_000);

  it('judges _count=101 on patientManyRecords, clamped or refused; without it, skips with the count when every match fits one page', async () => {
    const check = [byId.get('pagination.count-maximum.encounter')!];
    for (const countOver100 of ['clamp', 'reject'] as const)
      expect((await runChecks(check, { modes: { countOver100 } })).get(check[0]!.id)!.outcome, countOver100).toBe('pass');
    const without = (
      await runChecks(check, {
        modes: { countOver100: 'clamp' },
        config: (raw) => {
          const { patientManyRecords: _, ...fixtures } = raw.fixtures as Record<string, string>;
          return { ...raw, fixtures };
        },
      })
    ).get(check[0]!.id)!;
    expect(without.outcome).toBe('skip');
    expect(without.message).toMatch(/^the fixture patient has \d+ matching records; whether _count=101 is clamped .*a patientManyRecords fixture/);
  }, 60_000);
});

describe('each planted pagination fault is caught', () => {
  // Running each fault against the checks it names is the mutation shards' work (test/mutation/faults.ts).
  it('every fault of src/reference/faults/pagination.ts names checks of this suite', () => {
    expect(CAUGHT_BY.filter(([, ids]) => ids.length === 0).map(([name]) => name)).toEqual([]);
  });
});
