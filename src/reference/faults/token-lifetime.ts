/** Faults of the token lifetime (suites/token-lifetime): tokens that end early or are refused with the wrong code once expired. */
import { errorResponse, hasCode, isFhirCall, recode } from './edit.js';
import type { FaultDef } from './types.js';

export const faults: FaultDef[] = [
  {
    name: 'access-token-dies-early',
    area: 'token-lifetime',
    violates: ['token-lifetime.five-minutes'],
    symptom: 'Access tokens expire at a third of their lifetime (expires_in still announces the full lifetime).',
    checks: ['token-lifetime.valid-before-expiry'],
  },
  {
    name: 'expired-token-wrong-code',
    area: 'token-lifetime',
    violates: ['token-lifetime.expired-401-hpb-00107', 'catalog.hpb-00107'],
    symptom: 'An expired access token gives 401 SVC-00004 instead of HPB-00107.',
    checks: ['token-lifetime.expired-token-refused'],
    transformResponse: (res, req) => (isFhirCall(req) && hasCode(res, 'HPB-00107') ? recode(res, 'HPB-00107', 'SVC-00004') : res),
  },
  {
    name: 'expired-token-503',
    area: 'token-lifetime',
    violates: ['token-lifetime.expired-401-hpb-00107', 'catalog.hpb-00107'],
    symptom:
      'A FHIR request with an expired access token gets 503 SVC-00007 (no Retry-After), every time, instead of 401 HPB-00107; valid tokens are served normally.',
    checks: ['token-lifetime.expired-token-refused'],
    transformResponse: (res, req) => (isFhirCall(req) && res.status === 401 && hasCode(res, 'HPB-00107') ? errorResponse(res, 503, 'SVC-00007') : res),
  },
  {
    name: 'expired-token-accepted-r5',
    area: 'token-lifetime',
    violates: ['token-lifetime.expired-401-hpb-00107', 'catalog.hpb-00107'],
    symptom: 'An expired access token is refused with 401 HPB-00107 on /fhir/R4, and served as a valid one on /fhir/R5 (the DocumentReference surface).',
    checks: ['token-lifetime.expired-token-refused'],
  },
  {
    name: 'token-refused-before-expiry-r5',
    area: 'token-lifetime',
    violates: ['token-lifetime.five-minutes'],
    symptom: 'On the /fhir/R5 paths an access token is refused with 401 HPB-00107 once half its lifetime has passed (R4 keeps it for the whole lifetime).',
    checks: ['token-lifetime.valid-before-expiry'],
  },
];
