/**
 * Faults caught by the auth suite: assertion checks
 * skipped, malformed token requests answered, wrong codes, the origin rule broken.
 * Logic-level faults are checked with `faults.has(name)` in src/reference/auth.ts and server.ts.
 */
import { errorResponse, hasCode, isFhirCall, issue0, recode } from './edit.js';
import type { FaultDef, FaultRequest, FaultResponse } from './types.js';
import { CATALOG_SYSTEM } from '../../service/catalog.js';

const isToken = (req: FaultRequest) => req.path === '/auth/token';

function outcomeOf(status: number, code: string, message: string, issueCode: string, res: FaultResponse, headers: Record<string, string> = {}): FaultResponse {
  return {
    status,
    headers: { ...res.headers, 'Content-Type': 'application/fhir+json; charset=utf-8', ...headers },
    body: {
      resourceType: 'OperationOutcome',
      issue: [{ severity: 'error', code: issueCode, diagnostics: `${code}: ${message}`, details: { coding: [{ system: CATALOG_SYSTEM, code }] } }],
    },
  };
}
/** A token-endpoint refusal whose diagnostics name this rule (the reference's own message for it). */
const tokenRefusal = (res: FaultResponse, req: FaultRequest, rule: string) =>
  isToken(req) && res.status === 400 && String(issue0(res)?.diagnostics ?? '').includes(rule);

const withoutContentType = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== 'content-type'));

const serverError = (res: FaultResponse) => outcomeOf(500, 'SVC-00001', 'Internal server error', 'exception', res);
const unavailable = (res: FaultResponse) => outcomeOf(503, 'SVC-00007', 'Service unavailable', 'transient', res);

export const faults: FaultDef[] = [
  {
    name: 'assertion-signature-not-checked',
    area: 'auth',
    violates: ['auth.assertion-signature-checked'],
    symptom: "An assertion whose signature does not verify with the client's key is accepted.",
    checks: ['auth.assertion-corrupted-signature', 'auth.assertion-foreign-key'],
  },
  {
    name: 'assertion-alg-none-accepted',
    area: 'auth',
    violates: ['auth.assertion-signature-checked'],
    symptom: 'An unsigned assertion (alg none) is accepted.',
    checks: ['auth.assertion-alg-none'],
  },
  {
    name: 'assertion-hs256-accepted',
    area: 'auth',
    violates: ['auth.assertion-signature-checked'],
    symptom: "An HS256 assertion is accepted without a check against the client's registered key.",
    checks: ['auth.assertion-hs256-public-key'],
  },
  {
    name: 'assertion-unknown-kid-accepted',
    area: 'auth',
    violates: ['auth.assertion-signature-checked'],
    symptom: 'An assertion whose kid names no key of the client is accepted unverified.',
    checks: ['auth.assertion-unknown-kid'],
  },
  {
    name: 'assertion-iss-not-checked',
    area: 'auth',
    violates: ['auth.assertion-iss-checked'],
    symptom: 'The client is taken from sub; any iss (or none) is accepted.',
    checks: ['auth.assertion-wrong-iss', 'auth.assertion-missing-iss'],
  },
  {
    name: 'assertion-sub-not-checked',
    area: 'auth',
    violates: ['auth.assertion-sub-checked'],
    symptom: 'An assertion whose sub is not the client is accepted.',
    checks: ['auth.assertion-wrong-sub'],
  },
  {
    name: 'assertion-exp-not-checked',
    area: 'auth',
    violates: ['auth.assertion-exp-checked'],
    symptom: 'An expired assertion is accepted.',
    checks: ['auth.assertion-expired'],
  },
  {
    name: 'assertion-exp-not-required',
    area: 'auth',
    violates: ['auth.assertion-exp-checked'],
    symptom: 'An assertion without exp is accepted.',
    checks: ['auth.assertion-missing-exp'],
  },
  {
    name: 'assertion-failure-wrong-code',
    area: 'auth',
    violates: ['auth.assertion-failure-401', 'catalog.hpb-00106'],
    symptom: 'A refused assertion gives 401 SVC-00004 instead of HPB-00106.',
    checks: ['auth.assertion-wrong-iss', 'auth.assertion-expired', 'auth.assertion-foreign-key'],
    transformResponse: (res, req) => (isToken(req) && hasCode(res, 'HPB-00106') ? recode(res, 'HPB-00106', 'SVC-00004') : res),
  },
  {
    name: 'token-errors-not-operation-outcome',
    area: 'auth',
    violates: ['errors.operation-outcome-shape'],
    symptom: 'Token endpoint errors are OAuth JSON ({ error, error_description }), not an OperationOutcome.',
    checks: ['auth.token-request-without-client-assertion', 'auth.token-request-malformed-client-assertion'],
    transformResponse: (res, req) =>
      isToken(req) && res.status >= 400
        ? {
            ...res,
            headers: { ...res.headers, 'Content-Type': 'application/json' },
            body: { error: res.status === 401 ? 'invalid_client' : 'invalid_request', error_description: String(issue0(res)?.diagnostics ?? '') },
          }
        : res,
  },
  {
    name: 'token-response-without-access-token',
    area: 'auth',
    violates: ['auth.token-response-access-token'],
    symptom: 'The token response names the token `token` instead of `access_token`.',
    checks: ['auth.token-issued-for-valid-request'],
    transformResponse: (res, req) => {
      if (!isToken(req) || res.status !== 200) return res;
      const { access_token: token, ...rest } = res.body as Record<string, unknown>;
      return { ...res, body: { ...rest, token } };
    },
  },
  {
    name: 'bearer-signature-not-checked',
    area: 'auth',
    violates: ['auth.invalid-bearer-401'],
    symptom: "A bearer token with valid claims but another key's signature is accepted.",
    checks: [
      'auth.invalid-bearer-401',
      'auth.forged-claim-changed',
      'auth.forged-tokens-on-writes',
      'auth.forged-tokens-on-updates',
      'auth.forged-tokens-on-upload',
    ],
  },
  {
    name: 'bearer-401-wrong-code',
    area: 'auth',
    violates: ['auth.bearer-401-code'],
    symptom: 'A missing or invalid bearer token gives 401 HPB-00107 (token expired) instead of SVC-00004.',
    checks: ['auth.missing-bearer-401', 'auth.invalid-bearer-401'],
    transformResponse: (res, req) => (isFhirCall(req) && res.status === 401 && hasCode(res, 'SVC-00004') ? recode(res, 'SVC-00004', 'HPB-00107') : res),
  },
  {
    name: 'new-token-refused-after-expiry',
    area: 'auth',
    violates: ['token-lifetime.new-token-after-expiry'],
    symptom: 'Once a client presented an expired token, its new tokens are refused with 401 HPB-00107 too.',
    checks: ['auth.new-token-after-expiry'],
  },
  {
    name: 'production-origin-not-enforced',
    area: 'auth',
    violates: ['auth.production-key-browser-origin-403', 'catalog.hpb-00124'],
    symptom: "A production key's token is accepted from a browser origin.",
    checks: ['auth.production-key-browser-origin-403'],
  },
  {
    name: 'sandbox-origin-refused',
    area: 'auth',
    violates: ['auth.production-key-browser-origin-403'],
    symptom: "A sandbox key's token sent with an Origin header is refused with 403 HPB-00124.",
    checks: ['auth.sandbox-key-browser-origin-allowed'],
  },
  {
    name: 'token-errors-500',
    area: 'auth',
    violates: ['auth.assertion-failure-401', 'catalog.hpb-00106', 'errors.operation-outcome-shape'],
    symptom: 'The token endpoint answers 500 SVC-00001 wherever it should refuse with a 4xx (a refused assertion, a malformed request).',
    checks: ['auth.assertion-wrong-aud', 'auth.assertion-expired', 'auth.token-request-without-client-assertion', 'auth.token-request-without-grant-type'],
    transformResponse: (res, req) => (isToken(req) && res.status >= 400 && res.status < 500 && res.status !== 429 ? serverError(res) : res),
  },
  {
    name: 'missing-token-503',
    area: 'auth',
    violates: ['auth.missing-bearer-401', 'auth.invalid-bearer-401'],
    symptom: 'A MedicationRequest read without a (valid) bearer token gets 503 SVC-00007, every time, instead of 401; other calls are served normally.',
    checks: ['auth.missing-bearer-401', 'auth.invalid-bearer-401', 'generated.medication-request-read.no-token'],
    transformResponse: (res, req) =>
      req.op?.operationId === 'MedicationRequest.read' && res.status === 401 && hasCode(res, 'SVC-00004') ? unavailable(res) : res,
  },
  {
    name: 'production-origin-wrong-code',
    area: 'auth',
    violates: ['auth.production-key-browser-origin-403', 'catalog.hpb-00124'],
    symptom: "A production key's token from a browser origin gets 403 HPB-00104 (insufficient scope) instead of HPB-00124.",
    checks: ['auth.production-key-browser-origin-403'],
    transformResponse: (res, req) => (isFhirCall(req) && hasCode(res, 'HPB-00124') ? recode(res, 'HPB-00124', 'HPB-00104') : res),
  },
  {
    name: 'key-set-unreachable-token-issued',
    area: 'auth',
    violates: ['auth.client-key-set-reachable'],
    symptom: "When the client's key-set endpoint cannot be reached, the assertion's signature is not checked and a token is issued anyway.",
    checks: ['auth.key-set-unreachable-refused'],
  },
  {
    name: 'only-first-scope-granted',
    area: 'auth',
    violates: ['auth.token-scope-parameter'],
    symptom: 'A token request for several scopes gets a token for the first one only.',
    checks: ['auth.token-grants-requested-scopes'],
  },
  {
    name: 'aud-not-checked',
    area: 'auth',
    violates: ['auth.assertion-aud-checked'],
    symptom: 'The token endpoint accepts a client assertion whose aud is not the token URL.',
    checks: ['auth.assertion-wrong-aud', 'auth.assertion-missing-aud'],
  },
  {
    name: 'token-endpoint-refuses-client-credentials',
    area: 'auth',
    violates: ['auth.client-credentials', 'auth.token-client-assertion', 'auth.token-grant-type', 'auth.token-assertion-type', 'auth.token-form-encoded'],
    symptom: 'A valid client_credentials request with a valid client assertion gets 400 and no token.',
    checks: ['auth.token-issued-for-valid-request'],
    transformResponse: (res, req) =>
      req.method === 'POST' && req.path === '/auth/token' && res.status === 200
        ? {
            status: 400,
            headers: { ...res.headers, 'content-type': 'application/fhir+json; charset=utf-8' },
            body: { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'not-supported', diagnostics: 'unsupported grant type' }] },
          }
        : res,
  },
  {
    name: 'production-origin-500',
    area: 'auth',
    violates: ['auth.production-key-browser-origin-403', 'catalog.hpb-00124'],
    symptom: "A production key's token sent from a browser origin gets 500 SVC-00001, every time, instead of 403 HPB-00124; without Origin it is served.",
    checks: ['auth.production-key-browser-origin-403'],
    transformResponse: (res, req) => (isFhirCall(req) && res.status === 403 && hasCode(res, 'HPB-00124') ? errorResponse(res, 500, 'SVC-00001') : res),
  },
  {
    name: 'assertion-sub-optional',
    area: 'auth',
    violates: ['auth.assertion-sub-checked'],
    symptom: 'sub is compared with the client only when the assertion has one: an assertion without sub gets a token.',
    checks: ['auth.assertion-missing-sub'],
  },
  {
    name: 'unregistered-client-generic-401',
    area: 'auth',
    violates: ['auth.assertion-failure-401', 'catalog.hpb-00106'],
    symptom:
      'An assertion whose iss names no registered client (an unregistered client, a wrong or missing iss) gets 401 SVC-00004 (the generic unauthorized) instead of HPB-00106; other refused assertions keep HPB-00106.',
    checks: ['auth.assertion-unregistered-client', 'auth.assertion-wrong-iss', 'auth.assertion-missing-iss'],
  },
  {
    name: 'token-wrong-grant-type-oauth-error',
    area: 'auth',
    violates: ['errors.operation-outcome-shape'],
    symptom:
      'A token request whose grant_type is not client_credentials gets the RFC 6749 error 400 { "error": "unsupported_grant_type" } (application/json), not an OperationOutcome; other token errors keep the format.',
    checks: ['auth.token-request-wrong-grant-type', 'invariants.error-operation-outcome'],
    transformResponse: (res, req) =>
      tokenRefusal(res, req, 'grant_type must be client_credentials')
        ? {
            ...res,
            headers: { ...withoutContentType(res.headers), 'Content-Type': 'application/json' },
            body: { error: 'unsupported_grant_type', error_description: 'grant_type must be client_credentials' },
          }
        : res,
  },
  {
    name: 'token-missing-assertion-type-500',
    area: 'auth',
    violates: ['auth.token-assertion-type', 'errors.operation-outcome-shape'],
    symptom: 'A token request without client_assertion_type gets 500 SVC-00001 (the missing parameter is read as if present) instead of a token or a 4xx.',
    checks: ['auth.token-request-without-assertion-type'],
  },
  {
    name: 'token-assertion-type-error-without-diagnostics',
    area: 'auth',
    violates: ['errors.operation-outcome-shape'],
    symptom:
      'A token request with another client_assertion_type gets 400 with an OperationOutcome whose issue carries its message in details.text, without diagnostics; other token errors keep the format.',
    checks: ['auth.token-request-wrong-assertion-type', 'invariants.error-operation-outcome'],
    transformResponse: (res, req) => {
      if (!tokenRefusal(res, req, 'client_assertion_type must be')) return res;
      const { diagnostics, details: _details, ...rest } = issue0(res)!;
      return { ...res, body: { resourceType: 'OperationOutcome', issue: [{ ...rest, details: { text: diagnostics } }] } };
    },
  },
  {
    name: 'token-json-body-415-empty',
    area: 'auth',
    violates: ['errors.operation-outcome-shape'],
    symptom: 'A token request that is not form-encoded (a JSON body) gets 415 with an empty body, not an OperationOutcome.',
    checks: ['auth.token-request-json-body', 'invariants.error-operation-outcome'],
    transformResponse: (res, req) =>
      tokenRefusal(res, req, 'must be application/x-www-form-urlencoded') ? { ...res, status: 415, headers: withoutContentType(res.headers), body: '' } : res,
  },
  {
    name: 'bearer-client-key-accepted',
    area: 'auth',
    violates: ['auth.access-token-issued-only', 'auth.invalid-bearer-401'],
    symptom:
      "A bearer token the server never issued, signed with a registered client's own key, is accepted (its scope claim, else the client's grant): a JWT the client wrote, or its client assertion.",
    checks: [
      'auth.forged-client-key-signed',
      'auth.forged-client-assertion-as-bearer',
      'auth.forged-tokens-on-writes',
      'auth.forged-tokens-on-updates',
      'auth.forged-tokens-on-upload',
    ],
  },
  {
    name: 'bearer-alg-none-accepted',
    area: 'auth',
    violates: ['auth.access-token-issued-only', 'auth.invalid-bearer-401'],
    symptom: "An unsigned bearer token (alg none) with the server's claims is accepted.",
    checks: ['auth.forged-alg-none', 'auth.forged-tokens-on-writes', 'auth.forged-tokens-on-updates', 'auth.forged-tokens-on-upload'],
  },
  {
    name: 'bearer-hs256-public-key-accepted',
    area: 'auth',
    violates: ['auth.access-token-issued-only', 'auth.invalid-bearer-401'],
    symptom: "A bearer token signed HS256 with the server's published public key (SPKI PEM) as the secret is accepted (the header's alg is trusted).",
    checks: ['auth.forged-hs256-public-key', 'auth.forged-tokens-on-writes', 'auth.forged-tokens-on-updates', 'auth.forged-tokens-on-upload'],
  },
  {
    name: 'bearer-unknown-kid-accepted',
    area: 'auth',
    violates: ['auth.access-token-issued-only', 'auth.invalid-bearer-401'],
    symptom: "A bearer token whose kid is not in the server's key set is accepted unverified.",
    checks: ['auth.forged-unknown-kid', 'auth.forged-tokens-on-writes', 'auth.forged-tokens-on-updates', 'auth.forged-tokens-on-upload'],
  },
  {
    name: 'bearer-embedded-jwk-accepted',
    area: 'auth',
    violates: ['auth.access-token-issued-only', 'auth.invalid-bearer-401'],
    symptom: 'A bearer token is verified with the key its own jwk header carries: an attacker-signed token is accepted.',
    checks: ['auth.forged-embedded-key', 'auth.forged-tokens-on-writes', 'auth.forged-tokens-on-updates', 'auth.forged-tokens-on-upload'],
  },
  {
    name: 'bearer-signature-not-checked-r5',
    area: 'auth',
    violates: ['auth.access-token-issued-only', 'auth.invalid-bearer-401'],
    symptom:
      "The R5 surface checks a bearer token's claims but not its signature (R4 verifies it): a forged token of the server's shape is refused on /fhir/R4 and served on /fhir/R5.",
    checks: [
      'auth.forged-client-key-signed',
      'auth.forged-alg-none',
      'auth.forged-hs256-public-key',
      'auth.forged-unknown-kid',
      'auth.forged-embedded-key',
      'auth.forged-claim-changed',
      'auth.forged-tokens-on-writes',
      'auth.forged-tokens-on-updates',
      'auth.forged-tokens-on-upload',
    ],
  },
  {
    name: 'bearer-not-verified-on-writes',
    area: 'auth',
    violates: ['auth.access-token-issued-only', 'auth.invalid-bearer-401'],
    symptom:
      "The write routes (POST, PUT) check a bearer token's claims but not its signature (reads verify it): a forged token of the server's shape is refused on every GET and accepted for a create.",
    checks: ['auth.forged-tokens-on-writes', 'auth.forged-tokens-on-updates', 'auth.forged-tokens-on-upload'],
  },
  {
    name: 'bearer-not-verified-on-updates',
    area: 'auth',
    violates: ['auth.access-token-issued-only', 'auth.invalid-bearer-401'],
    symptom:
      "The update route (PUT) checks a bearer token's claims but not its signature (reads and creates verify it): a forged token of the server's shape is refused on every GET and every create, and accepted for an update of a record it names.",
    checks: ['auth.forged-tokens-on-updates'],
  },
  {
    name: 'bearer-not-verified-on-upload',
    area: 'auth',
    violates: ['auth.access-token-issued-only', 'auth.invalid-bearer-401'],
    symptom:
      "The $upload operation checks a bearer token's claims but not its signature (reads, creates and updates verify it): a forged token of the server's shape is refused everywhere else and accepted for an upload.",
    checks: ['auth.forged-tokens-on-upload'],
  },
  {
    name: 'bearer-jku-followed',
    area: 'auth',
    violates: ['auth.access-token-issued-only', 'auth.invalid-bearer-401'],
    symptom: 'A bearer token is verified with the key set its jku header points to, wherever that is: a token signed by a key the attacker hosts is accepted.',
    checks: ['auth.forged-embedded-key'],
  },
  {
    name: 'bearer-audience-not-checked',
    area: 'auth',
    violates: ['auth.access-token-issued-only', 'auth.invalid-bearer-401'],
    symptom: "A token the server issued for one release's base (a token request's resource parameter, its aud) is accepted on the other release too.",
    checks: ['auth.forged-other-audience'],
  },
  {
    name: 'token-client-id-from-form',
    area: 'auth',
    violates: ['auth.assertion-iss-checked', 'tenancy.resources-belong-to-org'],
    symptom:
      "The token endpoint verifies the assertion, then issues the token to the client the client_id form parameter names: one client obtains another's token (and its organization's records).",
    checks: ['auth.token-client-id-parameter-ignored'],
  },
  {
    name: 'token-excess-scope-granted',
    area: 'auth',
    violates: ['auth.token-scope-parameter'],
    symptom: "Every requested scope is granted, held or not: a token request names a scope outside the client's grant and gets it.",
    checks: ['auth.token-scope-outside-grant-not-granted'],
  },
  {
    name: 'assertion-identity-from-sub',
    area: 'auth',
    violates: ['auth.assertion-sub-checked'],
    symptom: "An assertion signed with its iss client's key but whose sub names another registered client gets that other client's token.",
    checks: ['auth.assertion-other-client-identity'],
  },
  {
    name: 'production-origin-not-enforced-r5',
    area: 'auth',
    violates: ['auth.production-key-browser-origin-403', 'catalog.hpb-00124'],
    symptom: "A production key's token sent with a browser Origin is refused with 403 HPB-00124 on /fhir/R4, and served on the R5 DocumentReference paths.",
    checks: ['auth.production-key-browser-origin-403'],
  },
  {
    name: 'invalid-bearer-403-encounter',
    area: 'auth',
    violates: ['auth.invalid-bearer-401'],
    symptom: 'A bearer token that is not valid gets 403 SVC-00005 on the Encounter paths (401 SVC-00004 elsewhere; a missing token still gets 401).',
    checks: ['auth.invalid-bearer-401-every-surface'],
  },
];
