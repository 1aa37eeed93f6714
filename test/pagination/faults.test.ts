/**
 * The pagination checks pass on the clean reference in its alternative-conformant
 * modes, and each planted pagination fault makes the checks of the rule it
 * breaks fail.
 */
import { describe, expect, it } from 'vitest';
import checks from '../../suites/pagination/checks.js';
import { faults } from '../../src/reference/faults/pagination.js';
import { describeResults, runChecks } from './target.js';

const byId = new Map(checks.map((c) => [c.id, c]));
const all3 = (rule: string) => [`${rule}.medication-request`, `${rule}.encounter`, `${rule}.document-reference`];

/** Fault -> the checks that must fail with it planted. */
const CAUGHT_BY: Array<[string, string[]]> = [
  ['pagination-searchset-type-collection', all3('pagination.searchset')],
  ['pagination-total-not-integer', all3('pagination.searchset')],
  ['pagination-link-without-url', all3('pagination.searchset')],
  ['pagination-entry-as-object', all3('pagination.searchset')],
  ['pagination-self-link-missing', [...all3('pagination.self-link'), ...all3('pagination.empty-result')]],
  ['pagination-next-on-last-page', all3('pagination.next-links')],
  ['pagination-next-missing-on-middle-page', all3('pagination.next-links')],
  ['pagination-next-drops-patient', all3('pagination.next-carries-parameters')],
  ['pagination-ordering-broken', all3('pagination.ordering')],
  ['pagination-ordered-by-id-only', all3('pagination.ordering')],
  ['pagination-empty-result-without-entry', all3('pagination.empty-result')],
  ['pagination-empty-result-next-link', all3('pagination.empty-result')],
  ['pagination-default-page-size-10', all3('pagination.default-page-size')],
  ['pagination-count-ignored', all3('pagination.count-honoured')],
  ['pagination-count-over-100-unclamped', ['pagination.count-maximum.medication-request']],
  ['pagination-invalid-count-accepted', ['pagination.invalid-count.medication-request']],
  ['pagination-snapshot-not-honoured', ['pagination.snapshot.medication-request']],
  ['pagination-duplicate-across-pages', all3('pagination.next-links')],
  ['pagination-gap-across-pages', all3('pagination.next-links')],
  ['pagination-garbage-cursor-500', ['pagination.forged-cursor.medication-request']],
  ['pagination-mr-search-without-patient-accepted', ['pagination.patient-or-encounter-required.medication-request']],
];

const MODES = [
  {},
  { countOver100: 'reject', cursorEncoding: 'handle', tieBreak: 'uuid-desc' },
  { createStatus: 200, validationStatus: 400, etag: 'strong' },
] as const;

describe('pagination checks on the clean reference', () => {
  it.each(MODES.map((m) => [JSON.stringify(m), m] as const))('mode %s: no fail, no error, no skip', async (_label, modes) => {
    const results = await runChecks(checks, { modes });
    expect(describeResults(results).filter((l) => /: (fail|error|skip)/.test(l))).toEqual([]);
    const observed = [...results.values()].filter((r) => r.level === 'observation');
    expect(observed.length).toBeGreaterThan(0);
    expect(observed.every((r) => r.outcome === 'observation' && r.observations.length > 0)).toBe(true);
  }, 120_000);

  it('records which reading of _count over 100 the target chose', async () => {
    const check = [byId.get('pagination.count-maximum.medication-request')!];
    const reading = async (modes: { countOver100: 'clamp' | 'reject' }) =>
      (await runChecks(check, { modes })).get(check[0]!.id)!.observations.find((o) => o.key === 'pagination.count-above-maximum')?.value;
    expect(await reading({ countOver100: 'clamp' })).toMatchObject({ reading: 'clamped to 100', entries: 100 });
    expect(await reading({ countOver100: 'reject' })).toMatchObject({ reading: 'refused', status: 400, code: 'HPB-00101' });
  }, 60_000);
});

describe('each planted pagination fault is caught', () => {
  it('every fault of src/reference/faults/pagination.ts is listed here', () => {
    expect(CAUGHT_BY.map(([f]) => f).sort()).toEqual(faults.map((f) => f.name).sort());
  });

  it.each(CAUGHT_BY)('%s fails %j', async (fault, ids) => {
    const targeted = ids.map((id) => byId.get(id) ?? expect.unreachable(`no check ${id}`));
    const results = await runChecks(targeted, { faults: [fault] });
    expect(describeResults(results)).toEqual(ids.map((id) => expect.stringMatching(new RegExp(`^${id.replace(/\./g, '\\.')}: fail`))));
  }, 60_000);
});
