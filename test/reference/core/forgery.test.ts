/** The reference's access tokens against forgeries: mode accessTokenClaims, the bearer-* faults, the forwarding-header fault. */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { decodeJwt } from 'jose';
import type { ReferenceServer } from '../../../src/reference/server.js';
import { issuanceKey } from '../../../src/reference/faults/issuance-limit.js';
import { accessToken, call, codeOf } from './helpers.js';
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
