/** Faults the run-wide invariants catch (suites/invariants): a response that breaks a rule every exchange must keep. */
import { onPath, opIs, type Json } from './edit.js';
import { doubledLimit, withoutRateLimitHeaders } from './rate-limit.js';
import type { FaultDef } from './types.js';

export const faults: FaultDef[] = [
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
