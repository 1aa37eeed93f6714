/**
 * The in-memory store of the reference server: reference data (patients,
 * practitioners, clinics, appointments, prescriptions) and the versioned
 * resource tables. Every lookup is scoped to an organization: a row of another
 * organization is indistinguishable from a missing one.
 */
import { readFile } from 'node:fs/promises';
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
  RecordMeta,
} from './records.js';

interface Owned {
  id: string;
  org: string;
}

/** Rows keyed by id; reads are scoped to an organization. */
export class Table<T extends Owned> {
  private readonly rows = new Map<string, T>();
  constructor(rows: Iterable<T> = []) {
    for (const row of rows) this.rows.set(row.id, row);
  }
  get(org: string, id: string): T | undefined {
    const row = this.rows.get(id);
    return row && row.org === org ? row : undefined;
  }
  /** The row whatever organization owns it: for the planted faults that ignore tenancy only. */
  anyOrganization(id: string): T | undefined {
    return this.rows.get(id);
  }
  all(org: string): T[] {
    return [...this.rows.values()].filter((r) => r.org === org);
  }
  put(row: T): void {
    this.rows.set(row.id, row);
  }
  delete(id: string): boolean {
    return this.rows.delete(id);
  }
  values(): T[] {
    return [...this.rows.values()];
  }
}

export class Store {
  /** Last assigned insertion sequence number; a search snapshot is a value of it. */
  private seq = 0;
  readonly patients: Table<PatientRow>;
  readonly practitioners: Table<PractitionerRow>;
  readonly clinics: Table<ClinicRow>;
  readonly appointments: Table<AppointmentRow>;
  readonly prescriptions: Table<PrescriptionRow>;
  readonly medicationRequests = new Table<MedicationRequestRow>();
  readonly encounters = new Table<EncounterRow>();
  readonly documentReferences = new Table<DocumentReferenceRow>();

  constructor(data: FixtureData) {
    this.patients = new Table(data.patients);
    this.practitioners = new Table(data.practitioners);
    this.clinics = new Table(data.organizations);
    this.appointments = new Table(data.appointments);
    this.prescriptions = new Table(data.prescriptions);
    for (const row of data.medicationRequests) this.insert(this.medicationRequests, row);
    for (const row of data.encounters) this.insert(this.encounters, row);
    for (const row of data.documentReferences) this.insert(this.documentReferences, row);
  }

  /** The current sequence number: rows inserted later are outside a snapshot taken now. */
  snapshotSeq(): number {
    return this.seq;
  }

  insert<T extends RecordMeta>(table: Table<T>, row: Omit<T, 'seq'>): T {
    const stored = { ...row, seq: ++this.seq } as T;
    table.put(stored);
    return stored;
  }

  /** Deep copy of every stored row, for before/after comparisons. */
  snapshot(): FixtureData {
    return structuredClone({
      patients: this.patients.values(),
      practitioners: this.practitioners.values(),
      organizations: this.clinics.values(),
      appointments: this.appointments.values(),
      prescriptions: this.prescriptions.values(),
      medicationRequests: this.medicationRequests.values(),
      encounters: this.encounters.values(),
      documentReferences: this.documentReferences.values(),
    });
  }
}

const FIXTURE_FILES: Record<keyof FixtureData, string> = {
  patients: 'patients.json',
  practitioners: 'practitioners.json',
  organizations: 'organizations.json',
  appointments: 'appointments.json',
  prescriptions: 'prescriptions.json',
  medicationRequests: 'medication-requests.json',
  encounters: 'encounters.json',
  documentReferences: 'document-references.json',
};

export async function loadFixtures(dir: string): Promise<FixtureData> {
  const entries = await Promise.all(
    Object.entries(FIXTURE_FILES).map(async ([key, file]) => [key, JSON.parse(await readFile(join(dir, file), 'utf8'))] as const),
  );
  return Object.fromEntries(entries) as unknown as FixtureData;
}
