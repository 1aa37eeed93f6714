/**
 * Faults of the tenancy area: another organization's Encounter becomes visible
 * (read, search) or reachable (update), or a search that finds nothing is
 * answered with a server error. The guards live in the Encounter handlers.
 */
import { CATALOG_SYSTEM } from '../../service/catalog.js';
import { errorResponse, issue0, issueCode } from './edit.js';
import type { FaultDef } from './types.js';

export const faults: FaultDef[] = [
  {
    name: 'tenancy-attribute-search-leak',
    area: 'tenancy',
    violates: ['tenancy.resources-belong-to-org'],
    symptom:
      "An Encounter or DocumentReference search that names no patient (nor practitioner or _id), by status, class, type, category or date alone, returns every organization's matching records; a search by patient stays in the caller's organization.",
    checks: ['tenancy.attribute-search-own-records-only'],
  },
  {
    name: 'write-reference-any-organization',
    area: 'tenancy',
    violates: ['tenancy.foreign-id-404', 'tenancy.resources-belong-to-org'],
    symptom:
      "A write's references (subject, encounter, participant) are resolved in every organization: a create naming another organization's patient, encounter or practitioner is accepted, while one naming no record is refused.",
    checks: ['tenancy.foreign-reference-in-write'],
  },
  {
    name: 'write-foreign-reference-403',
    area: 'tenancy',
    violates: ['tenancy.foreign-id-404'],
    symptom:
      "A write naming another organization's patient, encounter or practitioner is refused with 403, while one naming no record gets the usual 422 HPB-00101: the caller learns the id exists elsewhere.",
    checks: ['tenancy.foreign-reference-in-write'],
  },
  {
    name: 'write-foreign-reference-500',
    area: 'tenancy',
    violates: ['tenancy.foreign-id-404'],
    symptom: "A write naming another organization's patient, encounter or practitioner answers 500 SVC-00001; one naming no record is refused as usual.",
    checks: ['tenancy.foreign-reference-in-write'],
  },
  {
    name: 'tenancy-read-leak',
    area: 'tenancy',
    violates: ['tenancy.foreign-id-404'],
    symptom: "An Encounter read by id answers another organization's Encounter.",
    checks: ['tenancy.foreign-read-404'],
  },
  {
    name: 'tenancy-update-leak',
    area: 'tenancy',
    violates: ['tenancy.foreign-id-404'],
    symptom: "An Encounter update of another organization's id is processed (no 404).",
    checks: ['tenancy.foreign-update-404'],
  },
  {
    name: 'tenancy-search-leak',
    area: 'tenancy',
    violates: ['tenancy.resources-belong-to-org'],
    symptom: "Encounter search returns other organizations' Encounters.",
    checks: ['tenancy.foreign-search-empty'],
  },
  {
    name: 'empty-encounter-search-500',
    area: 'tenancy',
    violates: ['pagination.empty-total-zero', 'tenancy.resources-belong-to-org'],
    symptom:
      "An Encounter search that finds nothing (e.g. for another organization's patient) answers 500 SVC-00001, every time, instead of an empty searchset.",
    checks: ['tenancy.foreign-search-empty'],
    transformResponse: (res, req) => {
      const body = res.body as { resourceType?: unknown; entry?: unknown[] } | undefined;
      if (req.op?.operationId !== 'Encounter.search' || res.status !== 200 || body?.resourceType !== 'Bundle' || body.entry?.length !== 0) return res;
      return {
        status: 500,
        headers: { ...res.headers, 'Content-Type': 'application/fhir+json; charset=utf-8' },
        body: {
          resourceType: 'OperationOutcome',
          issue: [
            {
              severity: 'error',
              code: 'exception',
              diagnostics: 'SVC-00001: Internal server error',
              details: { coding: [{ system: CATALOG_SYSTEM, code: 'SVC-00001' }] },
            },
          ],
        },
      };
    },
  },
  {
    name: 'not-found-500',
    area: 'tenancy',
    violates: ['catalog.hpb-00102', 'tenancy.foreign-id-404'],
    symptom: "Every 404 HPB-00102 (an unknown id, another organization's id) is answered 500 SVC-00001, every time; other requests are served normally.",
    checks: ['tenancy.foreign-read-404', 'headers.correlation-id-on-errors'],
    transformResponse: (res) => {
      const issue = issue0(res);
      if (res.status !== 404 || issueCode(issue) !== 'HPB-00102') return res;
      const coding = [{ ...issue!.details?.coding?.[0], code: 'SVC-00001' }];
      return {
        ...res,
        status: 500,
        body: {
          resourceType: 'OperationOutcome',
          issue: [{ severity: 'error', code: 'exception', diagnostics: 'SVC-00001: Internal server error', details: { coding } }],
        },
      };
    },
  },
  {
    name: 'tenancy-foreign-update-500',
    area: 'tenancy',
    violates: ['tenancy.foreign-id-404', 'catalog.hpb-00102'],
    symptom:
      "An update of an id the caller's organization does not have (another organization's record, or an unknown id) gives 500 SVC-00001, every time, instead of 404; nothing is written, reads still give 404.",
    checks: ['tenancy.foreign-update-404'],
    transformResponse: (res, req) => (req.op?.interaction === 'update' && res.status === 404 ? errorResponse(res, 500, 'SVC-00001') : res),
  },
  {
    name: 'tenancy-if-match-409-leak',
    area: 'tenancy',
    violates: ['tenancy.foreign-id-404'],
    symptom:
      "A MedicationRequest update of another organization's id with a stale If-Match gets 409 HPB-00103 (the validator is compared with that organization's record), revealing that the id exists; without If-Match it is still 404.",
    checks: ['tenancy.foreign-update-if-match-404'],
  },
  {
    name: 'tenancy-if-match-409-leak-encounter',
    area: 'tenancy',
    violates: ['tenancy.foreign-id-404'],
    symptom:
      "An Encounter update of another organization's id with a stale If-Match gets 409 HPB-00103, revealing that the id exists; MedicationRequest and DocumentReference give 404, and without If-Match the Encounter is 404 too.",
    checks: ['tenancy.foreign-update-if-match-404'],
  },
  {
    name: 'tenancy-cursor-replay',
    area: 'tenancy',
    violates: ['tenancy.resources-belong-to-org'],
    symptom:
      "A MedicationRequest next link obtained by one organization and followed with another organization's token serves the first organization's next page (the cursor's organization is used, not the caller's).",
    checks: ['tenancy.foreign-cursor-refused'],
  },
  {
    name: 'tenancy-cursor-replay-reverse',
    area: 'tenancy',
    violates: ['tenancy.resources-belong-to-org'],
    symptom:
      "A MedicationRequest next link obtained by the second organization and followed with the main organization's token serves the second organization's next page; the main organization's cursors followed by the second are refused (400).",
    checks: ['tenancy.foreign-cursor-refused'],
  },
  {
    name: 'tenancy-encounter-search-leak',
    area: 'tenancy',
    violates: ['tenancy.resources-belong-to-org'],
    symptom:
      "A MedicationRequest search by encounter alone returns the MedicationRequests of that Encounter in every organization; searches by patient, reads and updates keep to the caller's organization.",
    checks: ['tenancy.foreign-search-empty'],
  },
  {
    name: 'tenancy-upload-foreign-patient',
    area: 'tenancy',
    violates: ['tenancy.foreign-id-404'],
    symptom:
      "A type-level $upload naming another organization's patient (here in its query, ?patient=<id>) creates a DocumentReference on that patient (200), while one naming a patient that exists nowhere is refused; creates, reads and searches keep to the caller's organization.",
    checks: ['tenancy.foreign-patient-in-upload'],
    modes: { uploadContract: 'type-query-raw' },
  },
];
