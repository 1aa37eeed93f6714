import { describe, expect, it } from 'vitest';
import { loadFixtures } from '../../../src/reference/resources/store.js';
import { FIXTURES_DIR, IDS } from './harness.js';

describe('reference fixtures', async () => {
  const data = await loadFixtures(FIXTURES_DIR);
  const all = [
    ...data.patients,
    ...data.practitioners,
    ...data.organizations,
    ...data.appointments,
    ...data.prescriptions,
    ...data.medicationRequests,
    ...data.encounters,
    ...data.documentReferences,
  ];

  it('holds every named fixture id exactly once, in the expected organization', () => {
    for (const [key, id] of Object.entries(IDS)) {
      if (key === 'orgA' || key === 'orgB') continue;
      const found = all.filter((r) => r.id === id);
      expect(found, key).toHaveLength(1);
      expect(found[0]!.org, key).toBe(key.startsWith('otherOrg') ? 'org-b' : 'org-a');
    }
    expect(new Set(all.map((r) => r.id)).size).toBe(all.length);
  });

  it('covers the states and spreads the spec rules need', () => {
    const mrs = data.medicationRequests.filter((r) => r.subjectId === IDS.patient);
    expect(mrs.length).toBeGreaterThanOrEqual(150);
    expect(new Set(mrs.map((r) => r.createdAt)).size).toBeLessThan(mrs.length);
    expect(mrs.some((r) => r.encounterId === IDS.encounter)).toBe(true);
    const state = (id: string) => data.prescriptions.find((p) => p.id === data.medicationRequests.find((m) => m.id === id)!.prescriptionId)!.state;
    expect(state(IDS.medicationRequestSigned!)).toBe('signed');
    expect(state(IDS.medicationRequestCancelled!)).toBe('cancelled');
    expect(state(IDS.medicationRequest!)).toBe('draft');
    const encounters = data.encounters.filter((e) => e.org === 'org-a');
    expect(new Set(encounters.map((e) => e.status))).toEqual(new Set(['planned', 'in-progress', 'finished', 'cancelled']));
    expect(new Set(encounters.map((e) => e.class.code))).toEqual(new Set(['AMB', 'IMP', 'VR']));
    expect(new Set(encounters.flatMap((e) => e.diagnoses.map((d) => d.kind)))).toEqual(new Set(['primary', 'secondary', 'legacy']));
    expect(data.encounters.find((e) => e.id === IDS.encounterInProgress)).toMatchObject({
      status: 'in-progress',
      appointmentId: IDS.appointmentWithActiveEncounter,
    });
    expect(data.patients.find((p) => p.id === IDS.patientDeceased)?.deceased).toBe(true);
    expect(data.patients.find((p) => p.id === IDS.patientMerged)?.mergedInto).toBe(IDS.patient);
    expect(data.patients.find((p) => p.id === IDS.patientIncompleteNormativa)?.normativaComplete).toBe(false);
    expect(data.documentReferences.filter((d) => d.subjectId === IDS.patient).length).toBeGreaterThanOrEqual(25);
  });
});
