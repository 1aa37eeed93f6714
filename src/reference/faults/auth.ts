/**
 * Faults caught by the auth suite (and the token-lifetime expiry checks): assertion checks
 * skipped, malformed token requests answered, wrong codes, the origin rule broken.
 * Logic-level faults are checked with `faults.has(name)` in src/reference/auth.ts and server.ts.
 */
import type { FaultDef, FaultRequest, FaultResponse } from './types.js';
import { CATALOG_SYSTEM } from '../../spec/catalog.js';

interface Issue {
  code?: unknown;
  diagnostics?: unknown;
  details?: { coding?: Array<{ code?: unknown }> };
}

function firstIssue(body: unknown): Issue | undefined {
  return (body as { issue?: Issue[] } | undefined)?.issue?.[0];
}

function hasCode(res: FaultResponse, code: string): boolean {
  return firstIssue(res.body)?.details?.coding?.some((c) => c.code === code) ?? false;
}

/** The same error with another catalog code (diagnostics prefix and details.coding). */
function recode(res: FaultResponse, from: string, to: string): FaultResponse {
  const outcome = res.body as { issue: Issue[] };
  const [issue, ...rest] = outcome.issue;
  const diagnostics = String(issue!.diagnostics).replace(`${from}: `, `${to}: `);
  return { ...res, body: { ...outcome, issue: [{ ...issue, diagnostics, details: { coding: [{ system: CATALOG_SYSTEM, code: to }] } }, ...rest] } };
}

const isToken = (req: FaultRequest) => req.path === '/auth/token';
const isFhirCall = (req: FaultRequest) => req.op !== undefined;

export const faults: FaultDef[] = [
  { name: 'assertion-signature-not-checked', area: 'auth', violates: ['auth.assertion-signature-checked'], symptom: 'An assertion whose signature does not verify with the client\'s key is accepted.' },
  { name: 'assertion-alg-none-accepted', area: 'auth', violates: ['auth.assertion-signature-checked'], symptom: 'An unsigned assertion (alg none) is accepted.' },
  { name: 'assertion-hs256-accepted', area: 'auth', violates: ['auth.assertion-signature-checked'], symptom: 'An HS256 assertion is accepted without a check against the client\'s registered key.' },
  { name: 'assertion-unknown-kid-accepted', area: 'auth', violates: ['auth.assertion-signature-checked'], symptom: 'An assertion whose kid names no key of the client is accepted unverified.' },
  { name: 'assertion-iss-not-checked', area: 'auth', violates: ['auth.assertion-iss-checked'], symptom: 'The client is taken from sub; any iss (or none) is accepted.' },
  { name: 'assertion-sub-not-checked', area: 'auth', violates: ['auth.assertion-sub-checked'], symptom: 'An assertion whose sub is not the client is accepted.' },
  { name: 'assertion-exp-not-checked', area: 'auth', violates: ['auth.assertion-exp-checked'], symptom: 'An expired assertion is accepted.' },
  { name: 'assertion-exp-not-required', area: 'auth', violates: ['auth.assertion-exp-checked'], symptom: 'An assertion without exp is accepted.' },
  {
    name: 'assertion-failure-wrong-code',
    area: 'auth',
    violates: ['auth.assertion-failure-401', 'catalog.hpb-00106'],
    symptom: 'A refused assertion gives 401 SVC-00004 instead of HPB-00106.',
    transformResponse: (res, req) => (isToken(req) && hasCode(res, 'HPB-00106') ? recode(res, 'HPB-00106', 'SVC-00004') : res),
  },
  {
    name: 'token-errors-not-operation-outcome',
    area: 'auth',
    violates: ['errors.operation-outcome-shape'],
    symptom: 'Token endpoint errors are OAuth JSON ({ error, error_description }), not an OperationOutcome.',
    transformResponse: (res, req) =>
      isToken(req) && res.status >= 400
        ? { ...res, headers: { ...res.headers, 'Content-Type': 'application/json' }, body: { error: res.status === 401 ? 'invalid_client' : 'invalid_request', error_description: String(firstIssue(res.body)?.diagnostics ?? '') } }
        : res,
  },
  { name: 'token-request-params-not-checked', area: 'auth', violates: ['auth.token-grant-type', 'auth.token-assertion-type'], symptom: 'A token request with a missing or wrong grant_type or client_assertion_type still gets a token.' },
  { name: 'token-request-json-accepted', area: 'auth', violates: ['auth.token-form-encoded'], symptom: 'A JSON token request body is read like a form and gets a token.' },
  {
    name: 'token-response-without-access-token',
    area: 'auth',
    violates: ['auth.token-response-access-token'],
    symptom: 'The token response names the token `token` instead of `access_token`.',
    transformResponse: (res, req) => {
      if (!isToken(req) || res.status !== 200) return res;
      const { access_token: token, ...rest } = res.body as Record<string, unknown>;
      return { ...res, body: { ...rest, token } };
    },
  },
  { name: 'bearer-signature-not-checked', area: 'auth', violates: ['auth.invalid-bearer-401'], symptom: 'A bearer token with valid claims but another key\'s signature is accepted.' },
  {
    name: 'bearer-401-wrong-code',
    area: 'auth',
    violates: ['auth.bearer-401-code'],
    symptom: 'A missing or invalid bearer token gives 401 HPB-00107 (token expired) instead of SVC-00004.',
    transformResponse: (res, req) => (isFhirCall(req) && res.status === 401 && hasCode(res, 'SVC-00004') ? recode(res, 'SVC-00004', 'HPB-00107') : res),
  },
  {
    name: 'expired-token-wrong-code',
    area: 'token-lifetime',
    violates: ['token-lifetime.expired-401-hpb-00107', 'catalog.hpb-00107'],
    symptom: 'An expired access token gives 401 SVC-00004 instead of HPB-00107.',
    transformResponse: (res, req) => (isFhirCall(req) && hasCode(res, 'HPB-00107') ? recode(res, 'HPB-00107', 'SVC-00004') : res),
  },
  { name: 'new-token-refused-after-expiry', area: 'auth', violates: ['token-lifetime.new-token-after-expiry'], symptom: 'Once a client presented an expired token, its new tokens are refused with 401 HPB-00107 too.' },
  { name: 'production-origin-not-enforced', area: 'auth', violates: ['auth.production-key-browser-origin-403', 'catalog.hpb-00124'], symptom: 'A production key\'s token is accepted from a browser origin.' },
  { name: 'sandbox-origin-refused', area: 'auth', violates: ['auth.production-key-browser-origin-403'], symptom: 'A sandbox key\'s token sent with an Origin header is refused with 403 HPB-00124.' },
  {
    name: 'key-set-unreachable-token-issued',
    area: 'auth',
    violates: ['auth.client-key-set-reachable'],
    symptom: "When the client's key-set endpoint cannot be reached, the assertion's signature is not checked and a token is issued anyway.",
    checks: ['auth.key-set-unreachable-refused'],
  },
  { name: 'only-first-scope-granted', area: 'auth', violates: ['auth.token-scope-parameter'], symptom: 'A token request for several scopes gets a token for the first one only.' },
];
