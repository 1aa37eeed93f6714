/** Faults the run-wide invariants catch (suites/invariants): a response that breaks a rule every exchange must keep. */
import { onPath, opIs, type Json } from './edit.js';
import { rewriteIssue } from './errors.js';
import { withCorrelationId } from './headers.js';
import { doubledLimit, withoutRateLimitHeaders } from './rate-limit.js';
import type { FaultDef } from './types.js';
import { isUpdate } from './versioning.js';

/** The resource without meta.versionId (a copy; other meta members kept). */
function withoutVersionId(resource: unknown): unknown {
  if (typeof resource !== 'object' || resource === null) return resource;
  const { meta, ...rest } = resource as { meta?: Record<string, unknown> };
  if (!meta) return resource;
  const { versionId: _versionId, ...kept } = meta;
  return { ...rest, meta: kept };
}

/** One search operation's entries changed by `change` (reads and the other searches untouched). */
function searchEntries(operationId: string, change: (resource: Json) => unknown): FaultDef['transformResponse'] {
  return (res, req) => {
    const body = res.body as { resourceType?: unknown; entry?: Array<{ resource?: Json }> } | undefined;
    if (req.op?.operationId !== operationId || res.status !== 200 || body?.resourceType !== 'Bundle' || !Array.isArray(body.entry)) return res;
    return { ...res, body: { ...body, entry: body.entry.map((e) => (e.resource ? { ...e, resource: change(e.resource) } : e)) } };
  };
}

export const faults: FaultDef[] = [
  {
    name: 'encounter-search-class-display-dropped',
    area: 'invariants',
    violates: ['encounter.class-coding'],
    symptom: "The Encounter search's entries carry class without display (system and code kept); reads keep the whole Coding.",
    checks: ['invariants.encounter-shape'],
    alongside: ['pagination.next-links.encounter'],
    transformResponse: searchEntries('Encounter.search', (e) => {
      const { display: _display, ...cls } = (e.class ?? {}) as Json;
      return { ...e, class: cls };
    }),
  },
  {
    name: 'encounter-search-status-canceled',
    area: 'invariants',
    violates: ['encounter.status-values'],
    symptom: 'The Encounter search serves status cancelled as "canceled" (the US spelling); reads, and the other statuses, keep the spec\'s.',
    checks: ['invariants.encounter-shape'],
    alongside: ['pagination.next-links.encounter'],
    transformResponse: searchEntries('Encounter.search', (e) => (e.status === 'cancelled' ? { ...e, status: 'canceled' } : e)),
  },
  {
    name: 'error-issue-code-unprocessable-on-422',
    area: 'invariants',
    violates: ['errors.issue-code-fhir-issue-type'],
    symptom: '422 answers carry issue code "unprocessable" (the HTTP reason, not a FHIR issue type); other errors keep theirs.',
    checks: ['invariants.error-issue-type'],
    alongside: ['tenancy.foreign-reference-in-write'],
    transformResponse: rewriteIssue(
      (res) => res.status === 422,
      (issue) => ({ ...issue, code: 'unprocessable' }),
    ),
  },
  {
    name: 'error-severity-not-fhir-on-409',
    area: 'invariants',
    violates: ['errors.operation-outcome-shape'],
    symptom: '409 answers carry issue severity "critical", not a FHIR issue severity; other errors keep "error".',
    checks: ['invariants.error-operation-outcome'],
    alongside: ['versioning.stale-if-match-every-type'],
    transformResponse: rewriteIssue(
      (res) => res.status === 409,
      (issue) => ({ ...issue, severity: 'critical' }),
    ),
  },
  {
    name: 'correlation-id-reused-on-writes',
    area: 'invariants',
    violates: ['headers.correlation-id'],
    symptom:
      'Creates and updates are answered with one X-Correlation-Id per operation (write-MedicationRequest.create, ...); reads, searches and the token endpoint get a new one each.',
    checks: ['invariants.correlation-id-distinct'],
    alongside: ['versioning.update-response-etag'],
    transformResponse: (res, req) => {
      if (req.op === undefined || (req.op.interaction !== 'create' && req.op.interaction !== 'update')) return res;
      return withCorrelationId(res, `write-${req.op.operationId}`);
    },
  },
  {
    name: 'correlation-id-constant-on-token-endpoint',
    area: 'invariants',
    violates: ['headers.correlation-id-every-response'],
    symptom:
      'Every answer of POST /auth/token carries the same X-Correlation-Id (the authorization server in front sets its own); FHIR answers get a new one each.',
    checks: ['invariants.correlation-id-distinct'],
    alongside: ['auth.token-client-id-parameter-ignored', 'auth.assertion-other-client-identity'],
    transformResponse: (res, req) => (req.path === '/auth/token' ? withCorrelationId(res, 'auth-server') : res),
  },
  {
    name: 'correlation-id-constant-on-429',
    area: 'invariants',
    violates: ['headers.correlation-id'],
    symptom: 'Every 429 carries the same X-Correlation-Id (the rate limiter in front answers with its own constant); other answers get a new one each.',
    checks: ['invariants.correlation-id-distinct'],
    alongside: ['rate-limit.excess-gives-429'],
    transformResponse: (res) => (res.status === 429 ? withCorrelationId(res, 'rate-limited') : res),
  },
  {
    name: 'update-drops-version-id',
    area: 'invariants',
    violates: ['versioning.meta-version-id'],
    checks: ['invariants.meta-version-id'],
    alongside: ['versioning.update-response-etag'],
    symptom: "An update's answer carries the updated resource without meta.versionId (its ETag and reads keep the version).",
    transformResponse: (res, req) => (isUpdate(res, req) ? { ...res, body: withoutVersionId(res.body) } : res),
  },
  {
    name: 'search-entries-without-version-id-r5',
    area: 'invariants',
    violates: ['versioning.meta-version-id'],
    checks: ['invariants.meta-version-id'],
    alongside: ['document-reference.search-date'],
    symptom: "The R5 DocumentReference search's entries carry no meta.versionId; reads, and R4 searches, keep it.",
    transformResponse: searchEntries('DocumentReference.search', withoutVersionId),
  },
  {
    name: 'rate-limit-limit-header-wrong-r5',
    area: 'invariants',
    violates: ['rate-limit.per-key-default-60'],
    symptom:
      "The R5 surface's responses carry an X-RateLimit-Limit twice the key's ceiling (its own gateway's figure); R4's are right and the limit itself holds.",
    checks: ['invariants.rate-limit-limit-per-key'],
    transformResponse: (res, req) => (req.path.startsWith('/fhir/R5/') ? doubledLimit(res) : res),
  },
  {
    name: 'medication-request-subject-as-string',
    area: 'invariants',
    violates: ['general.fhir-json-resources'],
    symptom: 'MedicationRequest reads carry subject as a bare string, which is not valid FHIR R4.',
    checks: ['invariants.fhir-json-resources'],
    transformResponse: onPath(opIs('MedicationRequest.read'), (b) => ({ ...b, subject: (b.subject as Json | undefined)?.reference ?? 'Patient' })),
  },
  {
    name: 'correlation-id-missing-r5',
    area: 'invariants',
    violates: ['headers.correlation-id-every-response'],
    symptom: 'Responses on /fhir/R5 (the DocumentReference surface) carry no X-Correlation-Id; /fhir/R4 responses do.',
    checks: ['invariants.correlation-id-present'],
    transformResponse: (res, req) => {
      if (!req.path.startsWith('/fhir/R5/')) return res;
      const { 'X-Correlation-Id': _id, ...headers } = res.headers;
      return { ...res, headers };
    },
  },
  {
    name: 'media-type-plain-json-r5-document-reference',
    area: 'invariants',
    violates: ['media-type.fhir-json'],
    symptom:
      'Responses of the R5 DocumentReference operations are labelled application/json instead of application/fhir+json; the R4 surfaces keep the FHIR media type.',
    checks: ['invariants.fhir-media-type'],
    transformResponse: (res, req) =>
      req.op?.release === 'R5' && req.op.resource === 'DocumentReference' && res.headers['Content-Type'] !== undefined
        ? { ...res, headers: { ...res.headers, 'Content-Type': 'application/json; charset=utf-8' } }
        : res,
  },
  {
    name: 'encounter-404-without-outcome',
    area: 'invariants',
    violates: ['errors.operation-outcome-shape'],
    symptom:
      'A 404 on the Encounter paths has a bare JSON body {"error":"not found"}, not an OperationOutcome; 404s of the other resource types keep the format.',
    checks: ['invariants.error-operation-outcome'],
    transformResponse: (res, req) => (req.op?.resource === 'Encounter' && res.status === 404 ? { ...res, body: { error: 'not found' } } : res),
  },
  {
    name: 'rate-limit-headers-missing-token-endpoint',
    area: 'invariants',
    violates: ['rate-limit.headers-present'],
    symptom:
      'Answers of the token endpoint (wherever smart-configuration puts it: /auth/token, /auth/token/) carry no X-RateLimit-* headers; the FHIR answers keep them.',
    checks: ['invariants.rate-limit-headers-present'],
    transformResponse: (res, req) => (req.path === '/auth/token' || req.path === '/auth/token/' ? withoutRateLimitHeaders(res) : res),
  },
  {
    name: 'rate-limit-headers-missing-production',
    area: 'invariants',
    violates: ['rate-limit.headers-present'],
    symptom: "Responses to a production key's requests carry no X-RateLimit-* headers; sandbox keys' responses carry them.",
    checks: ['invariants.rate-limit-headers-present'],
  },
];
