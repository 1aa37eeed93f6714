/**
 * Stored row shapes of the reference server (the "database"), as loaded from
 * fixtures/reference/*.json. Rows are not FHIR resources: the handlers map them
 * to FHIR on the way out and back on the way in.
 */
import type { CodeableConcept, Coding, Reference } from 'fhir/r4.js';

/** Present on every versioned row (MedicationRequest, Encounter, DocumentReference). */
export interface RecordMeta {
  id: string;
  org: string;
  /** Integer version, emitted as the string `meta.versionId`. */
  versionId: number;
  /** ISO instant of the current version. */
  lastUpdated: string;
  /** ISO instant of version 1; immutable. Search ordering key (with the id). */
  createdAt: string;
  /** Insertion sequence number; search snapshots include rows with seq <= the snapshot's. Assigned on load/insert. */
  seq: number;
}

export interface PatientRow {
  id: string;
  org: string;
  name: string;
  deceased: boolean;
  /** Id of the surviving record when this one was merged into another. */
  mergedInto?: string;
  /** Whether the patient's normativa data (CURP, place of birth, ...) is complete. */
  normativaComplete: boolean;
  curp?: string;
}

export interface PractitionerRow {
  id: string;
  org: string;
  name: string;
}

/** A clinic (FHIR Organization) and whether it is configured for the normativa. */
export interface ClinicRow {
  id: string;
  org: string;
  name: string;
  normativaConfigured: boolean;
}

export interface AppointmentRow {
  id: string;
  org: string;
  patientId: string;
  status: string;
}

export type PrescriptionState = 'draft' | 'signed' | 'cancelled';
export interface PrescriptionRow {
  id: string;
  org: string;
  patientId: string;
  state: PrescriptionState;
}

/** App-only fields with no FHIR representation: never emitted, preserved by writes. */
export interface MedicationRequestAppFields {
  warnings: string[];
  validity?: { start: string; end: string };
  sortOrder: number;
  draftGroup?: string;
}

export interface MedicationRequestRow extends RecordMeta {
  /** Stored status; values without a FHIR spelling (e.g. `legacy-suspended`) are emitted as `unknown`. */
  status: string;
  medication: CodeableConcept;
  dosageInstruction?: unknown[];
  dispenseRequest?: Record<string, unknown>;
  reasonCode?: CodeableConcept[];
  note?: unknown[];
  /** Absent only when a planted fault stored a MedicationRequest without a usable subject. */
  subjectId?: string;
  encounterId?: string;
  requester?: Reference;
  authoredOn?: string;
  substitution?: Record<string, unknown>;
  prescriptionId: string;
  app: MedicationRequestAppFields;
}

export type DiagnosisKind = 'primary' | 'secondary' | 'legacy' | 'unspecified';

export interface EncounterRow extends RecordMeta {
  status: string;
  class: Coding;
  subjectId?: string;
  participants: Array<{ practitionerId: string; display?: string }>;
  period?: { start?: string; end?: string };
  reasonCode?: CodeableConcept[];
  diagnoses: Array<{ kind: DiagnosisKind; code: CodeableConcept }>;
  /** Texts of the contained ClinicalImpressions and CarePlan. */
  summaries: { subjectiveObjective?: string; diagnosticImpression?: string; carePlan?: string };
  appointmentId?: string;
  serviceProviderId?: string;
}

/** R5 CodeableConcept / Attachment are structurally compatible with R4's for the fields used here. */
export interface DocumentReferenceRow extends RecordMeta {
  status: string;
  type?: CodeableConcept;
  category?: CodeableConcept[];
  subjectId: string;
  date?: string;
  description?: string;
  content: Array<{ attachment: Record<string, unknown> }>;
}

export interface FixtureData {
  patients: PatientRow[];
  practitioners: PractitionerRow[];
  organizations: ClinicRow[];
  appointments: AppointmentRow[];
  prescriptions: PrescriptionRow[];
  medicationRequests: Array<Omit<MedicationRequestRow, 'seq'>>;
  encounters: Array<Omit<EncounterRow, 'seq'>>;
  documentReferences: Array<Omit<DocumentReferenceRow, 'seq'>>;
}
