/**
 * The Encounter, DocumentReference and tenancy checks pass on the clean
 * reference in its alternative-conformant modes, and each planted fault of
 * these areas makes the checks of the rule it breaks fail.
 */
import { describe, expect, it } from 'vitest';
import encounterChecks from '../../suites/encounter/checks.js';
import documentChecks from '../../suites/document-reference/checks.js';
import tenancyChecks from '../../suites/tenancy/checks.js';
import { operationsCheck } from '../../suites/rate-limit/operations-check.js';
import { FAULTS } from '../../src/reference/faults/index.js';
import { describeResults, runChecks } from '../medication-request/target.js';
import { EMBEDDED_LIMITS } from '../../src/run/embedded.js';

const checks = [...encounterChecks, ...documentChecks, ...tenancyChecks, operationsCheck];
const byId = new Map(checks.map((c) => [c.id, c]));
/** The exhausting check runs on its own (it drives a key to its limit and waits for it). */
const quickChecks = checks.filter((c) => !c.tags?.includes('exhausts-key-limit'));

const date = (prefix: string) => `encounter.search-date-${prefix}`;

/** Fault -> the checks that must fail with it planted. */
const CAUGHT_BY: Array<[string, string[]]> = [
  ['encounter-read-without-id', ['encounter.read-shape']],
  ['encounter-read-without-status', ['encounter.read-shape']],
  ['encounter-read-without-class', ['encounter.read-shape']],
  ['encounter-read-wrong-resource-type', ['encounter.read-shape']],
  ['encounter-read-status-203', ['encounter.read-shape']],
  ['encounter-diagnosis-condition-missing', ['encounter.diagnosis-contained-conditions']],
  ['encounter-no-primary-diagnosis', ['encounter.diagnosis-ranks']],
  ['encounter-status-outside-values', ['encounter.status-values']],
  ['encounter-class-without-display', ['encounter.class-coding']],
  ['encounter-subject-not-patient', ['encounter.subject-patient-reference']],
  ['encounter-participant-as-actor', ['encounter.participant-individual']],
  ['encounter-period-start-not-datetime', ['encounter.period-shape']],
  ['encounter-contained-ids-unstable', ['encounter.contained-stable-ids']],
  ['encounter-care-plan-id-renamed', ['encounter.contained-care-plan']],
  ['encounter-summary-not-clinical-impression', ['encounter.contained-subjective-objective-summary']],
  ['encounter-impression-loinc-missing', ['encounter.contained-diagnostic-impression']],
  ['encounter-diagnosis-external-condition', ['encounter.diagnosis-contained-conditions']],
  ['encounter-diagnosis-ranks-descending', ['encounter.diagnosis-ranks']],
  ['encounter-search-bundle-collection', ['encounter.search-returns-bundle']],
  ['encounter-search-ignores-_id', ['encounter.search-id']],
  ['encounter-search-ignores-patient', ['encounter.search-patient']],
  ['encounter-search-ignores-practitioner', ['encounter.search-practitioner']],
  ['encounter-search-ignores-status', ['encounter.search-status']],
  ['encounter-search-ignores-class', ['encounter.search-class']],
  ...['eq', 'ne', 'gt', 'ge', 'lt', 'le'].map((p): [string, string[]] => [`encounter-date-${p}-misread`, [date(p)]]),
  ['encounter-date-bare-misread', ['encounter.search-date-day']],
  ['encounter-create-without-id', ['encounter.create-returns-encounter']],
  ['encounter-update-empty-body', ['encounter.update-returns-encounter']],
  ['encounter-validation-wrong-code', ['encounter.create-invalid-400', 'encounter.create-unprocessable-422', 'encounter.update-invalid-400', 'encounter.update-unprocessable-422']],
  ['encounter-not-found-wrong-code', ['encounter.read-unknown-404', 'encounter.update-unknown-404']],
  ['encounter-appointment-conflict-not-enforced', ['encounter.appointment-active-encounter-409']],
  ['encounter-registration-window-400', ['encounter.registration-window-422']],
  ['encounter-normativa-not-enforced', ['encounter.normativa-incomplete-422']],
  ['encounter-throttled-wrong-code', ['rate-limit.operations-429']],
  // DocumentReference faults declare their checks (`checks`); the mutation tests run them (test/mutation).
  ['tenancy-read-leak', ['tenancy.foreign-read-404']],
  ['tenancy-update-leak', ['tenancy.foreign-update-404']],
  ['tenancy-search-leak', ['tenancy.foreign-search-empty']],
];

const MODES = [
  {},
  { createStatus: 200, updateStatus: 201, validationStatus: 400, unknownDocumentCode: 'HPB-00102', uploadPath: '$binary-upload' },
  { etag: 'strong', tieBreak: 'uuid-desc', cursorEncoding: 'handle', countOver100: 'reject', patientBlockOn: 'create' },
] as const;

describe('encounter, document-reference and tenancy checks on the clean reference', () => {
  it.each(MODES.map((m) => [JSON.stringify(m), m] as const))('mode %s: no fail, no error, no skip', async (_label, modes) => {
    const results = await runChecks(quickChecks, { modes });
    const bad = describeResults(results).filter((l) => /: (fail|error|skip)/.test(l));
    expect(bad).toEqual([]);
    const observed = [...results.values()].filter((r) => r.level === 'observation');
    expect(observed.length).toBeGreaterThan(0);
    expect(observed.every((r) => r.outcome === 'observation' && r.observations.length > 0)).toBe(true);
  }, 180_000);

  it('the exhausting check passes and leaves the key usable', async () => {
    // A ceiling a loaded machine can fill within the window (the embedded 1000 per 5 s needs ~200 requests a second).
    const limits = { ...EMBEDDED_LIMITS, perKeyPerWindow: 30, windowMs: 6000, tokenWindowMs: 6000, tokenLifetimeSec: 60 };
    const results = await runChecks([byId.get('rate-limit.operations-429')!, byId.get('encounter.read-shape')!], { profile: 'full', limits });
    expect(describeResults(results)).toEqual([expect.stringMatching(/: pass$/), expect.stringMatching(/: pass$/)]);
  }, 120_000);

  it('records the readings the target chose', async () => {
    const ids = ['document-reference.read-unknown-404', 'encounter.registration-window-422'];
    const results = await runChecks(ids.map((id) => byId.get(id)!), { modes: { unknownDocumentCode: 'HPB-00102' } });
    const value = (id: string, key: string) => results.get(id)!.observations.find((o) => o.key === key)?.value;
    expect(value(ids[0]!, 'document-reference.not-found-code')).toBe('HPB-00102');
    expect(value(ids[1]!, 'encounter.registration-window')).toMatch(/refused/);
  }, 60_000);
});

describe('each planted fault is caught', () => {
  it('every fault of these areas is listed', () => {
    const areas = new Set(['encounter', 'tenancy']);
    expect(FAULTS.filter((f) => areas.has(f.area)).map((f) => f.name).sort()).toEqual(CAUGHT_BY.map(([name]) => name).sort());
  });

  it.each(CAUGHT_BY)('%s fails %j', async (fault, ids) => {
    const targeted = ids.map((id) => {
      const check = byId.get(id);
      if (!check) throw new Error(`no check ${id}`);
      return check;
    });
    // Checks that wait out a window run under the full profile (quick skips them).
    const profile = targeted.some((c) => c.tags?.includes('waits')) ? 'full' : 'quick';
    const results = await runChecks(targeted, { faults: [fault], profile });
    expect(describeResults(results)).toEqual(ids.map((id) => expect.stringMatching(new RegExp(`^${id.replace(/\./g, '\\.')}: fail`))));
  }, 120_000);
});
