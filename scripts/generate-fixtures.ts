/**
 * Generates the reference server's resource fixtures (fixtures/reference/*.json)
 * from fixtures/reference/fixture-ids.json. Deterministic: ids that are not
 * named fixtures are derived from a label with SHA-256, times from fixed bases.
 *
 *   npx tsx scripts/generate-fixtures.ts
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type {
  AppointmentRow,
  ClinicRow,
  DocumentReferenceRow,
  EncounterRow,
  FixtureData,
  MedicationRequestRow,
  PatientRow,
  PractitionerRow,
  PrescriptionRow,
} from '../src/reference/resources/records.js';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'reference');
const ids = JSON.parse(readFileSync(join(DIR, 'fixture-ids.json'), 'utf8')) as Record<string, string>;
const A = ids.orgA!;
const B = ids.orgB!;

/** A UUID v4-shaped id derived from a label. */
function uuidFor(label: string): string {
  const h = createHash('sha256').update(`fhir-conformance-fixture:${label}`).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const meta = (id: string, org: string, createdMs: number, version = 1, updatedAfterMs = (version - 1) * HOUR) => ({
  id,
  org,
  versionId: version,
  createdAt: iso(createdMs),
  lastUpdated: iso(createdMs + updatedAfterMs),
});
const DAY = 24 * HOUR;

// ---------------------------------------------------------------- people and places
const patients: PatientRow[] = [
  { id: ids.patient!, org: A, name: 'María Fernanda López Hernández', deceased: false, normativaComplete: true, curp: 'LOHM850412MDFPRR07' },
  { id: ids.patientNoRecords!, org: A, name: 'Jorge Ramírez Soto', deceased: false, normativaComplete: true, curp: 'RASJ900101HJCMTR05' },
  { id: ids.patientManyRecords!, org: A, name: 'Rosa Elena Castillo Mora', deceased: false, normativaComplete: true, curp: 'CAMR780315MDFSRS04' },
  { id: ids.patientDeceased!, org: A, name: 'Ana Torres Vega', deceased: true, normativaComplete: true, curp: 'TOVA400220MNLRGN02' },
  { id: ids.patientMerged!, org: A, name: 'María F. López', deceased: false, mergedInto: ids.patient!, normativaComplete: true },
  { id: ids.patientIncompleteNormativa!, org: A, name: 'Luis Medina', deceased: false, normativaComplete: false },
  { id: ids.otherOrgPatient!, org: B, name: 'Carmen Ruiz Díaz', deceased: false, normativaComplete: true, curp: 'RUDC780915MPLZZR09' },
];
const practitioners: PractitionerRow[] = [
  { id: ids.practitioner!, org: A, name: 'Dra. Sofía Castillo' },
  { id: ids.practitioner2!, org: A, name: 'Dr. Andrés Morales' },
  { id: ids.otherOrgPractitioner!, org: B, name: 'Dr. Pablo Núñez' },
];
const organizations: ClinicRow[] = [
  { id: ids.clinicConfigured!, org: A, name: 'Clínica Centro', normativaConfigured: true },
  { id: ids.clinicUnconfigured!, org: A, name: 'Consultorio Norte', normativaConfigured: false },
];
const appointments: AppointmentRow[] = [
  { id: ids.appointmentWithActiveEncounter!, org: A, patientId: ids.patient!, status: 'arrived' },
  { id: ids.appointmentFree!, org: A, patientId: ids.patient!, status: 'booked' },
];
const displayOf = (practitionerId: string) => practitioners.find((p) => p.id === practitionerId)!.name;

// ---------------------------------------------------------------- prescriptions
const rx = (label: string, org: string, patientId: string, state: PrescriptionRow['state']): PrescriptionRow => ({
  id: uuidFor(`prescription:${label}`),
  org,
  patientId,
  state,
});
const rxDraft1 = rx('draft-1', A, ids.patient!, 'draft');
const rxDraft2 = rx('draft-2', A, ids.patient!, 'draft');
const rxSigned = rx('signed', A, ids.patient!, 'signed');
const rxCancelled = rx('cancelled', A, ids.patient!, 'cancelled');
const rxDeceased = rx('deceased', A, ids.patientDeceased!, 'draft');
const rxMerged = rx('merged', A, ids.patientMerged!, 'draft');
const rxOther = rx('other-org', B, ids.otherOrgPatient!, 'draft');
const rxMany = rx('many-records', A, ids.patientManyRecords!, 'draft');
const prescriptions = [rxDraft1, rxDraft2, rxSigned, rxCancelled, rxDeceased, rxMerged, rxOther, rxMany];

// ---------------------------------------------------------------- medication requests
const RXNORM = 'http://www.nlm.nih.gov/research/umls/rxnorm';
const MEDICATIONS: Array<[string, string]> = [
  ['197361', 'amlodipine 5 MG Oral Tablet'],
  ['860975', 'metformin hydrochloride 500 MG Oral Tablet'],
  ['310965', 'ibuprofen 200 MG Oral Tablet'],
  ['308182', 'amoxicillin 250 MG Oral Capsule'],
  ['314076', 'lisinopril 10 MG Oral Tablet'],
  ['198211', 'simvastatin 40 MG Oral Tablet'],
  ['313782', 'acetaminophen 325 MG Oral Tablet'],
  ['197806', 'ibuprofen 600 MG Oral Tablet'],
];
const REASONS: Array<[string, string]> = [
  ['I10', 'Essential (primary) hypertension'],
  ['E11.9', 'Type 2 diabetes mellitus without complications'],
  ['J06.9', 'Acute upper respiratory infection, unspecified'],
];
const FHIR_STATUS_CYCLE = ['active', 'active', 'active', 'completed', 'on-hold', 'stopped', 'active', 'draft'];
const MR_BASE = Date.parse('2025-01-06T08:00:00.000Z');

/**
 * Records entered after they were authored, and records updated long after
 * their creation: the creation order (the reference's default ordering) then
 * differs from both the authoredOn and the meta.lastUpdated order, as in a
 * real service where prescriptions are back-dated and edited.
 */
const backDated = (i: number) => i % 10 === 4;
const updatedLate = (i: number) => i % 10 === 3;

function medicationRow(opts: {
  id: string;
  org: string;
  createdMs: number;
  i: number;
  subjectId: string;
  prescriptionId: string;
  status: string;
  encounterId?: string;
  version?: number;
  reordered?: boolean;
}): Omit<MedicationRequestRow, 'seq'> {
  const [code, display] = MEDICATIONS[opts.i % MEDICATIONS.length]!;
  const [reason, reasonDisplay] = REASONS[opts.i % REASONS.length]!;
  const requester = opts.i % 3 === 0 ? ids.practitioner2! : ids.practitioner!;
  const late = opts.reordered === true && updatedLate(opts.i) && opts.version === undefined;
  return {
    ...(late ? meta(opts.id, opts.org, opts.createdMs, 2, 3 * DAY) : meta(opts.id, opts.org, opts.createdMs, opts.version)),
    status: opts.status,
    medication: { coding: [{ system: RXNORM, code, display }], text: display },
    dosageInstruction: [
      {
        sequence: 1,
        text: `1 unit every ${8 + (opts.i % 3) * 4} hours`,
        timing: { repeat: { frequency: 1, period: 8 + (opts.i % 3) * 4, periodUnit: 'h' } },
        doseAndRate: [{ doseQuantity: { value: 1, unit: 'unit' } }],
      },
    ],
    dispenseRequest: { numberOfRepeatsAllowed: opts.i % 2, quantity: { value: 30, unit: 'unit' } },
    reasonCode: [{ coding: [{ system: 'http://hl7.org/fhir/sid/icd-10', code: reason, display: reasonDisplay }] }],
    ...(opts.i % 4 === 0 ? { note: [{ text: 'Take with food.' }] } : {}),
    subjectId: opts.subjectId,
    ...(opts.encounterId ? { encounterId: opts.encounterId } : {}),
    requester: {
      reference: `Practitioner/${opts.org === A ? requester : ids.otherOrgPractitioner!}`,
      display: opts.org === A ? displayOf(requester) : 'Dr. Pablo Núñez',
    },
    authoredOn: iso(opts.reordered === true && backDated(opts.i) ? opts.createdMs - 30 * DAY : opts.createdMs),
    prescriptionId: opts.prescriptionId,
    app: {
      warnings: opts.i % 5 === 0 ? ['Check renal function before renewal'] : [],
      ...(opts.i % 2 === 0 ? { validity: { start: iso(opts.createdMs).slice(0, 10), end: iso(opts.createdMs + 30 * 24 * HOUR).slice(0, 10) } } : {}),
      sortOrder: opts.i,
      ...(opts.i % 7 === 0 ? { draftGroup: `group-${opts.i % 3}` } : {}),
    },
  };
}

/** Named MedicationRequests of `patient`, at the head of the sequence. */
const NAMED_MR: Array<{ key: string; status: string; prescriptionId: string; version?: number }> = [
  { key: 'medicationRequest', status: 'active', prescriptionId: rxDraft1.id, version: 3 },
  { key: 'medicationRequestSigned', status: 'active', prescriptionId: rxSigned.id },
  { key: 'medicationRequestCancelled', status: 'cancelled', prescriptionId: rxCancelled.id },
  { key: 'medicationRequestEnteredInError', status: 'entered-in-error', prescriptionId: rxDraft1.id },
  { key: 'medicationRequestUnknownStatus', status: 'legacy-suspended', prescriptionId: rxDraft1.id },
];
const PATIENT_MR_COUNT = 160;
/** Records of each searchable type for patientManyRecords: one more than the largest page. */
const MANY_RECORDS = 101;
/** Their sequence numbers start here: dates a year after the other records, so no day holds both. */
const MANY_OFFSET = 1000;
const medicationRequests: Array<Omit<MedicationRequestRow, 'seq'>> = [];
for (let i = 0; i < PATIENT_MR_COUNT; i++) {
  const named = NAMED_MR[i];
  // Every fifth record shares its time with the previous one (exercises the tie-break).
  const createdMs = MR_BASE + (i - Math.floor(i / 5)) * HOUR;
  const prescriptionId = named?.prescriptionId ?? (i % 20 === 7 ? rxSigned.id : i % 20 === 13 ? rxCancelled.id : i < 80 ? rxDraft1.id : rxDraft2.id);
  const status = named?.status ?? (i % 37 === 11 ? 'legacy-suspended' : FHIR_STATUS_CYCLE[i % FHIR_STATUS_CYCLE.length]!);
  const encounterId = i >= 100 && i < 112 ? ids.encounter! : i >= 112 && i < 115 ? ids.encounterInProgress! : undefined;
  medicationRequests.push(
    medicationRow({
      id: named ? ids[named.key]! : uuidFor(`mr:patient:${i}`),
      org: A,
      createdMs,
      i,
      subjectId: ids.patient!,
      prescriptionId,
      status,
      encounterId,
      version: named?.version,
      reordered: named === undefined,
    }),
  );
}
// patientManyRecords: more than 100 of each searchable type, so a page-size cap shows (pagination.count-maximum.*).
for (let i = 0; i < MANY_RECORDS; i++) {
  medicationRequests.push(
    medicationRow({
      id: uuidFor(`mr:many:${i}`),
      org: A,
      createdMs: MR_BASE - 200 * HOUR + i * HOUR,
      i,
      subjectId: ids.patientManyRecords!,
      prescriptionId: rxMany.id,
      status: 'active',
    }),
  );
}
medicationRequests.push(
  medicationRow({
    id: ids.medicationRequestDeceasedPatient!,
    org: A,
    createdMs: MR_BASE - 48 * HOUR,
    i: 1,
    subjectId: ids.patientDeceased!,
    prescriptionId: rxDeceased.id,
    status: 'active',
  }),
  medicationRow({
    id: ids.medicationRequestMergedPatient!,
    org: A,
    createdMs: MR_BASE - 47 * HOUR,
    i: 2,
    subjectId: ids.patientMerged!,
    prescriptionId: rxMerged.id,
    status: 'active',
  }),
  medicationRow({
    id: ids.otherOrgMedicationRequest!,
    org: B,
    createdMs: MR_BASE,
    i: 3,
    subjectId: ids.otherOrgPatient!,
    prescriptionId: rxOther.id,
    status: 'active',
    encounterId: ids.otherOrgEncounter!,
  }),
);

// ---------------------------------------------------------------- encounters
const V3 = 'http://terminology.hl7.org/CodeSystem/v3-ActCode';
const CLASSES = { AMB: 'ambulatory', IMP: 'inpatient encounter', VR: 'virtual' } as const;
const classCoding = (code: keyof typeof CLASSES) => ({ system: V3, code, display: CLASSES[code] });
const ICD10 = 'http://hl7.org/fhir/sid/icd-10';
const dx = (code: string, display: string) => ({ coding: [{ system: ICD10, code, display }], text: display });
const ENC_STATUSES = ['finished', 'planned', 'cancelled', 'finished', 'in-progress'];
const ENC_CLASSES: Array<keyof typeof CLASSES> = ['AMB', 'IMP', 'VR'];
const ENC_BASE = Date.parse('2025-02-03T09:00:00.000Z');

/**
 * Encounter i (i >= 2): recorded two days after it started when i % 4 == 1,
 * updated five days after it was recorded when i % 4 == 2 (creation order,
 * period.start order and meta.lastUpdated order all differ).
 */
function encounterMeta(i: number, id: string, startMs: number) {
  if (i >= 2 && i % 4 === 1) return meta(id, A, startMs + 2 * DAY);
  if (i >= 2 && i % 4 === 2) return meta(id, A, startMs, 2, 5 * DAY);
  return meta(id, A, startMs);
}

function encounterRow(i: number, id: string, overrides: Partial<EncounterRow> = {}): Omit<EncounterRow, 'seq'> {
  // Three encounters per day, two hours apart, on consecutive days.
  const startMs = ENC_BASE + Math.floor(i / 3) * 24 * HOUR + (i % 3) * 2 * HOUR;
  const practitionerId = i % 4 === 0 ? ids.practitioner2! : ids.practitioner!;
  const status = ENC_STATUSES[i % ENC_STATUSES.length]!;
  return {
    ...encounterMeta(i, id, startMs),
    status,
    class: classCoding(ENC_CLASSES[i % ENC_CLASSES.length]!),
    subjectId: ids.patient!,
    participants: [{ practitionerId, display: displayOf(practitionerId) }],
    period: status === 'finished' ? { start: iso(startMs), end: iso(startMs + HOUR / 2) } : { start: iso(startMs) },
    reasonCode: [{ text: i % 2 === 0 ? 'Follow-up visit' : 'Headache and fever' }],
    diagnoses: i % 3 === 0 ? [{ kind: 'primary', code: dx('I10', 'Essential (primary) hypertension') }] : [],
    summaries: i % 3 === 0 ? { subjectiveObjective: 'Patient reports good adherence. BP 128/82.' } : {},
    ...overrides,
  };
}

const encounters: Array<Omit<EncounterRow, 'seq'>> = [];
for (let i = 0; i < 30; i++) {
  if (i === 0) {
    encounters.push(
      encounterRow(i, ids.encounter!, {
        status: 'finished',
        class: classCoding('AMB'),
        participants: [
          { practitionerId: ids.practitioner!, display: displayOf(ids.practitioner!) },
          { practitionerId: ids.practitioner2!, display: displayOf(ids.practitioner2!) },
        ],
        diagnoses: [
          { kind: 'primary', code: dx('I10', 'Essential (primary) hypertension') },
          { kind: 'secondary', code: dx('E11.9', 'Type 2 diabetes mellitus without complications') },
          { kind: 'legacy', code: dx('R51', 'Headache') },
          { kind: 'secondary', code: dx('E78.5', 'Hyperlipidaemia, unspecified') },
        ],
        summaries: {
          subjectiveObjective: 'S: occasional headaches. O: BP 142/90, HR 78, BMI 29.',
          diagnosticImpression: 'Hypertension not at goal; diabetes controlled.',
          carePlan: 'Increase amlodipine; review in 4 weeks with labs.',
        },
        serviceProviderId: ids.clinicConfigured!,
      }),
    );
  } else if (i === 1) {
    encounters.push(
      encounterRow(i, ids.encounterInProgress!, {
        status: 'in-progress',
        class: classCoding('AMB'),
        appointmentId: ids.appointmentWithActiveEncounter!,
        period: { start: iso(ENC_BASE + 2 * HOUR) },
      }),
    );
  } else {
    encounters.push(encounterRow(i, uuidFor(`encounter:patient:${i}`)));
  }
}
for (let i = 0; i < MANY_RECORDS; i++) encounters.push(encounterRow(MANY_OFFSET + i, uuidFor(`encounter:many:${i}`), { subjectId: ids.patientManyRecords! }));
encounters.push({
  ...encounterRow(0, ids.otherOrgEncounter!, { subjectId: ids.otherOrgPatient! }),
  org: B,
  participants: [{ practitionerId: ids.otherOrgPractitioner!, display: 'Dr. Pablo Núñez' }],
});

// ---------------------------------------------------------------- document references
const LOINC = 'http://loinc.org';
const DOC_TYPES: Array<[string, string]> = [
  ['11488-4', 'Consult note'],
  ['18842-5', 'Discharge summary'],
  ['57133-1', 'Referral note'],
  ['34117-2', 'History and physical note'],
];
const CATEGORY_SYSTEM = 'https://clinical-records.example/fhir/CodeSystem/document-category';
const DOC_CATEGORIES: Array<[string, string]> = [
  ['clinical-note', 'Clinical note'],
  ['imaging', 'Imaging'],
  ['lab-report', 'Laboratory report'],
];
const DOC_BASE = Date.parse('2025-03-03T10:00:00.000Z');

function documentRow(i: number, id: string, org: string, subjectId: string): Omit<DocumentReferenceRow, 'seq'> {
  // Two documents per day.
  const dateMs = DOC_BASE + Math.floor(i / 2) * 24 * HOUR + (i % 2) * 3 * HOUR;
  const [typeCode, typeDisplay] = DOC_TYPES[i % DOC_TYPES.length]!;
  const [catCode, catDisplay] = DOC_CATEGORIES[i % DOC_CATEGORIES.length]!;
  const bytes = Buffer.from(`%PDF-1.4\n% fixture document ${i}\n%%EOF\n`);
  // Like the encounters: some documents recorded two days after their date, some updated five days after creation.
  const recorded = i >= 1 && i % 4 === 1 ? meta(id, org, dateMs + 2 * DAY) : i >= 1 && i % 4 === 2 ? meta(id, org, dateMs, 2, 5 * DAY) : meta(id, org, dateMs);
  return {
    ...recorded,
    status: i === 29 ? 'entered-in-error' : i % 6 === 5 ? 'superseded' : 'current',
    type: { coding: [{ system: LOINC, code: typeCode, display: typeDisplay }], text: typeDisplay },
    category: [{ coding: [{ system: CATEGORY_SYSTEM, code: catCode, display: catDisplay }] }],
    subjectId,
    date: iso(dateMs),
    description: `${typeDisplay} #${i + 1}`,
    content: [
      {
        attachment: {
          contentType: 'application/pdf',
          size: String(bytes.length),
          hash: createHash('sha1').update(bytes).digest('base64'),
          title: `${typeDisplay}.pdf`,
          creation: iso(dateMs),
        },
      },
    ],
  };
}
const documentReferences: Array<Omit<DocumentReferenceRow, 'seq'>> = [];
for (let i = 0; i < 30; i++) {
  documentReferences.push(documentRow(i, i === 0 ? ids.documentReference! : uuidFor(`document:patient:${i}`), A, ids.patient!));
}
for (let i = 0; i < MANY_RECORDS; i++) documentReferences.push(documentRow(MANY_OFFSET + i, uuidFor(`document:many:${i}`), A, ids.patientManyRecords!));
documentReferences.push(documentRow(0, ids.otherOrgDocumentReference!, B, ids.otherOrgPatient!));

// ---------------------------------------------------------------- write
const data: FixtureData = {
  patients,
  practitioners,
  organizations,
  appointments,
  prescriptions,
  medicationRequests,
  encounters,
  documentReferences,
};
const FILES: Record<keyof FixtureData, string> = {
  patients: 'patients.json',
  practitioners: 'practitioners.json',
  organizations: 'organizations.json',
  appointments: 'appointments.json',
  prescriptions: 'prescriptions.json',
  medicationRequests: 'medication-requests.json',
  encounters: 'encounters.json',
  documentReferences: 'document-references.json',
};
for (const [key, file] of Object.entries(FILES) as Array<[keyof FixtureData, string]>) {
  writeFileSync(join(DIR, file), `${JSON.stringify(data[key], null, 2)}\n`);
}
console.log(`wrote ${Object.keys(FILES).length} fixture files to ${DIR}`);
