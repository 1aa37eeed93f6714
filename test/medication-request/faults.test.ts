/**
 * The MedicationRequest and general-convention checks pass on the clean
 * reference in its alternative-conformant modes, and each planted fault makes
 * the checks of the rule it breaks fail.
 */
import { describe, expect, it } from 'vitest';
import checks from '../../suites/medication-request/checks.js';
import { describeResults, runChecks } from './target.js';

const byId = new Map(checks.map((c) => [c.id, c]));

/** Fault -> the checks that must fail with it planted. */
const CAUGHT_BY: Array<[string, string[]]> = [
  ['mr-resource-type-wrong', ['medication-request.read-fixture']],
  ['mr-status-missing', ['medication-request.read-fixture']],
  ['mr-encounter-reference-urn', ['medication-request.search-by-encounter', 'general.reference-format']],
  ['mr-create-returns-outcome', ['medication-request.create-default-status']],
  ['mr-update-returns-outcome', ['medication-request.update-overlays-fhir-fields']],
  ['mr-search-bundle-collection', ['medication-request.search-by-patient']],
  ['mr-default-status-not-applied', ['medication-request.create-default-status']],
  ['mr-intent-echoed', ['medication-request.intent-ignored-on-write']],
  ['mr-intent-not-order', ['medication-request.read-fixture', 'medication-request.intent-ignored-on-write']],
  ['mr-unknown-status-writable', ['medication-request.create-unknown-status-refused', 'medication-request.update-unknown-status-refused']],
  ['mr-unknown-status-not-emitted', ['medication-request.unknown-status-emitted']],
  ['mr-medication-not-required', ['medication-request.create-without-medication-refused']],
  ['mr-missing-subject-404', ['medication-request.create-without-subject-refused']],
  ['mr-update-schema-unchecked', ['medication-request.update-invalid-body-refused']],
  ['mr-not-found-generic-code', ['medication-request.read-unknown-id', 'medication-request.update-unknown-id']],
  ['mr-overlay-ignored', ['medication-request.update-overlays-fhir-fields']],
  ['mr-subject-change-accepted', ['medication-request.subject-change-refused']],
  ['mr-entered-in-error-updatable', ['medication-request.entered-in-error-update-refused']],
  ['mr-signed-prescription-updatable', ['medication-request.signed-prescription-update-refused']],
  ['mr-deceased-patient-accepted', ['medication-request.deceased-patient-create-refused']],
  ['mr-merged-patient-accepted', ['medication-request.merged-patient-create-refused']],
  ['mr-search-patient-ignored', ['medication-request.search-by-patient']],
  ['mr-search-encounter-ignored', ['medication-request.search-by-encounter']],
  ['pagination-mr-search-without-patient-accepted', ['medication-request.search-needs-patient-or-encounter']],
  ['mr-client-id-kept', ['general.id-server-assigned']],
  ['mr-id-not-uuid', ['general.id-uuid']],
  ['mr-reference-absolute-url', ['general.reference-format']],
  ['mr-reference-display-object', ['general.reference-display']],
  ['mr-authored-on-local-format', ['general.timestamps-iso8601']],
];

const MODES = [
  {},
  { createStatus: 200, updateStatus: 201, validationStatus: 400, signedPrescriptionCode: 'HPB-00103', patientBlockOn: 'create' },
  { etag: 'strong', tieBreak: 'uuid-desc', cursorEncoding: 'handle', countOver100: 'reject' },
] as const;

describe('medication-request and general checks on the clean reference', () => {
  it.each(MODES.map((m) => [JSON.stringify(m), m] as const))('mode %s: no fail, no error, no skip', async (_label, modes) => {
    const results = await runChecks(checks, { modes });
    const bad = describeResults(results).filter((l) => /: (fail|error|skip)/.test(l));
    expect(bad).toEqual([]);
    const observed = [...results.values()].filter((r) => r.level === 'observation');
    expect(observed.every((r) => r.outcome === 'observation' && r.observations.length > 0)).toBe(true);
  }, 120_000);

  it('records the alternative readings the target chose', async () => {
    const modes = { signedPrescriptionCode: 'HPB-00103', createStatus: 200, patientBlockOn: 'create' } as const;
    const ids = ['medication-request.signed-prescription-code', 'general.create-success-status', 'medication-request.blocked-patient-updates'];
    const results = await runChecks(ids.map((id) => byId.get(id)!), { modes });
    const value = (id: string, key: string) => results.get(id)!.observations.find((o) => o.key === key)?.value;
    expect(value(ids[0]!, 'medication-request.signed-prescription')).toMatchObject({ status: 409, code: 'HPB-00103' });
    expect(value(ids[1]!, 'general.create-status')).toBe(200);
    expect(value(ids[2]!, 'medication-request.update.medicationRequestDeceasedPatient')).toMatchObject({ status: 200 });
  }, 60_000);
});

describe('each planted fault is caught', () => {
  it.each(CAUGHT_BY)('%s fails %j', async (fault, ids) => {
    const targeted = ids.map((id) => {
      const check = byId.get(id);
      if (!check) throw new Error(`no check ${id}`);
      return check;
    });
    const results = await runChecks(targeted, { faults: [fault] });
    expect(describeResults(results)).toEqual(ids.map((id) => expect.stringMatching(new RegExp(`^${id.replace(/\./g, '\\.')}: fail`))));
  }, 60_000);
});
