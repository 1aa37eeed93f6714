/**
 * Rules about the patient a clinical record is written for (error catalog
 * HPB-00108, HPB-00109, HPB-00142).
 */
import { businessRule, conflict } from './errors.js';
import type { PatientRow } from './records.js';

/** A deceased (409 HPB-00109) or merged (409 HPB-00108) patient accepts no new clinical data. */
export function assertPatientAcceptsData(patient: PatientRow): void {
  if (patient.deceased) throw conflict('HPB-00109', `Patient/${patient.id} is marked deceased; no new clinical data accepted`);
  if (patient.mergedInto !== undefined) {
    throw conflict('HPB-00108', `Patient/${patient.id} was merged into another record; no new clinical data accepted`);
  }
}

/** Starting a consultation needs the patient's normativa data (422 HPB-00142). */
export function assertNormativaComplete(patient: PatientRow): void {
  if (!patient.normativaComplete) {
    throw businessRule('HPB-00142', "The patient's required normativa data must be completed before starting a consultation");
  }
}
