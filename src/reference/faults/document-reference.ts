/**
 * Faults of the DocumentReference area (R5 surface and `$upload`): each plants
 * one violation of one rule. Search faults are read by the reference's search
 * handler through `searchQueryUnderFaults` (faults/encounter.ts).
 */
import { errorResponse, outcomeCode, recoded } from './encounter.js';
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
  symptom: `DocumentReference search ignores the ${param} parameter and returns unfiltered results.`,
});

export const faults: FaultDef[] = [
  {
    name: 'document-reference-r5-not-served',
    area: 'document-reference',
    violates: ['general.r4-and-r5-served'],
    symptom: 'Every /fhir/R5 resource request answers 404 SVC-00002 (only R4 is served).',
    transformResponse: (res, req) =>
      req.path.startsWith('/fhir/R5/') && !req.path.endsWith('/metadata') ? errorResponse(res, 404, 'SVC-00002') : res,
  },
  {
    name: 'document-reference-read-without-id',
    area: 'document-reference',
    violates: ['document-reference.read'],
    symptom: 'DocumentReference read answers the resource without its id.',
    transformResponse: (res, req) => editDocument(res, req, 'DocumentReference.read', (d) => delete d.id),
  },
  {
    name: 'document-reference-search-bundle-collection',
    area: 'document-reference',
    violates: ['document-reference.search'],
    symptom: 'DocumentReference search answers a Bundle of type collection instead of searchset.',
    transformResponse: (res, req) => {
      if (req.op?.operationId === 'DocumentReference.search' && isObject(res.body) && res.body.resourceType === 'Bundle') res.body.type = 'collection';
      return res;
    },
  },
  ...['patient', 'type', 'category'].map(ignoredParam),
  {
    name: 'document-reference-date-lt-misread',
    area: 'document-reference',
    violates: ['document-reference.search-date'],
    symptom: 'DocumentReference search reads the date prefix lt as le.',
  },
  {
    name: 'document-reference-create-without-id',
    area: 'document-reference',
    violates: ['document-reference.create'],
    symptom: 'A successful DocumentReference create answers the resource without the server-assigned id.',
    transformResponse: (res, req) => editDocument(res, req, 'DocumentReference.create', (d) => delete d.id),
  },
  {
    name: 'document-reference-update-drops-description',
    area: 'document-reference',
    violates: ['document-reference.update'],
    symptom: 'A successful DocumentReference update answers the resource without the description it was sent.',
    transformResponse: (res, req) => editDocument(res, req, 'DocumentReference.update', (d) => delete d.description),
  },
  {
    name: 'document-reference-not-found-wrong-code',
    area: 'document-reference',
    violates: ['document-reference.read-404', 'catalog.hpb-00118'],
    symptom: 'An unknown DocumentReference id gives 404 with the generic SVC-00002 instead of HPB-00102/HPB-00118.',
    transformResponse: (res, req) =>
      req.op?.resource === 'DocumentReference' && res.status === 404 && /^HPB-001(02|18)$/.test(outcomeCode(res.body) ?? '')
        ? { ...res, body: recoded(res.body, 'SVC-00002') }
        : res,
  },
  {
    name: 'document-reference-upload-refuses-valid',
    area: 'document-reference',
    violates: ['catalog.hpb-00120'],
    symptom: 'A valid small PDF upload is refused with 400 HPB-00120.',
    transformResponse: (res, req) => (req.op?.operationId === 'DocumentReference.upload' && res.status < 300 ? errorResponse(res, 400, 'HPB-00120') : res),
  },
  {
    name: 'document-reference-upload-type-mismatch-accepted',
    area: 'document-reference',
    violates: ['catalog.hpb-00120'],
    symptom: 'An upload whose bytes do not match the declared Content-Type (plain text declared as application/pdf) is accepted.',
  },
  {
    name: 'document-reference-upload-too-large-wrong-code',
    area: 'document-reference',
    violates: ['catalog.hpb-00119'],
    symptom: 'An upload over the document size maximum gives 413 with HPB-00122 (the webhook code) instead of HPB-00119.',
    transformResponse: (res) => (res.status === 413 && outcomeCode(res.body) === 'HPB-00119' ? { ...res, body: recoded(res.body, 'HPB-00122') } : res),
  },
];
