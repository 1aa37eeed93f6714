/**
 * Faults of the MedicationRequest rules (the conventions checked on them are
 * faults/general.ts). Logic faults are guarded in
 * src/reference/resources/medication-request.ts; the others rewrite responses.
 */
import { CATALOG_SYSTEM } from '../../service/catalog.js';
import { catalogError, operationOutcome } from '../outcome.js';
import { eachMedicationRequest, errorResponse, hasCode, isObject, successOf } from './edit.js';
import type { FaultDef } from './types.js';

/** What a server that answers a write with a bare outcome sends instead of the resource. */
const INFO_OUTCOME = { resourceType: 'OperationOutcome', issue: [{ severity: 'information', code: 'informational', diagnostics: 'All OK' }] };

const logic = (name: string, area: string, violates: string[], symptom: string, checks: string[]): FaultDef => ({ name, area, violates, symptom, checks });

export const faults: FaultDef[] = [
  {
    name: 'mr-resource-type-wrong',
    area: 'medication-request',
    violates: ['medication-request.resource-type', 'medication-request.read-returns-resource'],
    checks: ['medication-request.read-fixture'],
    symptom: 'A MedicationRequest read answers resourceType MedicationOrder.',
    transformResponse: (res, req) => {
      if (successOf(res, req, 'read'))
        eachMedicationRequest(res, (mr) => {
          mr.resourceType = 'MedicationOrder';
        });
      return res;
    },
  },
  {
    name: 'mr-status-missing',
    area: 'medication-request',
    violates: ['medication-request.status-required'],
    checks: ['medication-request.read-fixture'],
    symptom: 'A MedicationRequest read carries no status.',
    transformResponse: (res, req) =>
      successOf(res, req, 'read')
        ? eachMedicationRequest(res, (mr) => {
            delete mr.status;
          })
        : res,
  },
  {
    name: 'mr-encounter-reference-urn',
    area: 'medication-request',
    violates: ['medication-request.encounter-reference'],
    checks: ['medication-request.search-by-encounter', 'general.reference-format'],
    symptom: 'MedicationRequest.encounter.reference is urn:uuid:<id> instead of Encounter/<uuid>.',
    transformResponse: (res) =>
      eachMedicationRequest(res, (mr) => {
        if (isObject(mr.encounter) && typeof mr.encounter.reference === 'string')
          mr.encounter.reference = mr.encounter.reference.replace(/^Encounter\//, 'urn:uuid:');
      }),
  },
  {
    name: 'mr-create-returns-outcome',
    area: 'medication-request',
    violates: ['medication-request.create-returns-resource'],
    checks: ['medication-request.create-default-status', 'medication-request.create-round-trip'],
    symptom: 'A successful MedicationRequest create answers an informational OperationOutcome instead of the resource.',
    transformResponse: (res, req) => (successOf(res, req, 'create') ? { ...res, body: structuredClone(INFO_OUTCOME) } : res),
  },
  {
    name: 'mr-update-returns-outcome',
    area: 'medication-request',
    violates: ['medication-request.update-returns-resource'],
    checks: ['medication-request.update-overlays-fhir-fields', 'medication-request.update-unchanged-round-trip'],
    symptom: 'A successful MedicationRequest update answers an informational OperationOutcome instead of the resource.',
    transformResponse: (res, req) => (successOf(res, req, 'update') ? { ...res, body: structuredClone(INFO_OUTCOME) } : res),
  },
  {
    name: 'mr-search-bundle-collection',
    area: 'medication-request',
    violates: ['medication-request.search-returns-bundle'],
    checks: ['medication-request.search-by-patient'],
    symptom: 'A MedicationRequest search answers a Bundle of type collection.',
    transformResponse: (res, req) => {
      if (successOf(res, req, 'search-type') && isObject(res.body) && res.body.resourceType === 'Bundle') res.body.type = 'collection';
      return res;
    },
  },
  logic(
    'mr-default-status-not-applied',
    'medication-request',
    ['medication-request.status-default-active'],
    'A MedicationRequest created without a status is stored as draft.',
    ['medication-request.create-default-status'],
  ),
  logic(
    'mr-intent-echoed',
    'medication-request',
    ['medication-request.intent-ignored-on-write'],
    'The intent written on create or update is stored and read back instead of order.',
    ['medication-request.intent-ignored-on-write'],
  ),
  {
    name: 'mr-intent-not-order',
    area: 'medication-request',
    violates: ['medication-request.intent-order-on-read'],
    checks: ['medication-request.read-fixture', 'medication-request.intent-ignored-on-write'],
    symptom: 'MedicationRequests read with intent plan.',
    transformResponse: (res) =>
      eachMedicationRequest(res, (mr) => {
        mr.intent = 'plan';
      }),
  },
  logic(
    'mr-unknown-status-writable',
    'medication-request',
    ['medication-request.status-unknown-not-writable', 'medication-request.create-422', 'medication-request.update-422'],
    'A create or update with status unknown is accepted.',
    ['medication-request.create-unknown-status-refused', 'medication-request.update-unknown-status-refused'],
  ),
  {
    name: 'mr-unknown-status-not-emitted',
    area: 'medication-request',
    violates: ['medication-request.status-unknown-emitted'],
    checks: ['medication-request.unknown-status-emitted'],
    symptom: 'A stored status with no FHIR spelling is emitted as stored (legacy-suspended) instead of unknown.',
    transformResponse: (res) =>
      eachMedicationRequest(res, (mr) => {
        if (mr.status === 'unknown') mr.status = 'legacy-suspended';
      }),
  },
  logic(
    'mr-medication-not-required',
    'medication-request',
    ['medication-request.medication-required'],
    'A create without medicationCodeableConcept is accepted.',
    ['medication-request.create-without-medication-refused'],
  ),
  logic(
    'mr-missing-subject-404',
    'medication-request',
    ['medication-request.subject-required', 'medication-request.create-400'],
    'A create without subject gives 404 HPB-00102 (patient not found) instead of HPB-00101.',
    ['medication-request.create-without-subject-refused'],
  ),
  logic('mr-update-schema-unchecked', 'medication-request', ['medication-request.update-400'], 'An update whose body breaks the FHIR R4 schema is accepted.', [
    'medication-request.update-invalid-body-refused',
  ]),
  {
    name: 'mr-not-found-generic-code',
    area: 'medication-request',
    violates: ['medication-request.read-404', 'medication-request.update-404', 'catalog.hpb-00102', 'catalog.hpb-00111'],
    checks: ['medication-request.read-unknown-id', 'medication-request.update-unknown-id'],
    symptom: 'An unknown MedicationRequest id gives 404 with the generic SVC-00002 instead of HPB-00102 or HPB-00111.',
    transformResponse: (res, req) => {
      if (res.status !== 404 || !req.path.startsWith('/fhir/R4/MedicationRequest/') || !isObject(res.body) || !Array.isArray(res.body.issue)) return res;
      const issue: unknown = res.body.issue[0];
      if (isObject(issue)) {
        issue.diagnostics = 'SVC-00002: Resource not found';
        issue.details = { coding: [{ system: CATALOG_SYSTEM, code: 'SVC-00002' }] };
      }
      return res;
    },
  },
  logic(
    'mr-overlay-ignored',
    'medication-request',
    ['medication-request.fhir-owned-overlay'],
    'An update keeps the stored medication, dosage, dispense, reason and notes; only status is written.',
    ['medication-request.update-overlays-fhir-fields'],
  ),
  logic(
    'mr-subject-change-accepted',
    'medication-request',
    ['medication-request.update-subject-change-422', 'medication-request.subject-immutable'],
    'An update with another subject is accepted and moves the record to that patient.',
    ['medication-request.subject-change-refused'],
  ),
  logic(
    'mr-entered-in-error-updatable',
    'medication-request',
    ['medication-request.entered-in-error-update-422', 'catalog.hpb-00140'],
    'A MedicationRequest in entered-in-error can be updated.',
    ['medication-request.entered-in-error-update-refused'],
  ),
  logic(
    'mr-signed-prescription-updatable',
    'medication-request',
    ['medication-request.signed-prescription-409', 'catalog.hpb-00114'],
    'A MedicationRequest under a signed or cancelled prescription can be updated.',
    ['medication-request.signed-prescription-update-refused'],
  ),
  logic('mr-deceased-patient-accepted', 'medication-request', ['catalog.hpb-00109'], 'A MedicationRequest can be created for a deceased patient.', [
    'medication-request.deceased-patient-create-refused',
  ]),
  logic('mr-merged-patient-accepted', 'medication-request', ['catalog.hpb-00108'], 'A MedicationRequest can be created for a merged patient.', [
    'medication-request.merged-patient-create-refused',
  ]),
  logic(
    'mr-search-patient-ignored',
    'medication-request',
    ['medication-request.search-by-patient'],
    'A search by patient returns every MedicationRequest of the organization.',
    ['medication-request.search-by-patient'],
  ),
  logic(
    'mr-search-encounter-ignored',
    'medication-request',
    ['medication-request.search-by-encounter'],
    'A search by encounter returns every MedicationRequest of the organization.',
    ['medication-request.search-by-encounter'],
  ),
  {
    name: 'mr-unknown-id-500',
    area: 'medication-request',
    violates: ['medication-request.read-404', 'medication-request.update-404'],
    checks: ['medication-request.read-unknown-id', 'medication-request.update-unknown-id'],
    symptom: 'An unknown MedicationRequest id gives 500 SVC-00001 (an unhandled lookup miss) instead of 404.',
    transformResponse: (res, req) =>
      res.status === 404 && req.op?.resource === 'MedicationRequest'
        ? { ...res, status: 500, body: operationOutcome(catalogError('SVC-00001', { status: 500 })) }
        : res,
  },
  logic(
    'mr-write-drops-dosage-timing',
    'medication-request',
    ['medication-request.fhir-owned-overlay', 'medication-request.create-read-back'],
    'Creates and updates store dosageInstruction as its text only: timing and dose are silently dropped.',
    ['medication-request.create-round-trip', 'medication-request.update-overlays-fhir-fields'],
  ),
  logic(
    'mr-create-drops-note',
    'medication-request',
    ['medication-request.create-read-back', 'medication-request.fhir-owned-overlay'],
    'A create silently drops the notes (an update keeps them).',
    ['medication-request.create-round-trip'],
  ),
  logic(
    'mr-update-loses-prescription-group',
    'medication-request',
    ['medication-request.app-only-preserved', 'medication-request.update-merge'],
    'Any update re-links the MedicationRequest to a new draft prescription: the draft-prescription grouping (groupIdentifier) is lost.',
    ['medication-request.update-unchanged-round-trip'],
  ),
  logic(
    'mr-search-stale-version',
    'medication-request',
    ['pagination.entry-is-read'],
    'Search entries show the version each MedicationRequest was created with, not the current one a read returns.',
    ['medication-request.search-entry-matches-read'],
  ),
  {
    name: 'mr-create-empty-body',
    area: 'medication-request',
    violates: ['medication-request.create-returns-resource'],
    checks: ['medication-request.create-default-status', 'medication-request.create-round-trip'],
    symptom: 'A successful MedicationRequest create answers with no body (the Location header names the new resource).',
    transformResponse: (res, req) => (successOf(res, req, 'create') ? { ...res, body: '' } : res),
  },
  {
    name: 'entered-in-error-update-500',
    area: 'medication-request',
    violates: ['medication-request.entered-in-error-update-422', 'catalog.hpb-00140'],
    checks: ['medication-request.entered-in-error-update-refused'],
    symptom: 'An update of a MedicationRequest in entered-in-error gives 500 SVC-00001, every time, instead of 422 HPB-00140; nothing is written.',
    transformResponse: (res, req) =>
      req.op?.operationId === 'MedicationRequest.update' && res.status === 422 && hasCode(res, 'HPB-00140') ? errorResponse(res, 500, 'SVC-00001') : res,
  },
  {
    name: 'signed-prescription-update-500',
    area: 'medication-request',
    violates: ['medication-request.signed-prescription-409', 'catalog.hpb-00114'],
    checks: ['medication-request.signed-prescription-update-refused'],
    symptom:
      'An update of a MedicationRequest under a signed or cancelled prescription gives 500 SVC-00001, every time, instead of 409 HPB-00114; nothing is written.',
    transformResponse: (res, req) =>
      req.op?.operationId === 'MedicationRequest.update' && res.status === 409 && hasCode(res, 'HPB-00114') ? errorResponse(res, 500, 'SVC-00001') : res,
  },
  logic(
    'mr-search-raw-status',
    'medication-request',
    ['pagination.entry-is-read', 'medication-request.status-unknown-emitted'],
    'Search entries show the stored status of a record that has no FHIR spelling (legacy-suspended) where its read shows unknown.',
    ['medication-request.fixture-search-entry-matches-read'],
  ),
  logic(
    'mr-update-drops-zero-values',
    'medication-request',
    ['medication-request.update-merge'],
    'An update loses the dispenseRequest members whose value is 0 (numberOfRepeatsAllowed: 0): a PUT of the fixture MedicationRequest as read drops it; the records the suite creates carry no zero.',
    ['medication-request.fixture-update-as-read-round-trip'],
  ),
  {
    name: 'mr-search-encounter-ignored-with-patient',
    area: 'medication-request',
    violates: ['medication-request.search-by-encounter'],
    symptom: "A MedicationRequest search by patient and encounter together ignores encounter (returns all the patient's); encounter alone filters correctly.",
    checks: ['medication-request.search-by-patient-and-encounter'],
  },
];
