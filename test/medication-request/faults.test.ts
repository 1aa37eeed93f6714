/**
 * The MedicationRequest and general-convention checks pass on the clean
 * reference in its alternative-conformant modes, and each fault names checks of
 * these suites. That each planted fault makes the checks it names fail is the
 * mutation shards' assertion (test/mutation/faults-1.test.ts, faults-2.test.ts:
 * every named check of every fault fails), not repeated here.
 */
import { describe, expect, it } from 'vitest';
import mrChecks from '../../suites/medication-request/checks.js';
import generalChecks from '../../suites/general/checks.js';
import { faults as mrFaults } from '../../src/reference/faults/medication-request.js';
import { faults as paginationFaults } from '../../src/reference/faults/pagination.js';
import { describeResults, runChecks } from './target.js';

const checks = [...mrChecks, ...generalChecks];
const byId = new Map(checks.map((c) => [c.id, c]));

/** Fault -> the checks that must fail with it planted (each fault names them in `checks`). */
const CAUGHT_BY: Array<[string, string[]]> = [...mrFaults, ...paginationFaults.filter((f) => f.name === 'pagination-mr-search-without-patient-accepted')].map(
  (f) => [f.name, (f.checks ?? []).filter((id) => byId.has(id))],
);

const MODES = [
  {},
  { createStatus: 200, updateStatus: 201, validationStatus: 400, signedPrescriptionCode: 'HPB-00103', patientBlockOn: 'create' },
  { etag: 'strong', tieBreak: 'uuid-desc', cursorEncoding: 'handle', countOver100: 'reject' },
] as const;

describe('medication-request and general checks on the clean reference', () => {
  it.each(MODES.map((m) => [JSON.stringify(m), m] as const))(
    'mode %s: no fail, no error, no skip',
    async (_label, modes) => {
      const results = await runChecks(checks, { modes });
      const bad = describeResults(results).filter((l) => /: (fail|error|skip)/.test(l));
      expect(bad).toEqual([]);
      const observed = [...results.values()].filter((r) => r.level === 'observation');
      expect(observed.every((r) => r.outcome === 'observation' && r.observations.length > 0)).toBe(true);
    },
    120_000,
  );

  it('records the alternative readings the target chose', async () => {
    const modes = { signedPrescriptionCode: 'HPB-00103', createStatus: 200, patientBlockOn: 'create' } as const;
    const ids = ['medication-request.signed-prescription-code', 'general.create-success-status', 'medication-request.blocked-patient-updates'];
    const results = await runChecks(
      ids.map((id) => byId.get(id)!),
      { modes },
    );
    const value = (id: string, key: string) => results.get(id)!.observations.find((o) => o.key === key)?.value;
    expect(value(ids[0]!, 'medication-request.signed-prescription')).toMatchObject({ status: 409, code: 'HPB-00103' });
    expect(value(ids[1]!, 'general.create-status')).toBe(200);
    expect(value(ids[2]!, 'medication-request.update.medicationRequestDeceasedPatient')).toMatchObject({ status: 200 });
  }, 60_000);
});

describe('each planted fault is caught', () => {
  // Running each fault against the checks it names is the mutation shards' work (test/mutation/faults.ts).
  it('every fault names the checks of this suite it must fail', () => {
    expect(CAUGHT_BY.filter(([, ids]) => ids.length === 0).map(([name]) => name)).toEqual([]);
  });
});
