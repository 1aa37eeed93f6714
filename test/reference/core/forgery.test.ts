/** The reference's access tokens against forgeries: modes accessTokenClaims, accessTokenFormat and resourceIndicator, the bearer-* faults, the forwarding-header fault. */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { compactVerify, createLocalJWKSet, decodeJwt, decodeProtectedHeader } from 'jose';
import type { ReferenceServer } from '../../../src/reference/server.js';
import type { ReferenceOptions } from '../../../src/reference/types.js';
import { issuanceKey } from '../../../src/reference/faults/issuance-limit.js';
import { ASSERTION_TYPE, accessToken, call, clientKey, codeOf, signAssertion, tokenRequest } from './helpers.js';
import { startStub } from './helpers.js';

const FHIR = { accept: 'application/fhir+json' };
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

describe('accessTokenClaims=minimal', () => {
  let server: ReferenceServer;
  beforeAll(async () => {
    server = await startStub({ modes: { accessTokenClaims: 'minimal' }, limits: { tokenIssuancePerWindow: 1000 } });
  });
  afterAll(() => server.close());

  test('the token carries only registered claims, and the grant kept on the server still applies', async () => {
    const token = await accessToken(server, 'main', 'system/MedicationRequest.rs');
    expect(Object.keys(decodeJwt(token)).sort()).toEqual(['aud', 'exp', 'iat', 'iss', 'jti', 'sub']);
    expect((await call(`${server.url}/fhir/R4/MedicationRequest/x`, { headers: { ...FHIR, authorization: `Bearer ${token}` } })).status).toBe(200);
    // Encounter.rs is not in this token's grant.
    const other = await call(`${server.url}/fhir/R4/Encounter/x`, { headers: { ...FHIR, authorization: `Bearer ${token}` } });
    expect([other.status, codeOf(other)]).toEqual([403, 'HPB-00104']);
  });
});

describe('accessTokenFormat=opaque', () => {
  let server: ReferenceServer;
  beforeAll(async () => {
    server = await startStub({ modes: { accessTokenFormat: 'opaque' }, limits: { tokenIssuancePerWindow: 1000 } });
  });
  afterAll(() => server.close());

  test('the token is a JWS without a claim set that jwks.json verifies; its grant is kept on the server', async () => {
    const token = await accessToken(server, 'main', 'system/MedicationRequest.rs');
    expect(decodeProtectedHeader(token).alg).toBe('ES256');
    expect(() => decodeJwt(token)).toThrow();
    const jwks = (await call(`${server.url}/fhir/.well-known/jwks.json`)).json;
    await expect(compactVerify(token, createLocalJWKSet(jwks))).resolves.toBeDefined();
    const auth = { ...FHIR, authorization: `Bearer ${token}` };
    expect((await call(`${server.url}/fhir/R4/MedicationRequest/x`, { headers: auth })).status).toBe(200);
    const other = await call(`${server.url}/fhir/R4/Encounter/x`, { headers: auth });
    expect([other.status, codeOf(other)]).toEqual([403, 'HPB-00104']);
    // Another handle under the same header: never issued.
    const [header, , signature] = token.split('.');
    const forged = `${header}.${Buffer.from('another handle').toString('base64url')}.${signature}`;
    expect((await call(`${server.url}/fhir/R4/MedicationRequest/x`, { headers: { ...FHIR, authorization: `Bearer ${forged}` } })).status).toBe(401);
  });
});

/** A token of main's for MedicationRequest and DocumentReference reads, requested for `resource` (RFC 8707). */
async function tokenFor(server: ReferenceServer, resource: string): Promise<string> {
  const res = await tokenRequest(server, {
    grant_type: 'client_credentials',
    client_assertion_type: ASSERTION_TYPE,
    client_assertion: await signAssertion(server, await clientKey(server, 'main'), {}, {}, Date.now()),
    scope: 'system/MedicationRequest.rs system/DocumentReference.rs',
    resource,
  });
  expect(res.status).toBe(200);
  return res.json.access_token as string;
}

describe('resource indicators (mode resourceIndicator)', () => {
  test("a token for one release's base serves that release only; ignored, the service's token; fault bearer-audience-not-checked serves both", async () => {
    const cases: Array<[ReferenceOptions, string, number, number]> = [
      [{}, 'release', 200, 401],
      [{ modes: { resourceIndicator: 'ignored' } }, 'ignored', 200, 200],
      [{ faults: ['bearer-audience-not-checked'] }, 'fault', 200, 200],
    ];
    for (const [opts, label, r4, r5] of cases) {
      const server = await startStub({ ...opts, limits: { tokenIssuancePerWindow: 1000 } });
      try {
        const token = await tokenFor(server, `${server.url}/fhir/R4`);
        expect(decodeJwt(token).aud, label).toBe(label === 'ignored' ? `${server.url}/fhir` : `${server.url}/fhir/R4`);
        const auth = { ...FHIR, authorization: `Bearer ${token}` };
        expect((await call(`${server.url}/fhir/R4/MedicationRequest/x`, { headers: auth })).status, label).toBe(r4);
        expect((await call(`${server.url}/fhir/R5/DocumentReference/x`, { headers: auth })).status, label).toBe(r5);
      } finally {
        await server.close();
      }
    }
  });
});

describe('bearer faults', () => {
  test('bearer-alg-none-accepted serves an unsigned copy of a token; the clean reference refuses it with 401', async () => {
    for (const [faults, status] of [
      [[], 401],
      [['bearer-alg-none-accepted'], 200],
    ] as const) {
      const server = await startStub({ faults: [...faults], limits: { tokenIssuancePerWindow: 1000 } });
      try {
        const [header, claims] = (await accessToken(server, 'main', 'system/MedicationRequest.rs')).split('.');
        const unsigned = `${b64({ ...JSON.parse(Buffer.from(header!, 'base64url').toString()), alg: 'none' })}.${claims}.`;
        const res = await call(`${server.url}/fhir/R4/MedicationRequest/x`, { headers: { ...FHIR, authorization: `Bearer ${unsigned}` } });
        expect(res.status, faults.join() || 'clean').toBe(status);
      } finally {
        await server.close();
      }
    }
  });
});

describe('issuanceKey', () => {
  const faults = new Set(['issuance-limit-keyed-by-forwarded-for']);
  test('the socket address, unless the fault is planted', () => {
    expect(issuanceKey(new Set(), '127.0.0.1', { 'x-forwarded-for': '203.0.113.9' })).toBe('127.0.0.1');
    expect(issuanceKey(faults, '127.0.0.1', { 'x-forwarded-for': '203.0.113.9, 10.0.0.1' })).toBe('203.0.113.9');
    expect(issuanceKey(faults, '127.0.0.1', { 'x-real-ip': '198.51.100.4' })).toBe('198.51.100.4');
    expect(issuanceKey(faults, '127.0.0.1', { forwarded: 'for=192.0.2.7;proto=https' })).toBe('192.0.2.7');
    expect(issuanceKey(faults, '127.0.0.1', {})).toBe('127.0.0.1');
  });
});
