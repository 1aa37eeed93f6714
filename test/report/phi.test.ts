import { describe, expect, test } from 'vitest';
import { buildReport, maskPhi, renderHtml, renderJunit, renderMarkdown } from '../../src/report/index.js';
import { CURP, OTHER_PATIENT_ID, PATIENT_ID, syntheticRun } from './synthetic-run.js';

describe('maskPhi', () => {
  const run = syntheticRun(40);
  // A Patient read whose own id appears without the `Patient/` prefix, and an id only the caller knows.
  run.checks[1]!.evidence[0]!.response!.body = JSON.stringify({ resourceType: 'Patient', id: PATIENT_ID, identifier: [{ value: CURP }] });
  run.checks[2]!.message = `patient ${OTHER_PATIENT_ID.toUpperCase()} has CURP ${CURP}`;
  run.checks[3]!.evidence[0]!.request.url = `https://fhir.example.test/fhir/R4/Encounter?subject=Patient%2F${PATIENT_ID}`;
  const original = buildReport(run);
  const masked = maskPhi(original, [OTHER_PATIENT_ID]);

  test('the unmasked report does contain the PHI (the test data is meaningful)', () => {
    const text = JSON.stringify(original);
    expect(text).toContain(PATIENT_ID);
    expect(text).toContain(CURP);
  });

  test('no CURP or patient UUID is left in any output format', () => {
    for (const out of [JSON.stringify(masked), renderHtml(masked), renderJunit(masked), renderMarkdown(masked)]) {
      expect(out).not.toContain(CURP);
      expect(out.toLowerCase()).not.toContain(PATIENT_ID);
      expect(out.toLowerCase()).not.toContain(OTHER_PATIENT_ID);
      expect(out).not.toMatch(/[A-Z]{4}\d{6}[HM][A-Z]{5}[A-Z0-9]\d/);
    }
  });

  test('uses stable placeholders and keeps the rest of the evidence', () => {
    const c = masked.checks.find((x) => x.id === run.checks[0]!.id)!;
    expect(masked.exchanges[c.evidence[0]!]!.request.url).toBe('https://fhir.example.test/fhir/R4/MedicationRequest?patient=redacted-patient-2&_count=20');
    expect(c.curl).toContain('/fhir/R4/Patient/redacted-patient-2');
    expect(JSON.stringify(masked)).toContain('REDACTED-CURP');
    expect(masked.checks.find((x) => x.id === run.checks[2]!.id)!.message).toBe('patient redacted-patient-1 has CURP REDACTED-CURP');
    expect(masked.phiMasked).toBe(true);
    expect(Object.keys(masked).slice(0, 3)).toEqual(['formatVersion', 'run', 'phiMasked']);
  });

  test('leaves non-patient UUIDs alone and does not modify its input', () => {
    expect(masked.ledger[0]!.id).toBe('0b6f1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d');
    expect(JSON.stringify(original)).toContain(PATIENT_ID);
  });
});
