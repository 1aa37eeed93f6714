/** Faults of the resource conventions (suites/general): ids, references and timestamps of MedicationRequests. */
import { eachMedicationRequest, isObject, successOf } from './edit.js';
import type { FaultDef } from './types.js';

export const faults: FaultDef[] = [
  {
    name: 'mr-client-id-kept',
    area: 'general',
    violates: ['general.id-server-assigned'],
    symptom: 'A MedicationRequest created with a client-supplied UUID id is stored under that id.',
    checks: ['general.id-server-assigned'],
  },
  {
    name: 'mr-id-not-uuid',
    area: 'general',
    violates: ['general.id-uuid'],
    checks: ['general.id-uuid'],
    symptom: 'MedicationRequests read or searched carry their id as 32 hex digits without dashes.',
    transformResponse: (res, req) => {
      if (!successOf(res, req, 'read') && !successOf(res, req, 'search-type')) return res;
      return eachMedicationRequest(res, (mr) => {
        if (typeof mr.id === 'string') mr.id = mr.id.replace(/-/g, '');
      });
    },
  },
  {
    name: 'mr-reference-absolute-url',
    area: 'general',
    violates: ['general.reference-format'],
    checks: ['general.reference-format'],
    symptom: 'MedicationRequest.subject.reference is an absolute URL instead of Patient/<uuid>.',
    transformResponse: (res) =>
      eachMedicationRequest(res, (mr) => {
        if (isObject(mr.subject) && typeof mr.subject.reference === 'string')
          mr.subject.reference = `https://clinical-records.example/fhir/R4/${mr.subject.reference}`;
      }),
  },
  {
    name: 'mr-reference-display-object',
    area: 'general',
    violates: ['general.reference-display'],
    checks: ['general.reference-display'],
    symptom: 'MedicationRequest.requester.display is an object instead of a string.',
    transformResponse: (res) =>
      eachMedicationRequest(res, (mr) => {
        if (isObject(mr.requester) && typeof mr.requester.display === 'string') mr.requester.display = { text: mr.requester.display };
      }),
  },
  {
    name: 'mr-authored-on-local-format',
    area: 'general',
    violates: ['general.timestamps-iso8601'],
    checks: ['general.timestamps-iso8601'],
    symptom: 'MedicationRequest.authoredOn is emitted as DD/MM/YYYY hh:mm.',
    transformResponse: (res) =>
      eachMedicationRequest(res, (mr) => {
        const m = typeof mr.authoredOn === 'string' ? /^(\d{4})-(\d{2})-(\d{2})T(\d{2}:\d{2})/.exec(mr.authoredOn) : null;
        if (m) mr.authoredOn = `${m[3]}/${m[2]}/${m[1]} ${m[4]}`;
      }),
  },
  {
    name: 'encounter-deceased-patient-accepted',
    area: 'general',
    violates: ['catalog.hpb-00109'],
    symptom: 'An Encounter for a deceased patient is created; a MedicationRequest for that patient is still refused with 409 HPB-00109.',
    checks: ['general.blocked-patient-create-every-type'],
  },
  {
    name: 'document-reference-merged-patient-accepted',
    area: 'general',
    violates: ['catalog.hpb-00108'],
    symptom:
      'A DocumentReference for a merged patient is created; MedicationRequest and Encounter creates for that patient are still refused with 409 HPB-00108, and a deceased patient is refused on every type.',
    checks: ['general.blocked-patient-create-every-type'],
  },
];
