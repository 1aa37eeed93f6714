/** Faults caught by the headers suite: X-Correlation-Id missing on one kind of response, or reused. */
import type { FaultDef, FaultRequest, FaultResponse } from './types.js';

const CORRELATION_ID = 'x-correlation-id';

export function withoutCorrelationId(res: FaultResponse): FaultResponse {
  return { ...res, headers: Object.fromEntries(Object.entries(res.headers).filter(([k]) => k.toLowerCase() !== CORRELATION_ID)) };
}

/** The response with X-Correlation-Id set to `value` (whatever spelling it had). */
export function withCorrelationId(res: FaultResponse, value: string): FaultResponse {
  const stripped = withoutCorrelationId(res);
  return { ...stripped, headers: { ...stripped.headers, 'X-Correlation-Id': value } };
}

function isDiscovery(path: string): boolean {
  return path === '/openapi.json' || path.startsWith('/fhir/.well-known/') || /^\/fhir\/R[45]\/metadata$/.test(path);
}

function dropWhen(when: (res: FaultResponse, req: FaultRequest) => boolean): FaultDef['transformResponse'] {
  return (res, req) => (when(res, req) ? withoutCorrelationId(res) : res);
}

export const faults: FaultDef[] = [
  {
    name: 'correlation-id-missing-on-errors',
    area: 'headers',
    violates: ['headers.correlation-id-every-response'],
    symptom: 'Error responses (4xx, 5xx) lack X-Correlation-Id; successes keep it.',
    checks: ['headers.correlation-id-on-errors', 'invariants.correlation-id-present'],
    transformResponse: dropWhen((res) => res.status >= 400),
  },
  {
    name: 'correlation-id-missing-on-success',
    area: 'headers',
    violates: ['headers.correlation-id'],
    symptom: 'Successful FHIR responses lack X-Correlation-Id; errors, discovery and the token endpoint keep it.',
    checks: ['headers.correlation-id-on-success'],
    transformResponse: dropWhen((res, req) => res.status < 400 && req.op !== undefined),
  },
  {
    name: 'correlation-id-missing-on-token-endpoint',
    area: 'headers',
    violates: ['headers.correlation-id-every-response'],
    symptom: 'Responses of POST /auth/token lack X-Correlation-Id.',
    checks: ['headers.correlation-id-on-token-endpoint'],
    transformResponse: dropWhen((_res, req) => req.path === '/auth/token'),
  },
  {
    name: 'correlation-id-missing-on-discovery',
    area: 'headers',
    violates: ['headers.correlation-id-every-response'],
    symptom: 'Discovery documents (metadata, /openapi.json, .well-known) lack X-Correlation-Id.',
    checks: ['headers.correlation-id-on-discovery'],
    transformResponse: dropWhen((_res, req) => isDiscovery(req.path)),
  },
  {
    name: 'correlation-id-constant',
    area: 'headers',
    violates: ['headers.correlation-id'],
    symptom: 'Every response carries the same X-Correlation-Id value.',
    checks: ['headers.correlation-id-distinct'],
    transformResponse: (res) => withCorrelationId(res, 'correlation-id'),
  },
  {
    name: 'correlation-id-empty-on-errors',
    area: 'headers',
    violates: ['headers.correlation-id-every-response'],
    symptom: 'Error responses carry X-Correlation-Id with an empty value.',
    checks: ['headers.correlation-id-on-errors'],
    transformResponse: (res) => (res.status < 400 ? res : withCorrelationId(res, '')),
  },
  {
    name: 'no-correlation-id',
    area: 'headers',
    violates: ['headers.correlation-id', 'headers.correlation-id-every-response'],
    symptom: 'Responses lack the X-Correlation-Id header.',
    checks: [
      'headers.correlation-id-on-success',
      'headers.correlation-id-on-errors',
      'headers.correlation-id-on-token-endpoint',
      'headers.correlation-id-on-discovery',
    ],
    transformResponse: (res) => ({
      ...res,
      headers: Object.fromEntries(Object.entries(res.headers).filter(([k]) => k.toLowerCase() !== 'x-correlation-id')),
    }),
  },
];
