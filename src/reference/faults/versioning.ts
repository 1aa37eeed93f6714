/**
 * Faults of versioning (spec: Versioning rule 4; MedicationRequest update rules
 * 4-5; release selection by path prefix). Header and meta faults rewrite
 * responses; the If-Match and versionId faults are guarded in the
 * MedicationRequest update handler.
 */
import { errorResponse, hasCode } from './edit.js';
import type { FaultDef, FaultRequest, FaultResponse } from './types.js';

function withoutHeader(res: FaultResponse, name: string): FaultResponse {
  const headers = Object.fromEntries(Object.entries(res.headers).filter(([k]) => k.toLowerCase() !== name));
  return { ...res, headers };
}

const isRead = (res: FaultResponse, req: FaultRequest) => res.status === 200 && req.op?.interaction === 'read';
export const isUpdate = (res: FaultResponse, req: FaultRequest) => res.status < 300 && req.op?.interaction === 'update';

export const faults: FaultDef[] = [
  {
    name: 'last-modified-creation-time',
    area: 'versioning',
    violates: ['medication-request.update-response-last-modified', 'versioning.read-last-modified'],
    checks: ['versioning.last-modified-moves-with-versions'],
    symptom: "A MedicationRequest's Last-Modified names its creation on every version (reads and update answers alike); ETag and meta.versionId move.",
  },
  {
    name: 'last-modified-creation-time-other-types',
    area: 'versioning',
    violates: ['versioning.read-last-modified'],
    checks: ['versioning.last-modified-moves-every-type'],
    symptom:
      "An Encounter's and a DocumentReference's Last-Modified name their creation on every version (reads and update answers alike); MedicationRequest's moves, and ETag and meta.versionId move on every type.",
  },
  {
    name: 'etag-missing',
    area: 'versioning',
    violates: ['versioning.read-etag'],
    checks: ['versioning.read-etag'],
    symptom: 'Reads carry no ETag header.',
    transformResponse: (res, req) => (isRead(res, req) ? withoutHeader(res, 'etag') : res),
  },
  {
    name: 'last-modified-missing',
    area: 'versioning',
    violates: ['versioning.read-last-modified'],
    checks: ['versioning.read-last-modified'],
    symptom: 'Reads carry no Last-Modified header.',
    transformResponse: (res, req) => (isRead(res, req) ? withoutHeader(res, 'last-modified') : res),
  },
  {
    name: 'update-etag-missing',
    area: 'versioning',
    violates: ['medication-request.update-response-etag'],
    checks: ['versioning.update-response-etag'],
    symptom: 'Update responses carry no ETag header.',
    transformResponse: (res, req) => (isUpdate(res, req) ? withoutHeader(res, 'etag') : res),
  },
  {
    name: 'update-last-modified-missing',
    area: 'versioning',
    violates: ['medication-request.update-response-last-modified'],
    checks: ['versioning.update-response-last-modified'],
    symptom: 'Update responses carry no Last-Modified header.',
    transformResponse: (res, req) => (isUpdate(res, req) ? withoutHeader(res, 'last-modified') : res),
  },
  {
    name: 'meta-version-id-missing',
    area: 'versioning',
    violates: ['versioning.meta-version-id'],
    checks: ['versioning.meta-version-id'],
    symptom: 'Resources read by id carry meta without versionId.',
    transformResponse: (res, req) => {
      const body = res.body as { meta?: Record<string, unknown> } | undefined;
      if (isRead(res, req) && body?.meta) delete body.meta.versionId;
      return res;
    },
  },
  {
    name: 'stale-if-match-accepted',
    area: 'versioning',
    violates: ['medication-request.if-match-stale-409', 'medication-request.update-409', 'catalog.hpb-00103'],
    checks: ['versioning.stale-if-match-refused'],
    symptom: 'A MedicationRequest update with a stale If-Match is applied.',
  },
  {
    name: 'stale-if-match-accepted-document-reference',
    area: 'versioning',
    violates: ['versioning.if-match-conditional'],
    checks: ['versioning.stale-if-match-every-type'],
    symptom:
      'A DocumentReference update ignores If-Match: a stale validator is applied (2xx) and overwrites the newer version; MedicationRequest and Encounter still refuse it with 409.',
  },
  {
    name: 'encounter-etag-stuck-from-third-version',
    area: 'versioning',
    violates: ['versioning.if-match-conditional', 'versioning.read-etag'],
    checks: ['versioning.stale-if-match-every-type'],
    symptom:
      'An Encounter\'s ETag (reads and updates) stays W/"2" once it has a third version (meta.versionId still moves): a conditional update with the ETag its read returned is refused with 409 from the fourth version on.',
  },
  {
    name: 'if-match-current-refused',
    area: 'versioning',
    violates: ['medication-request.if-match-current-succeeds'],
    checks: ['versioning.if-match-current-succeeds'],
    symptom: 'Any MedicationRequest update carrying If-Match is refused with 409 HPB-00103, even with the current ETag.',
  },
  {
    name: 'version-id-not-bumped',
    area: 'versioning',
    violates: ['medication-request.update-response-etag', 'versioning.if-match-conditional'],
    checks: ['versioning.if-match-current-succeeds', 'versioning.update-response-etag'],
    symptom: 'A MedicationRequest update keeps the previous meta.versionId and ETag.',
  },
  {
    name: 'r4-metadata-declares-r5',
    area: 'versioning',
    violates: ['versioning.release-by-path-prefix'],
    checks: ['versioning.release-by-path-prefix'],
    symptom: 'GET /fhir/R4/metadata declares fhirVersion 5.0.0.',
    transformResponse: (res, req) => {
      const body = res.body as { resourceType?: unknown; fhirVersion?: unknown } | undefined;
      if (req.path === '/fhir/R4/metadata' && body?.resourceType === 'CapabilityStatement') body.fhirVersion = '5.0.0';
      return res;
    },
  },
  {
    name: 'stale-if-match-412',
    area: 'versioning',
    violates: ['medication-request.if-match-stale-409', 'catalog.hpb-00103'],
    checks: ['versioning.stale-if-match-refused'],
    symptom: 'A MedicationRequest update with a stale If-Match is refused with 412 Precondition Failed (the HTTP default) instead of 409 HPB-00103.',
  },
  {
    name: 'if-match-weak-form-refused',
    area: 'versioning',
    violates: ['medication-request.if-match-current-succeeds', 'versioning.if-match-conditional'],
    checks: ['versioning.if-match-current-succeeds'],
    symptom: 'If-Match is compared strongly: the weak ETag a read returns (W/"<v>") never matches, so every conditional update is refused with 409.',
  },
  {
    name: 'stale-if-match-500',
    area: 'versioning',
    violates: ['medication-request.if-match-stale-409', 'medication-request.update-409', 'catalog.hpb-00103'],
    checks: ['versioning.stale-if-match-refused'],
    symptom:
      'A MedicationRequest update with a stale If-Match gives 500 SVC-00001 (an unhandled version conflict), every time, instead of 409 HPB-00103; nothing is written.',
    transformResponse: (res, req) =>
      req.op?.operationId === 'MedicationRequest.update' && res.status === 409 && hasCode(res, 'HPB-00103') ? errorResponse(res, 500, 'SVC-00001') : res,
  },
  {
    name: 'versioning-update-etag-stale-from-third-version',
    area: 'versioning',
    violates: ['medication-request.update-response-etag'],
    symptom:
      "A MedicationRequest update response from the record's third version on carries the previous version's ETag (reads carry the right one); versions 1 and 2 are answered correctly.",
    checks: ['versioning.update-response-etag'],
    transformResponse: (res, req) => {
      const version = Number((res.body as { meta?: { versionId?: unknown } } | undefined)?.meta?.versionId);
      const etag = res.headers.ETag;
      if (req.op?.operationId !== 'MedicationRequest.update' || res.status >= 300 || !(version >= 3) || etag === undefined) return res;
      return { ...res, headers: { ...res.headers, ETag: etag.replace(/"[^"]*"/, `"${version - 1}"`) } };
    },
  },
];
