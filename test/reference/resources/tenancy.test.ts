import { beforeEach, describe, expect, it } from 'vitest';
import { expectError, harness, IDS, type Harness } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await harness();
});

const READS: Array<[string, string, string, string]> = [
  ['MedicationRequest.read', 'medicationRequest', 'otherOrgMedicationRequest', 'HPB-00102'],
  ['Encounter.read', 'encounter', 'otherOrgEncounter', 'HPB-00102'],
  ['DocumentReference.read', 'documentReference', 'otherOrgDocumentReference', 'HPB-00118'],
];

describe('tenancy', () => {
  it.each(READS)('%s: an id of another organization is 404 like a missing one', async (op, own, other, code) => {
    expect((await h.call(op, { id: IDS[own] })).status).toBe(200);
    expect(expectError(await h.call(op, { id: IDS[other] }))).toEqual({ status: 404, code, issueCode: 'not-found' });
    expect(expectError(await h.call(op, { id: IDS[own], org: 'org-b' }))).toEqual({ status: 404, code, issueCode: 'not-found' });
    expect((await h.call(op, { id: IDS[other], org: 'org-b' })).status).toBe(200);
  });

  it("updates of another organization's records are 404 and change nothing", async () => {
    const before = h.resources.snapshot();
    const mr = await h.ok('MedicationRequest.read', { id: IDS.otherOrgMedicationRequest, org: 'org-b' });
    expect(expectError(await h.call('MedicationRequest.update', { id: IDS.otherOrgMedicationRequest, body: mr }))).toMatchObject({ status: 404 });
    const enc = await h.ok('Encounter.read', { id: IDS.otherOrgEncounter, org: 'org-b' });
    expect(expectError(await h.call('Encounter.update', { id: IDS.otherOrgEncounter, body: enc }))).toMatchObject({ status: 404 });
    const doc = await h.ok('DocumentReference.read', { id: IDS.otherOrgDocumentReference, org: 'org-b' });
    expect(expectError(await h.call('DocumentReference.update', { id: IDS.otherOrgDocumentReference, body: doc }))).toMatchObject({ status: 404 });
    expect(h.resources.snapshot()).toEqual(before);
  });

  it("searches only see the caller's organization", async () => {
    expect((await h.ok('MedicationRequest.search', { query: `patient=${IDS.patient}`, org: 'org-b' })).total).toBe(0);
    const own = await h.ok('MedicationRequest.search', { query: `patient=${IDS.otherOrgPatient}`, org: 'org-b' });
    // org-b holds two records of each type for its patient (a next page at _count 1: the cursor checks' reverse direction).
    const ownIds = (bundle: any) => bundle.entry.map((e: any) => e.resource.id);
    expect(ownIds(own)).toContain(IDS.otherOrgMedicationRequest);
    expect(ownIds(own)).toHaveLength(2);
    const encounters = await h.ok('Encounter.search', { query: '_count=100', org: 'org-b' });
    expect(ownIds(encounters)).toContain(IDS.otherOrgEncounter);
    expect(ownIds(encounters)).toHaveLength(2);
    const docs = await h.ok('DocumentReference.search', { query: '_count=100', org: 'org-b' });
    expect(ownIds(docs)).toContain(IDS.otherOrgDocumentReference);
    expect(ownIds(docs)).toHaveLength(2);
    const orgA = await h.ok('Encounter.search', { query: `_id=${IDS.otherOrgEncounter}` });
    expect(orgA.total).toBe(0);
  });

  it("treats references to another organization's patients and encounters as nonexistent", async () => {
    const med = { text: 'x' };
    const foreignPatient = { resourceType: 'MedicationRequest', medicationCodeableConcept: med, subject: { reference: `Patient/${IDS.otherOrgPatient}` } };
    expect(expectError(await h.call('MedicationRequest.create', { body: foreignPatient }))).toMatchObject({ status: 422, code: 'HPB-00101' });
    const foreignEncounter = {
      ...foreignPatient,
      subject: { reference: `Patient/${IDS.patient}` },
      encounter: { reference: `Encounter/${IDS.otherOrgEncounter}` },
    };
    expect(expectError(await h.call('MedicationRequest.create', { body: foreignEncounter }))).toMatchObject({ status: 422, code: 'HPB-00101' });
    const encounter = { resourceType: 'Encounter', status: 'planned', class: { code: 'AMB' }, subject: { reference: `Patient/${IDS.otherOrgPatient}` } };
    expect(expectError(await h.call('Encounter.create', { body: encounter }))).toMatchObject({ status: 422, code: 'HPB-00101' });
    const participant = { ...encounter, subject: undefined, participant: [{ individual: { reference: `Practitioner/${IDS.otherOrgPractitioner}` } }] };
    expect(expectError(await h.call('Encounter.create', { body: participant }))).toMatchObject({ status: 422, code: 'HPB-00101' });
  });
});
