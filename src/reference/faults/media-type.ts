/**
 * Faults caught by the media-type suite: the Content-Type of some responses is
 * wrong, or a JSON write / read negotiation is refused.
 */
import type { FaultDef, FaultResponse } from './types.js';

function withContentType(res: FaultResponse, type: string): FaultResponse {
  const headers = Object.fromEntries(Object.entries(res.headers).filter(([k]) => k.toLowerCase() !== 'content-type'));
  return { ...res, headers: { ...headers, 'Content-Type': type } };
}

const isFhirPath = (path: string) => /^\/fhir\/R[45]\//.test(path);
const notAcceptable = {
  resourceType: 'OperationOutcome',
  issue: [{ severity: 'error', code: 'not-supported', diagnostics: 'Not acceptable: this endpoint answers application/json' }],
};

export const faults: FaultDef[] = [
  {
    name: 'fhir-errors-plain-json',
    area: 'media-type',
    violates: ['media-type.fhir-json'],
    symptom: 'FHIR error responses (4xx) are sent as application/json instead of application/fhir+json.',
    checks: ['media-type.fhir-responses-are-fhir-json', 'invariants.fhir-media-type'],
    transformResponse: (res, req) => (res.status >= 400 && isFhirPath(req.path) ? withContentType(res, 'application/json; charset=utf-8') : res),
  },
  {
    name: 'fhir-r5-plain-json',
    area: 'media-type',
    violates: ['media-type.fhir-json'],
    symptom: 'Every /fhir/R5 response is sent as application/json; R4 is unaffected.',
    checks: ['media-type.fhir-responses-are-fhir-json'],
    transformResponse: (res, req) => (req.path.startsWith('/fhir/R5/') ? withContentType(res, 'application/json; charset=utf-8') : res),
  },
  {
    name: 'fhir-accept-fhir-json-refused',
    area: 'media-type',
    violates: ['media-type.read-accept'],
    symptom: 'R4 reads answer 406 Not Acceptable (the server only offers application/json).',
    checks: ['media-type.read-with-accept-fhir-json'],
    transformResponse: (res, req) =>
      req.op?.interaction === 'read' && req.op.release === 'R4' && res.status === 200 ? { ...res, status: 406, body: notAcceptable } : res,
  },
  {
    name: 'fhir-json-write-refused',
    area: 'media-type',
    violates: ['media-type.write-content-type'],
    symptom: 'A create sent with Content-Type: application/fhir+json is answered 415 (the resource is stored all the same).',
    checks: ['media-type.write-with-fhir-json-accepted'],
    transformResponse: (res, req) =>
      req.op?.interaction === 'create' && res.status < 300
        ? {
            ...res,
            status: 415,
            body: { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'not-supported', diagnostics: 'Unsupported media type' }] },
          }
        : res,
  },
  {
    name: 'unsupported-media-type-plain-text',
    area: 'media-type',
    violates: ['errors.operation-outcome-shape'],
    symptom: 'A write with a non-JSON Content-Type gets a plain-text 415 body instead of an OperationOutcome.',
    checks: ['media-type.other-content-type-recorded'],
    transformResponse: (res) => (res.status === 415 ? { ...withContentType(res, 'text/plain; charset=utf-8'), body: 'Unsupported Media Type' } : res),
  },
  {
    name: 'openapi-not-json',
    area: 'media-type',
    violates: ['discovery.openapi-3-0-3'],
    symptom: '/openapi.json is a YAML document (application/yaml), not JSON.',
    checks: ['media-type.openapi-is-json'],
    transformResponse: (res, req) =>
      req.path === '/openapi.json' && res.status === 200
        ? {
            ...withContentType(res, 'application/yaml; charset=utf-8'),
            body: 'openapi: 3.0.3\ninfo:\n  title: Clinical Records FHIR Service\n  version: v1\npaths: {}\n',
          }
        : res,
  },
];
