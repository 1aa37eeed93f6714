/**
 * Faults of the DocumentReference area (R5 surface, documents inline and through
 * `$upload`): each plants one violation of one rule, and names the checks that
 * must fail. Search faults are read by the reference's search handler through
 * `searchQueryUnderFaults` (faults/encounter.ts); the document rules read theirs in
 * resources/documents.ts, the write faults in resources/document-reference.ts.
 */
import { catalogError, operationOutcome, plainError } from '../outcome.js';
import { errorResponse, outcomeCode, recoded } from './edit.js';
import { renderBody } from '../rendering.js';
import type { FaultDef, FaultRequest, FaultResponse } from './types.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Applies `edit` to the DocumentReference body of a successful response of the operation. */
function editDocument(res: FaultResponse, req: FaultRequest, operationId: string, edit: (d: Json) => void): FaultResponse {
  if (req.op?.operationId === operationId && res.status < 300 && isObject(res.body) && res.body.resourceType === 'DocumentReference') edit(res.body);
  return res;
}

const ignoredParam = (param: string): FaultDef => ({
  name: `document-reference-search-ignores-${param}`,
  area: 'document-reference',
  violates: [`document-reference.search-${param}`],
  symptom: `DocumentReference search ignores the ${param} parameter and returns unfiltered results${param === 'patient' ? " (other patients' documents)" : ''}.`,
  checks: [`document-reference.search-${param}`],
});

/** The size checks: every way a document goes in. */
const SIZE_CHECKS = ['document-reference.size-limit-create', 'document-reference.size-limit-update', 'document-reference.size-limit-upload'];
const SIZE_RULES = ['limits.document-size-413', 'catalog.hpb-00119'];

/** A 413 HPB-00119 of a DocumentReference operation answered otherwise. */
function oversize(name: string, symptom: string, replace: (res: FaultResponse) => FaultResponse): FaultDef {
  return {
    name,
    area: 'document-reference',
    violates: SIZE_RULES,
    symptom,
    checks: SIZE_CHECKS,
    transformResponse: (res, req) =>
      req.op?.resource === 'DocumentReference' && res.status === 413 && outcomeCode(res.body) === 'HPB-00119' ? replace(res) : res,
  };
}

export const faults: FaultDef[] = [
  {
    name: 'document-reference-r5-not-served',
    area: 'document-reference',
    violates: ['general.r4-and-r5-served'],
    symptom: 'Every /fhir/R5 resource request answers 404 SVC-00002 (only R4 is served).',
    checks: ['document-reference.r4-and-r5-served', 'document-reference.read'],
    transformResponse: (res, req) => (req.path.startsWith('/fhir/R5/') && !req.path.endsWith('/metadata') ? errorResponse(res, 404, 'SVC-00002') : res),
  },
  {
    name: 'document-reference-read-without-id',
    area: 'document-reference',
    violates: ['document-reference.read'],
    symptom: 'DocumentReference read answers the resource without its id.',
    checks: ['document-reference.read'],
    transformResponse: (res, req) => editDocument(res, req, 'DocumentReference.read', (d) => delete d.id),
  },
  {
    name: 'document-reference-read-unknown-500',
    area: 'document-reference',
    violates: ['document-reference.read-404'],
    symptom: 'A read of an unknown DocumentReference id answers 500 SVC-00001 instead of 404.',
    checks: ['document-reference.read-unknown-404'],
    transformResponse: (res, req) => (req.op?.operationId === 'DocumentReference.read' && res.status === 404 ? errorResponse(res, 500, 'SVC-00001') : res),
  },
  {
    name: 'document-reference-search-bundle-collection',
    area: 'document-reference',
    violates: ['document-reference.search'],
    symptom: 'DocumentReference search answers a Bundle of type collection instead of searchset.',
    checks: ['document-reference.search'],
    transformResponse: (res, req) => {
      if (req.op?.operationId === 'DocumentReference.search' && isObject(res.body) && res.body.resourceType === 'Bundle') res.body.type = 'collection';
      return res;
    },
  },
  {
    name: 'document-reference-search-entry-without-content',
    area: 'document-reference',
    violates: ['document-reference.search'],
    symptom: 'DocumentReference search entries leave out content (a summary), unlike a read of the same version.',
    checks: ['document-reference.search-entry-equals-read'],
    transformResponse: (res, req) => {
      if (req.op?.operationId !== 'DocumentReference.search' || !isObject(res.body) || !Array.isArray(res.body.entry)) return res;
      for (const e of res.body.entry) if (isObject(e) && isObject(e.resource)) delete e.resource.content;
      return res;
    },
  },
  ...['patient', 'type', 'category'].map(ignoredParam),
  {
    name: 'document-reference-date-lt-misread',
    area: 'document-reference',
    violates: ['document-reference.search-date'],
    symptom: 'DocumentReference search reads the date prefix lt as le.',
    checks: ['document-reference.search-date'],
  },
  {
    name: 'document-reference-create-without-id',
    area: 'document-reference',
    violates: ['document-reference.create'],
    symptom: 'A successful DocumentReference create answers the resource without the server-assigned id.',
    checks: ['document-reference.create'],
    transformResponse: (res, req) => editDocument(res, req, 'DocumentReference.create', (d) => delete d.id),
  },
  {
    name: 'document-reference-create-drops-category',
    area: 'document-reference',
    violates: ['document-reference.create'],
    symptom: 'A DocumentReference create succeeds but stores it without the category it was sent.',
    checks: ['document-reference.create-read-round-trip'],
  },
  {
    name: 'document-reference-create-drops-attachment-data',
    area: 'document-reference',
    violates: ['document-reference.create'],
    symptom: 'A DocumentReference create succeeds but keeps its attachment without the bytes sent inline: no data, no url.',
    checks: ['document-reference.create-read-round-trip'],
  },
  {
    name: 'document-reference-update-drops-description',
    area: 'document-reference',
    violates: ['document-reference.update'],
    symptom: 'A successful DocumentReference update answers the resource without the description it was sent.',
    checks: ['document-reference.update'],
    transformResponse: (res, req) => editDocument(res, req, 'DocumentReference.update', (d) => delete d.description),
  },
  {
    name: 'document-reference-update-drops-category',
    area: 'document-reference',
    violates: ['document-reference.update'],
    symptom: 'A DocumentReference update succeeds but silently stores it without its category.',
    checks: ['document-reference.update', 'document-reference.update-as-read-round-trip'],
  },
  {
    name: 'document-reference-not-found-wrong-code',
    area: 'document-reference',
    violates: ['document-reference.read-404', 'catalog.hpb-00118'],
    symptom: 'An unknown DocumentReference id gives 404 with the generic SVC-00002 instead of HPB-00102/HPB-00118.',
    checks: ['document-reference.read-unknown-404'],
    transformResponse: (res, req) =>
      req.op?.resource === 'DocumentReference' && res.status === 404 && /^HPB-001(02|18)$/.test(outcomeCode(res.body) ?? '')
        ? { ...res, body: recoded(res.body, 'SVC-00002') }
        : res,
  },
  {
    name: 'document-reference-upload-refuses-valid',
    area: 'document-reference',
    violates: ['catalog.hpb-00120', 'document-reference.upload'],
    symptom: 'Every $upload, of a valid document too, is refused with 400 HPB-00120.',
    checks: ['document-reference.upload-valid-document'],
    transformResponse: (res, req) => (req.op?.operationId === 'DocumentReference.upload' && res.status < 300 ? errorResponse(res, 400, 'HPB-00120') : res),
  },
  {
    name: 'document-reference-upload-type-mismatch-accepted',
    area: 'document-reference',
    violates: ['catalog.hpb-00120'],
    symptom: 'An upload whose bytes do not match the declared type (plain text declared as application/pdf) is accepted.',
    checks: ['document-reference.upload-type-mismatch-400'],
  },
  {
    name: 'document-reference-inline-type-mismatch-accepted',
    area: 'document-reference',
    violates: ['catalog.hpb-00120'],
    symptom: 'A DocumentReference whose inline attachment.data does not match its contentType is accepted on create and update.',
    checks: ['document-reference.create-type-mismatch-400', 'document-reference.update-type-mismatch-400'],
  },
  {
    name: 'document-reference-search-date-ignored-with-type',
    area: 'document-reference',
    violates: ['document-reference.search-date'],
    symptom:
      'A DocumentReference search with patient, type and date ignores date (every document of that type is returned); date with patient alone, and type with patient alone, still filter.',
    checks: ['document-reference.search-combined-type-date'],
  },
  {
    name: 'document-reference-inline-size-not-enforced',
    area: 'document-reference',
    violates: SIZE_RULES,
    symptom:
      'A document over the size maximum sent inline (content[].attachment.data) is accepted on create and update; $upload still refuses it with 413 HPB-00119.',
    checks: ['document-reference.size-limit-create', 'document-reference.size-limit-update'],
  },
  oversize(
    'document-reference-upload-too-large-wrong-code',
    'A document over the size maximum gives 413 with HPB-00122 (the webhook code) instead of HPB-00119.',
    (res) => ({ ...res, body: recoded(res.body, 'HPB-00122') }),
  ),
  oversize(
    'document-reference-oversize-413-without-code',
    'A document over the size maximum gives 413 without a catalog code (as a proxy in front would).',
    (res) => ({ ...res, body: operationOutcome(plainError(413, 'Request entity too large', 'too-long')) }),
  ),
  oversize('document-reference-oversize-400', 'A document over the size maximum is refused with 400 HPB-00101 instead of 413 HPB-00119.', (res) =>
    errorResponse(res, 400, 'HPB-00101'),
  ),
  oversize('document-reference-oversize-422', 'A document over the size maximum is refused with 422 HPB-00101 instead of 413 HPB-00119.', (res) =>
    errorResponse(res, 422, 'HPB-00101'),
  ),
  oversize('document-reference-oversize-500', 'A document over the size maximum is answered 500 SVC-00001 instead of 413 HPB-00119.', (res) => ({
    ...res,
    status: 500,
    body: operationOutcome(catalogError('SVC-00001')),
  })),
  {
    name: 'document-reference-update-drops-date-behind-narrative',
    area: 'document-reference',
    violates: ['document-reference.update'],
    symptom:
      'Every DocumentReference answered carries a narrative regenerated on each write (as FHIR allows), and an update silently stores the resource without its date.',
    checks: ['document-reference.update', 'document-reference.update-as-read-round-trip'],
    transformResponse: (res, req) =>
      req.op?.resource === 'DocumentReference' && res.status < 300
        ? { ...res, body: renderBody(res.body, { narrative: 'regenerate', referenceDisplay: 'as-written', instantFormat: 'as-stored' }) }
        : res,
  },
  {
    name: 'tenancy-upload-foreign-instance',
    area: 'document-reference',
    violates: ['tenancy.foreign-id-404'],
    symptom:
      "An instance-level $upload to another organization's DocumentReference id replaces that record's document (200); reads, updates and searches keep to the caller's organization.",
    checks: ['document-reference.upload-foreign-instance-404'],
  },
];
