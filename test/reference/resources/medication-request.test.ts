import { beforeEach, describe, expect, it } from 'vitest';
import type { FixtureData, MedicationRequestRow } from '../../../src/reference/resources/records.js';
import { BASE, expectError, harness, IDS, NOW, type Harness } from './harness.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MED = { coding: [{ system: 'http://www.nlm.nih.gov/research/umls/rxnorm', code: '197361', display: 'amlodipine 5 MG Oral Tablet' }] };
const newBody = (extra: Record<string, unknown> = {}) => ({
  resourceType: 'MedicationRequest',
  medicationCodeableConcept: MED,
  subject: { reference: `Patient/${IDS.patient}` },
  ...extra,
});
const rowOf = (h: Harness, id: string) => (h.resources.snapshot() as FixtureData).medicationRequests.find((r) => r.id === id) as MedicationRequestRow;

let h: Harness;
beforeEach(async () => {
  h = await harness();
});

describe('MedicationRequest read', () => {
  it('emits intent order, meta, ETag (weak) and Last-Modified', async () => {
    const res = await h.call('MedicationRequest.read', { id: IDS.medicationRequest });
    expect(res.ok && res.status).toBe(200);
    if (!res.ok) return;
    expect(res.body).toMatchObject({ resourceType: 'MedicationRequest', id: IDS.medicationRequest, intent: 'order', status: 'active' });
    expect(res.body.meta).toEqual({ versionId: '3', lastUpdated: '2025-01-06T10:00:00.000Z' });
    expect(res.headers).toEqual({ ETag: 'W/"3"', 'Last-Modified': 'Mon, 06 Jan 2025 10:00:00 GMT' });
  });

  it('emits a strong ETag in etag=strong mode', async () => {
    const strong = await harness({ modes: { etag: 'strong' } });
    const res = await strong.call('MedicationRequest.read', { id: IDS.medicationRequest });
    expect(res.ok && res.headers?.ETag).toBe('"3"');
  });

  it('emits a stored status without FHIR spelling as unknown', async () => {
    expect(rowOf(h, IDS.medicationRequestUnknownStatus).status).toBe('legacy-suspended');
    const body = await h.ok('MedicationRequest.read', { id: IDS.medicationRequestUnknownStatus });
    expect(body.status).toBe('unknown');
  });

  it('never emits app-only fields', async () => {
    const row = rowOf(h, IDS.medicationRequest);
    expect(row.app.warnings.length + row.app.sortOrder).toBeGreaterThanOrEqual(0);
    const text = JSON.stringify(await h.ok('MedicationRequest.read', { id: IDS.medicationRequest }));
    for (const key of ['warnings', 'validity', 'sortOrder', 'draftGroup', 'prescriptionId']) expect(text).not.toContain(`"${key}"`);
  });

  it('answers 404 HPB-00102 for an absent id', async () => {
    expect(expectError(await h.call('MedicationRequest.read', { id: '00000000-0000-4000-8000-000000000000' }))).toEqual({
      status: 404,
      code: 'HPB-00102',
      issueCode: 'not-found',
    });
  });
});

describe('MedicationRequest create', () => {
  it('assigns the id, defaults status to active, links a draft prescription, returns Location/ETag/Last-Modified', async () => {
    const res = await h.call('MedicationRequest.create', { body: newBody({ id: 'client-chosen', intent: 'plan' }) });
    expect(res.ok && res.status).toBe(201);
    if (!res.ok) return;
    const id = res.body.id as string;
    expect(id).toMatch(UUID);
    expect(res.body).toMatchObject({ status: 'active', intent: 'order', meta: { versionId: '1', lastUpdated: new Date(NOW).toISOString() } });
    expect(res.headers).toEqual({
      Location: `${BASE}/fhir/R4/MedicationRequest/${id}`,
      ETag: 'W/"1"',
      'Last-Modified': new Date(NOW).toUTCString(),
    });
    const snap = h.resources.snapshot() as FixtureData;
    const row = snap.medicationRequests.find((r) => r.id === id)!;
    const prescription = snap.prescriptions.find((p) => p.id === row.prescriptionId)!;
    expect(prescription).toMatchObject({ state: 'draft', patientId: IDS.patient });
    expect(row.status).toBe('active');
    expect(await h.ok('MedicationRequest.read', { id })).toEqual(res.body);
  });

  it('creates a new draft prescription when the patient has none', async () => {
    const before = (h.resources.snapshot() as FixtureData).prescriptions.length;
    const body = await h.ok('MedicationRequest.create', { body: newBody({ subject: { reference: `Patient/${IDS.patientNoRecords}` } }) });
    const snap = h.resources.snapshot() as FixtureData;
    expect(snap.prescriptions.length).toBe(before + 1);
    expect(snap.prescriptions.find((p) => p.id === body.groupIdentifier.value)).toMatchObject({ state: 'draft', patientId: IDS.patientNoRecords });
  });

  it('uses modes.createStatus', async () => {
    const h200 = await harness({ modes: { createStatus: 200 } });
    const res = await h200.call('MedicationRequest.create', { body: newBody() });
    expect(res.status).toBe(200);
  });

  it('refuses status unknown with HPB-00101 at modes.validationStatus', async () => {
    expect(expectError(await h.call('MedicationRequest.create', { body: newBody({ status: 'unknown' }) }))).toEqual({
      status: 422,
      code: 'HPB-00101',
      issueCode: 'invalid',
    });
    const h400 = await harness({ modes: { validationStatus: 400 } });
    expect(expectError(await h400.call('MedicationRequest.create', { body: newBody({ status: 'unknown' }) })).status).toBe(400);
  });

  it.each([
    ['a non-object body', [1, 2]],
    ['a wrong resourceType', newBody({ resourceType: 'Encounter' })],
    ['no medicationCodeableConcept', newBody({ medicationCodeableConcept: undefined })],
    ['no subject', newBody({ subject: undefined })],
    ['a subject that is not Patient/<uuid>', newBody({ subject: { reference: 'Patient/123' } })],
    ['a body that breaks the R4 schema', newBody({ note: 'not an array' })],
  ])('refuses %s with 400 HPB-00101', async (_name, body) => {
    expect(expectError(await h.call('MedicationRequest.create', { body }))).toEqual({ status: 400, code: 'HPB-00101', issueCode: 'invalid' });
  });

  it.each([
    ['an unknown patient', newBody({ subject: { reference: 'Patient/00000000-0000-4000-8000-000000000000' } })],
    ['a status outside the value set', newBody({ status: 'paused' })],
    ['an unknown encounter', newBody({ encounter: { reference: 'Encounter/00000000-0000-4000-8000-000000000000' } })],
  ])('refuses %s with 422 HPB-00101', async (_name, body) => {
    expect(expectError(await h.call('MedicationRequest.create', { body }))).toMatchObject({ status: 422, code: 'HPB-00101' });
  });

  it('refuses a deceased patient (409 HPB-00109) and a merged one (409 HPB-00108)', async () => {
    const deceased = await h.call('MedicationRequest.create', { body: newBody({ subject: { reference: `Patient/${IDS.patientDeceased}` } }) });
    expect(expectError(deceased)).toEqual({ status: 409, code: 'HPB-00109', issueCode: 'conflict' });
    const merged = await h.call('MedicationRequest.create', { body: newBody({ subject: { reference: `Patient/${IDS.patientMerged}` } }) });
    expect(expectError(merged)).toEqual({ status: 409, code: 'HPB-00108', issueCode: 'conflict' });
  });

  it('leaves the store unchanged when refused', async () => {
    const before = h.resources.snapshot();
    await h.call('MedicationRequest.create', { body: newBody({ status: 'unknown' }) });
    await h.call('MedicationRequest.create', { body: newBody({ subject: { reference: `Patient/${IDS.patientDeceased}` } }) });
    expect(h.resources.snapshot()).toEqual(before);
  });
});

describe('MedicationRequest update', () => {
  async function current(id = IDS.medicationRequest) {
    return h.ok('MedicationRequest.read', { id });
  }

  it('overlays FHIR-owned fields, preserves app-only fields, keeps other fields, bumps the version', async () => {
    const before = rowOf(h, IDS.medicationRequest);
    const body = await current();
    const changed = {
      ...body,
      status: 'on-hold',
      note: [{ text: 'Changed' }],
      dosageInstruction: [{ text: '2 units daily' }],
      authoredOn: '2020-01-01T00:00:00Z',
      requester: { reference: `Practitioner/${IDS.practitioner}` },
    };
    delete changed.dispenseRequest;
    const res = await h.call('MedicationRequest.update', { id: IDS.medicationRequest, body: changed, headers: { 'If-Match': 'W/"3"' }, now: NOW + 1000 });
    expect(res.ok && res.status).toBe(200);
    if (!res.ok) return;
    expect(res.body.meta.versionId).toBe('4');
    expect(res.headers).toEqual({ ETag: 'W/"4"', 'Last-Modified': new Date(NOW + 1000).toUTCString() });
    expect(res.body).toMatchObject({ status: 'on-hold', note: [{ text: 'Changed' }], dosageInstruction: [{ text: '2 units daily' }] });
    expect(res.body.dispenseRequest).toBeUndefined();
    // Fields outside the FHIR-owned set keep their stored values.
    expect(res.body.authoredOn).toBe(body.authoredOn);
    expect(res.body.requester).toEqual(body.requester);
    const after = rowOf(h, IDS.medicationRequest);
    expect(after.app).toEqual(before.app);
    expect(after.prescriptionId).toBe(before.prescriptionId);
    expect(after.createdAt).toBe(before.createdAt);
  });

  it('keeps the stored status when the body omits it', async () => {
    const body = await current();
    delete body.status;
    expect((await h.ok('MedicationRequest.update', { id: IDS.medicationRequest, body })).status).toBe('active');
  });

  it('accepts the strong form of the current ETag and no If-Match at all', async () => {
    const body = await current();
    expect((await h.call('MedicationRequest.update', { id: IDS.medicationRequest, body, headers: { 'if-match': '"3"' } })).status).toBe(200);
    expect((await h.call('MedicationRequest.update', { id: IDS.medicationRequest, body })).status).toBe(200);
  });

  it('refuses a stale If-Match with 409 HPB-00103 and changes nothing', async () => {
    const before = h.resources.snapshot();
    const res = await h.call('MedicationRequest.update', { id: IDS.medicationRequest, body: await current(), headers: { 'If-Match': 'W/"2"' } });
    expect(expectError(res)).toEqual({ status: 409, code: 'HPB-00103', issueCode: 'conflict' });
    expect(h.resources.snapshot()).toEqual(before);
  });

  it('answers 404 HPB-00102 for an absent id', async () => {
    const res = await h.call('MedicationRequest.update', { id: '00000000-0000-4000-8000-000000000000', body: newBody() });
    expect(expectError(res)).toMatchObject({ status: 404, code: 'HPB-00102' });
  });

  it('refuses a body id different from the URL id with 400 HPB-00101', async () => {
    const res = await h.call('MedicationRequest.update', { id: IDS.medicationRequest, body: { ...(await current()), id: IDS.medicationRequestSigned } });
    expect(expectError(res)).toEqual({ status: 400, code: 'HPB-00101', issueCode: 'invalid' });
  });

  it('refuses entered-in-error with 422 HPB-00140', async () => {
    const id = IDS.medicationRequestEnteredInError;
    const res = await h.call('MedicationRequest.update', { id, body: { ...(await current(id)), status: 'active' } });
    expect(expectError(res)).toEqual({ status: 422, code: 'HPB-00140', issueCode: 'business-rule' });
  });

  it.each(['medicationRequestSigned', 'medicationRequestCancelled'])(
    'refuses %s (parent prescription) with 409 and modes.signedPrescriptionCode',
    async (key) => {
      const id = IDS[key]!;
      const body = await current(id);
      expect(expectError(await h.call('MedicationRequest.update', { id, body }))).toEqual({ status: 409, code: 'HPB-00114', issueCode: 'conflict' });
      const h103 = await harness({ modes: { signedPrescriptionCode: 'HPB-00103' } });
      expect(expectError(await h103.call('MedicationRequest.update', { id, body }))).toMatchObject({ status: 409, code: 'HPB-00103' });
    },
  );

  it('refuses a changed subject with 422 HPB-00101', async () => {
    const res = await h.call('MedicationRequest.update', {
      id: IDS.medicationRequest,
      body: { ...(await current()), subject: { reference: `Patient/${IDS.patientNoRecords}` } },
    });
    expect(expectError(res)).toEqual({ status: 422, code: 'HPB-00101', issueCode: 'invalid' });
  });

  it('refuses writing status unknown with HPB-00101', async () => {
    const res = await h.call('MedicationRequest.update', { id: IDS.medicationRequest, body: { ...(await current()), status: 'unknown' } });
    expect(expectError(res)).toMatchObject({ status: 422, code: 'HPB-00101' });
  });

  it('blocks deceased/merged patients on update per modes.patientBlockOn', async () => {
    for (const [key, code] of [
      ['medicationRequestDeceasedPatient', 'HPB-00109'],
      ['medicationRequestMergedPatient', 'HPB-00108'],
    ] as const) {
      const id = IDS[key]!;
      const body = await current(id);
      expect(expectError(await h.call('MedicationRequest.update', { id, body }))).toMatchObject({ status: 409, code });
      const lenient = await harness({ modes: { patientBlockOn: 'create' } });
      expect((await lenient.call('MedicationRequest.update', { id, body })).status).toBe(200);
    }
  });

  it('uses modes.updateStatus', async () => {
    const h201 = await harness({ modes: { updateStatus: 201 } });
    const body = await h201.ok('MedicationRequest.read', { id: IDS.medicationRequest });
    expect((await h201.call('MedicationRequest.update', { id: IDS.medicationRequest, body })).status).toBe(201);
  });
});

describe('MedicationRequest search', () => {
  it('requires patient or encounter (400 HPB-00101)', async () => {
    expect(expectError(await h.call('MedicationRequest.search', { query: '_count=5' }))).toEqual({ status: 400, code: 'HPB-00101', issueCode: 'invalid' });
  });

  it.each(['patient=123', 'encounter=not-a-uuid'])('refuses a non-UUID value (%s) with 400 HPB-00101', async (query) => {
    expect(expectError(await h.call('MedicationRequest.search', { query }))).toMatchObject({ status: 400, code: 'HPB-00101' });
  });

  it('filters by patient, encounter, and both', async () => {
    const rows = (h.resources.snapshot() as FixtureData).medicationRequests.filter((r) => r.org === 'org-a');
    const byPatient = await h.ok('MedicationRequest.search', { query: `patient=${IDS.patient}` });
    expect(byPatient.total).toBe(rows.filter((r) => r.subjectId === IDS.patient).length);
    expect(byPatient.total).toBeGreaterThanOrEqual(150);
    const byEncounter = await h.ok('MedicationRequest.search', { query: `encounter=${IDS.encounter}&_count=100` });
    const expected = rows
      .filter((r) => r.encounterId === IDS.encounter)
      .map((r) => r.id)
      .sort();
    expect(expected.length).toBeGreaterThan(0);
    expect(byEncounter.entry.map((e: any) => e.resource.id).sort()).toEqual(expected);
    for (const e of byEncounter.entry) expect(e.resource.encounter).toEqual({ reference: `Encounter/${IDS.encounter}` });
    const both = await h.ok('MedicationRequest.search', { query: `patient=${IDS.patient}&encounter=${IDS.encounterInProgress}` });
    expect(both.total).toBe(rows.filter((r) => r.subjectId === IDS.patient && r.encounterId === IDS.encounterInProgress).length);
    const none = await h.ok('MedicationRequest.search', { query: `patient=${IDS.patientNoRecords}&encounter=${IDS.encounter}` });
    expect(none.total).toBe(0);
  });
});

describe('MedicationRequest structure', () => {
  it.each([
    ['medicationCodeableConcept', []],
    ['dispenseRequest', [1]],
    ['requester', 'Practitioner/x'],
  ])('refuses %s of the wrong JSON type with 400 HPB-00101', async (field, value) => {
    expect(expectError(await h.call('MedicationRequest.create', { body: newBody({ [field]: value }) }))).toMatchObject({ status: 400, code: 'HPB-00101' });
  });
});
