/** Faults planted in the HTTP core (headers, discovery, token verification). */
import type { FaultDef } from './types.js';

export const faults: FaultDef[] = [
  {
    name: 'no-correlation-id',
    area: 'headers',
    violates: ['headers.correlation-id', 'headers.correlation-id-every-response'],
    symptom: 'Responses lack the X-Correlation-Id header.',
    checks: ['headers.correlation-id-on-success', 'headers.correlation-id-on-errors', 'headers.correlation-id-on-token-endpoint', 'headers.correlation-id-on-discovery'],
    transformResponse: (res) => ({
      ...res,
      headers: Object.fromEntries(Object.entries(res.headers).filter(([k]) => k.toLowerCase() !== 'x-correlation-id')),
    }),
  },
  {
    name: 'metadata-requires-auth',
    area: 'discovery',
    violates: ['discovery.metadata-no-auth'],
    symptom: 'GET /fhir/R4/metadata without a bearer token gives 401.',
    checks: ['discovery.metadata-without-auth'],
  },
  {
    name: 'aud-not-checked',
    area: 'auth',
    violates: ['auth.assertion-aud-checked'],
    symptom: 'The token endpoint accepts a client assertion whose aud is not the token URL.',
    checks: ['auth.assertion-wrong-aud', 'auth.assertion-missing-aud'],
  },
];
