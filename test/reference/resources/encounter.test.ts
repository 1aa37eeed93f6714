import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EncounterRow, FixtureData } from '../../../src/reference/resources/records.js';
import { allPages, BASE, expectError, harness, IDS, NOW, type Harness } from './harness.js';

const DAY = 86_400_000;
const AMB = { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB', display: 'ambulatory' };
const newBody = (extra: Record<string, unknown> = {}) => ({
  resourceType: 'Encounter',
  status: 'in-progress',
  class: AMB,
  subject: { reference: `Patient/${IDS.patient}` },
  participant: [{ individual: { reference: `Practitioner/${IDS.practitioner}`, display: 'Dra. Sofía Castillo' } }],
  period: { start: new Date(NOW).toISOString() },
  ...extra,
});

let h: Harness;
beforeEach(async () => {
  h = await harness();
});

describe('Encounter read', () => {
  it('emits the read shape with meta, ETag and Last-Modified', async () => {
    const res = await h.call('Encounter.read', { id: IDS.encounter });
    if (!res.ok) throw new Error('read failed');
    expect(res.body).toMatchObject({
      resourceType: 'Encounter',
      id: IDS.encounter,
      status: 'finished',
      class: AMB,
      subject: { reference: `Patient/${IDS.patient}` },
      meta: { versionId: '1' },
    });
    expect(res.body.participant.map((p: any) => p.individual.reference)).toEqual([`Practitioner/${IDS.practitioner}`, `Practitioner/${IDS.practitioner2}`]);
    expect(res.body.period.start).toBe('2025-02-03T09:00:00.000Z');
    expect(res.headers).toEqual({ ETag: 'W/"1"', 'Last-Modified': 'Mon, 03 Feb 2025 09:00:00 GMT' });
  });

  it('emits contained resources with stable ids and ranks diagnoses (1 primary, 2.. secondary in stored order, none for legacy)', async () => {
    const body = await h.ok('Encounter.read', { id: IDS.encounter });
    expect(body.contained.map((c: any) => `${c.resourceType}#${c.id}`)).toEqual([
      'Condition#condition-1',
      'Condition#condition-2',
      'Condition#condition-3',
      'Condition#condition-4',
      'ClinicalImpression#subjective-objective-summary',
      'ClinicalImpression#diagnostic-impression',
      'CarePlan#care-plan',
    ]);
    expect(body.diagnosis).toEqual([
      { condition: { reference: '#condition-1' }, rank: 1 },
      { condition: { reference: '#condition-2' }, rank: 2 },
      { condition: { reference: '#condition-3' } },
      { condition: { reference: '#condition-4' }, rank: 3 },
    ]);
    const impression = body.contained.find((c: any) => c.id === 'diagnostic-impression');
    expect(impression.code.coding).toContainEqual(expect.objectContaining({ system: 'http://loinc.org', code: '51848-0' }));
    for (const c of body.contained) expect(c.subject).toEqual({ reference: `Patient/${IDS.patient}` });
    expect(body.contained.find((c: any) => c.id === 'care-plan')).toMatchObject({ status: 'active', intent: 'plan' });
    // Stable: a second read yields the same ids.
    expect((await h.ok('Encounter.read', { id: IDS.encounter })).contained).toEqual(body.contained);
  });

  it('emits diagnoses in reverse array order in diagnosisOrder=reversed mode, with the same ranks', async () => {
    const rr = await harness({ modes: { diagnosisOrder: 'reversed' } });
    const stored = (await h.ok('Encounter.read', { id: IDS.encounter })).diagnosis;
    const reversed = (await rr.ok('Encounter.read', { id: IDS.encounter })).diagnosis;
    expect(reversed).toEqual([...stored].reverse());
    expect(stored.map((d: any) => d.rank ?? null)).toEqual([1, 2, null, 3]);
  });

  it('answers 404 HPB-00102 for an absent id', async () => {
    expect(expectError(await h.call('Encounter.read', { id: '00000000-0000-4000-8000-000000000000' }))).toEqual({
      status: 404,
      code: 'HPB-00102',
      issueCode: 'not-found',
    });
  });
});

describe('Encounter search', () => {
  let rows: EncounterRow[];
  beforeAll(async () => {
    rows = ((await harness()).resources.snapshot() as FixtureData).encounters.filter((r) => r.org === 'org-a') as EncounterRow[];
  });
  // Every page (patientManyRecords puts more than 100 encounters in the organization).
  const ids = async (query: string) => {
    const pages = await allPages(h, 'Encounter.search', `${query}&_count=100`);
    const found = pages.flatMap((body) => body.entry.map((e: any) => e.resource.id));
    expect(pages[0].total).toBe(found.length);
    return found.sort();
  };
  const expected = (pred: (r: EncounterRow) => boolean) =>
    rows
      .filter(pred)
      .map((r) => r.id)
      .sort();
  const day = (r: EncounterRow) => r.period?.start?.slice(0, 10) ?? '';

  it('filters by _id, patient, practitioner, status and class', async () => {
    expect(await ids(`_id=${IDS.encounter}`)).toEqual([IDS.encounter]);
    expect(await ids(`patient=${IDS.patient}`)).toEqual(expected((r) => r.subjectId === IDS.patient));
    const byPractitioner2 = await ids(`practitioner=${IDS.practitioner2}`);
    expect(byPractitioner2).toContain(IDS.encounter);
    expect(byPractitioner2).toEqual(expected((r) => r.participants.some((p) => p.practitionerId === IDS.practitioner2)));
    for (const status of ['planned', 'in-progress', 'finished', 'cancelled']) {
      const found = await ids(`status=${status}`);
      expect(found.length).toBeGreaterThan(0);
      expect(found).toEqual(expected((r) => r.status === status));
    }
    expect(await ids('status=planned,cancelled')).toEqual(expected((r) => r.status === 'planned' || r.status === 'cancelled'));
    for (const code of ['AMB', 'IMP', 'VR']) {
      const found = await ids(`class=${code}`);
      expect(found.length).toBeGreaterThan(0);
      expect(found).toEqual(expected((r) => r.class.code === code));
    }
    expect(await ids(`class=${encodeURIComponent(`${AMB.system}|AMB`)}`)).toEqual(expected((r) => r.class.code === 'AMB'));
    expect(await ids('class=other-system|AMB')).toEqual([]);
  });

  it('applies every date prefix to the day of period.start', async () => {
    const d = '2025-02-04';
    expect(expected((r) => day(r) === d).length).toBe(3);
    const cases: Array<[string, (x: string) => boolean]> = [
      ['', (x) => x === d],
      ['eq', (x) => x === d],
      ['ne', (x) => x !== d],
      ['gt', (x) => x > d],
      ['ge', (x) => x >= d],
      ['lt', (x) => x < d],
      ['le', (x) => x <= d],
    ];
    for (const [prefix, pred] of cases) {
      const want = expected((r) => pred(day(r)));
      expect(want.length).toBeGreaterThan(0);
      expect(await ids(`date=${prefix}${d}`)).toEqual(want);
    }
    expect(await ids('date=ge2025-02-04&date=le2025-02-05')).toEqual(expected((r) => day(r) >= '2025-02-04' && day(r) <= '2025-02-05'));
  });

  it.each(['date=2025-2-4', 'date=sa2025-02-04', 'date=2025-02-30', 'date=ge', 'patient=abc', 'practitioner=xyz', 'status=arrived', '_count=0'])(
    'refuses %s with 400 HPB-00101',
    async (query) => {
      expect(expectError(await h.call('Encounter.search', { query }))).toEqual({ status: 400, code: 'HPB-00101', issueCode: 'invalid' });
    },
  );
});

describe('Encounter create', () => {
  it('creates with a server id, Location, ETag and version 1', async () => {
    const res = await h.call('Encounter.create', { body: newBody({ id: 'mine' }) });
    if (!res.ok) throw new Error(res.message);
    expect(res.status).toBe(201);
    expect(res.body.id).not.toBe('mine');
    expect(res.headers).toMatchObject({ Location: `${BASE}/fhir/R4/Encounter/${res.body.id}`, ETag: 'W/"1"' });
    expect(await h.ok('Encounter.read', { id: res.body.id })).toEqual(res.body);
  });

  it('stores diagnoses and summaries from contained resources and re-emits them with stable ids and ranks', async () => {
    const subject = { reference: `Patient/${IDS.patient}` };
    const body = newBody({
      contained: [
        { resourceType: 'Condition', id: 'c-a', subject, code: { text: 'secondary one' } },
        { resourceType: 'Condition', id: 'c-b', subject, code: { text: 'primary' } },
        { resourceType: 'Condition', id: 'c-c', subject, code: { text: 'unranked' } },
        { resourceType: 'ClinicalImpression', id: 'diagnostic-impression', status: 'completed', subject, summary: 'impression' },
        { resourceType: 'CarePlan', id: 'care-plan', status: 'active', intent: 'plan', subject, description: 'plan' },
      ],
      diagnosis: [{ condition: { reference: '#c-a' }, rank: 2 }, { condition: { reference: '#c-c' } }, { condition: { reference: '#c-b' }, rank: 1 }],
    });
    const created = await h.ok('Encounter.create', { body });
    expect(created.contained.filter((c: any) => c.resourceType === 'Condition').map((c: any) => [c.id, c.code.text])).toEqual([
      ['condition-1', 'primary'],
      ['condition-2', 'secondary one'],
      ['condition-3', 'unranked'],
    ]);
    expect(created.diagnosis.map((d: any) => d.rank ?? null)).toEqual([1, 2, null]);
    expect(created.contained.find((c: any) => c.id === 'diagnostic-impression')).toMatchObject({
      summary: 'impression',
      code: { coding: [{ code: '51848-0' }] },
    });
    expect(created.contained.find((c: any) => c.id === 'care-plan')).toMatchObject({ description: 'plan' });
    expect(created.contained.some((c: any) => c.id === 'subjective-objective-summary')).toBe(false);
  });

  it.each([
    ['no status', newBody({ status: undefined })],
    ['no class', newBody({ class: undefined })],
    ['a class without code', newBody({ class: { system: AMB.system } })],
    ['a wrong resourceType', newBody({ resourceType: 'MedicationRequest' })],
    ['a malformed subject', newBody({ subject: { reference: 'Patient/x' } })],
    ['a body that breaks the R4 schema', newBody({ period: { start: 'yesterday' } })],
  ])('refuses %s with 400 HPB-00101', async (_name, body) => {
    expect(expectError(await h.call('Encounter.create', { body }))).toEqual({ status: 400, code: 'HPB-00101', issueCode: 'invalid' });
  });

  it.each([
    ['a status outside the four', newBody({ status: 'arrived' })],
    ['an unknown patient', newBody({ subject: { reference: 'Patient/00000000-0000-4000-8000-000000000000' } })],
    ['an unknown practitioner', newBody({ participant: [{ individual: { reference: 'Practitioner/00000000-0000-4000-8000-000000000000' } }] })],
    ['a diagnosis without its contained Condition', newBody({ diagnosis: [{ condition: { reference: '#condition-9' } }] })],
  ])('refuses %s with HPB-00101 at modes.validationStatus', async (_name, body) => {
    expect(expectError(await h.call('Encounter.create', { body }))).toMatchObject({ status: 422, code: 'HPB-00101' });
    const h400 = await harness({ modes: { validationStatus: 400 } });
    expect(expectError(await h400.call('Encounter.create', { body }))).toMatchObject({ status: 400, code: 'HPB-00101' });
  });

  it('enforces the registration window (422 HPB-00139) on period.start', async () => {
    const at = (ms: number) => newBody({ period: { start: new Date(ms).toISOString() } });
    expect((await h.call('Encounter.create', { body: at(NOW - 29 * DAY) })).status).toBe(201);
    expect((await h.call('Encounter.create', { body: at(NOW + 29 * DAY) })).status).toBe(201);
    expect(expectError(await h.call('Encounter.create', { body: at(NOW - 31 * DAY) }))).toEqual({ status: 422, code: 'HPB-00139', issueCode: 'business-rule' });
    expect(expectError(await h.call('Encounter.create', { body: at(NOW + 31 * DAY) }))).toMatchObject({ status: 422, code: 'HPB-00139' });
    const narrow = await harness({ limits: { registrationWindowDays: 1 } });
    expect(expectError(await narrow.call('Encounter.create', { body: at(NOW - 2 * DAY) }))).toMatchObject({ status: 422, code: 'HPB-00139' });
    // Dates decades away are outside any window size.
    const wide = await harness({ limits: { registrationWindowDays: 3650 } });
    for (const start of ['1950-06-01T09:00:00Z', '2090-06-01T09:00:00Z']) {
      expect(expectError(await wide.call('Encounter.create', { body: newBody({ period: { start } }) }))).toMatchObject({ status: 422, code: 'HPB-00139' });
    }
  });

  it('refuses an appointment that already has an active encounter (409 HPB-00138)', async () => {
    const busy = newBody({ appointment: [{ reference: `Appointment/${IDS.appointmentWithActiveEncounter}` }] });
    expect(expectError(await h.call('Encounter.create', { body: busy }))).toEqual({ status: 409, code: 'HPB-00138', issueCode: 'conflict' });
    const free = newBody({ appointment: [{ reference: `Appointment/${IDS.appointmentFree}` }] });
    expect((await h.call('Encounter.create', { body: free })).status).toBe(201);
    expect(expectError(await h.call('Encounter.create', { body: free }))).toMatchObject({ status: 409, code: 'HPB-00138' });
  });

  it('applies the patient rules: deceased 409 HPB-00109, merged 409 HPB-00108, incomplete normativa 422 HPB-00142', async () => {
    const forPatient = (id: string) => newBody({ subject: { reference: `Patient/${id}` } });
    expect(expectError(await h.call('Encounter.create', { body: forPatient(IDS.patientDeceased!) }))).toMatchObject({ status: 409, code: 'HPB-00109' });
    expect(expectError(await h.call('Encounter.create', { body: forPatient(IDS.patientMerged!) }))).toMatchObject({ status: 409, code: 'HPB-00108' });
    expect(expectError(await h.call('Encounter.create', { body: forPatient(IDS.patientIncompleteNormativa!) }))).toEqual({
      status: 422,
      code: 'HPB-00142',
      issueCode: 'business-rule',
    });
  });

  it('refuses a clinic not configured for the normativa (403 HPB-00141)', async () => {
    const at = (id: string) => newBody({ serviceProvider: { reference: `Organization/${id}` } });
    expect(expectError(await h.call('Encounter.create', { body: at(IDS.clinicUnconfigured!) }))).toEqual({
      status: 403,
      code: 'HPB-00141',
      issueCode: 'forbidden',
    });
    expect((await h.call('Encounter.create', { body: at(IDS.clinicConfigured!) })).status).toBe(201);
  });
});

describe('Encounter update', () => {
  it('replaces the fields, bumps the version, honours If-Match', async () => {
    const body = await h.ok('Encounter.read', { id: IDS.encounterInProgress });
    const stale = await h.call('Encounter.update', { id: IDS.encounterInProgress, body, headers: { 'If-Match': 'W/"9"' } });
    expect(expectError(stale)).toEqual({ status: 409, code: 'HPB-00103', issueCode: 'conflict' });
    const res = await h.call('Encounter.update', {
      id: IDS.encounterInProgress,
      body: { ...body, status: 'finished' },
      headers: { 'If-Match': 'W/"1"' },
      now: NOW + 5000,
    });
    if (!res.ok) throw new Error(res.message);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'finished', meta: { versionId: '2', lastUpdated: new Date(NOW + 5000).toISOString() } });
    expect(res.headers?.ETag).toBe('W/"2"');
    // The appointment is now free.
    const free = newBody({ appointment: [{ reference: `Appointment/${IDS.appointmentWithActiveEncounter}` }] });
    expect((await h.call('Encounter.create', { body: free })).status).toBe(201);
  });

  it('checks the registration window only when period.start changes', async () => {
    const body = await h.ok('Encounter.read', { id: IDS.encounter });
    expect(Math.abs(Date.parse(body.period.start) - NOW)).toBeGreaterThan(30 * DAY);
    expect((await h.call('Encounter.update', { id: IDS.encounter, body })).status).toBe(200);
    const moved = { ...body, period: { start: '2025-01-01T09:00:00Z' } };
    expect(expectError(await h.call('Encounter.update', { id: IDS.encounter, body: moved }))).toMatchObject({ status: 422, code: 'HPB-00139' });
  });

  it('answers 404 for an absent id and 400 for a body id mismatch', async () => {
    expect(expectError(await h.call('Encounter.update', { id: '00000000-0000-4000-8000-000000000000', body: newBody() }))).toMatchObject({
      status: 404,
      code: 'HPB-00102',
    });
    const body = await h.ok('Encounter.read', { id: IDS.encounter });
    expect(expectError(await h.call('Encounter.update', { id: IDS.encounter, body: { ...body, id: IDS.encounterInProgress } }))).toMatchObject({
      status: 400,
      code: 'HPB-00101',
    });
  });
});
