import { createPublicKey } from 'node:crypto';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { ASSERTION_LIFETIME_SEC, createAssertion, foreignKey, publicKeyPem } from '../../src/auth/assertion.js';
import { SIGNING_ALGS, type SigningAlg } from '../../src/auth/algorithms.js';
import type { ResolvedClient } from '../../src/config/index.js';
import { redactString } from '../../src/redact.js';
import { testClient } from './helpers.js';

const AUD = 'https://target.example/auth/token';
let es: ResolvedClient;
let rs: ResolvedClient;

beforeAll(() => {
  es = testClient('main', 'ES384');
  rs = testClient('extra', 'RS384');
});

async function verifyWithClientKey(jwt: string, client: ResolvedClient) {
  return jwtVerify(jwt, await importJWK(client.publicJwk, client.alg), { algorithms: [client.alg], audience: AUD, issuer: client.clientId });
}

describe('createAssertion', () => {
  for (const alg of ['ES384', 'RS384'] as const) {
    it(`${alg}: carries iss = sub = clientId, aud, iat, exp = iat + 60 s, jti, and verifies against the public JWK`, async () => {
      const client = alg === 'ES384' ? es : rs;
      const now = Date.UTC(2030, 0, 1, 12, 0, 0);
      const jwt = await createAssertion(client, AUD, {}, Date.now());
      const { payload, protectedHeader } = await verifyWithClientKey(jwt, client);
      expect(protectedHeader).toEqual({ alg, kid: client.kid, typ: 'JWT' });
      expect(payload.sub).toBe(client.clientId);
      expect(payload.exp! - payload.iat!).toBe(ASSERTION_LIFETIME_SEC);
      expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);

      const fixed = decodeJwt(await createAssertion(client, AUD, {}, now));
      expect(fixed.iat).toBe(now / 1000);
      expect(fixed.exp).toBe(now / 1000 + 60);
    });
  }

  it('uses a new jti every time', async () => {
    const jtis = new Set<unknown>();
    for (let i = 0; i < 20; i++) jtis.add(decodeJwt(await createAssertion(es, AUD)).jti);
    expect(jtis.size).toBe(20);
  });

  it('the assertion never reaches output: redacted wherever it appears (by its JWT shape)', async () => {
    const jwt = await createAssertion(es, AUD);
    expect(redactString(`assertion=${jwt}`)).toBe('assertion=[redacted-jwt]');
  });

  it('claim overrides and omissions replace exactly the named claims; the result still verifies', async () => {
    const jwt = await createAssertion(es, AUD, { iss: 'someone-else', aud: 'https://other/aud', exp: 1, jti: 'fixed', omit: ['sub', 'iat'] });
    const claims = decodeJwt(jwt);
    expect(claims).toEqual({ iss: 'someone-else', aud: 'https://other/aud', exp: 1, jti: 'fixed' });
    // The signature is valid: only the claims are wrong.
    await expect(jwtVerify(jwt, await importJWK(es.publicJwk, 'ES384'), { currentDate: new Date(0) })).resolves.toBeTruthy();
  });

  it("header overrides reach the header unchanged (even alg), the signature stays the client key's", async () => {
    const jwt = await createAssertion(es, AUD, { header: { kid: 'unknown-kid', x5u: 'https://evil.example' } });
    expect(decodeProtectedHeader(jwt)).toEqual({ alg: 'ES384', kid: 'unknown-kid', typ: 'JWT', x5u: 'https://evil.example' });
    await expect(jwtVerify(jwt, await importJWK(es.publicJwk, 'ES384'))).resolves.toBeTruthy();
    const none = await createAssertion(es, AUD, { header: { alg: 'none' } });
    expect(decodeProtectedHeader(none).alg).toBe('none');
    expect(none.split('.')[2]!.length).toBeGreaterThan(0);
  });

  it("signWith 'foreign': the client's kid and alg, a different key of the same alg (cached)", async () => {
    const jwt = await createAssertion(es, AUD, { signWith: 'foreign' });
    expect(decodeProtectedHeader(jwt)).toMatchObject({ alg: 'ES384', kid: es.kid });
    await expect(verifyWithClientKey(jwt, es)).rejects.toThrow(/signature/);
    const foreign = await foreignKey('ES384');
    expect(await foreignKey('ES384')).toBe(foreign);
    await expect(jwtVerify(jwt, createPublicKey(foreign))).resolves.toBeTruthy();

    const rsJwt = await createAssertion(rs, AUD, { signWith: 'foreign' });
    await expect(verifyWithClientKey(rsJwt, rs)).rejects.toThrow(/signature/);
    await expect(jwtVerify(rsJwt, createPublicKey(await foreignKey('RS384')))).resolves.toBeTruthy();
  });

  it("signWith 'none': an unsigned JWT with alg none", async () => {
    const jwt = await createAssertion(es, AUD, { signWith: 'none' });
    const [, , sig] = jwt.split('.');
    expect(sig).toBe('');
    expect(decodeProtectedHeader(jwt)).toMatchObject({ alg: 'none', kid: es.kid });
    expect(decodeJwt(jwt).iss).toBe(es.clientId);
  });

  it("signWith 'hs256-public-key': HS256 keyed with the client's public key PEM", async () => {
    const jwt = await createAssertion(rs, AUD, { signWith: 'hs256-public-key' });
    expect(decodeProtectedHeader(jwt)).toMatchObject({ alg: 'HS256', kid: rs.kid });
    const secret = new TextEncoder().encode(publicKeyPem(rs));
    expect(publicKeyPem(rs)).toContain('BEGIN PUBLIC KEY');
    await expect(jwtVerify(jwt, secret, { algorithms: ['HS256'] })).resolves.toBeTruthy();
    await expect(verifyWithClientKey(jwt, rs)).rejects.toThrow();
  });

  it('corruptSignature: same header and claims, a signature that no longer verifies', async () => {
    const jwt = await createAssertion(es, AUD, { corruptSignature: true, jti: 'j1', iat: 100, exp: 4_000_000_000 });
    const good = await createAssertion(es, AUD, { jti: 'j1', iat: 100, exp: 4_000_000_000 });
    expect(jwt.split('.').slice(0, 2)).toEqual(good.split('.').slice(0, 2));
    expect(Buffer.from(jwt.split('.')[2]!, 'base64url').length).toBe(96);
    await expect(verifyWithClientKey(jwt, es)).rejects.toThrow(/signature/);
    await expect(verifyWithClientKey(good, es)).resolves.toBeTruthy();
  });

  describe('in every signing algorithm the suite supports', () => {
    const SIG_BYTES: Record<SigningAlg, number> = {
      RS256: 256,
      RS384: 256,
      RS512: 256,
      PS256: 256,
      PS384: 256,
      PS512: 256,
      ES256: 64,
      ES384: 96,
      ES512: 132,
      EdDSA: 64,
    };
    const clients = new Map<SigningAlg, ResolvedClient>();
    beforeAll(() => {
      for (const alg of SIGNING_ALGS) clients.set(alg, testClient('main', alg, `client-${alg}`));
    });

    it.each([...SIGNING_ALGS])('%s: the assertion verifies with jose against the public JWK, in that algorithm only', async (alg) => {
      const client = clients.get(alg)!;
      const jwt = await createAssertion(client, AUD);
      const { protectedHeader, payload } = await verifyWithClientKey(jwt, client);
      expect(protectedHeader).toEqual({ alg, kid: client.kid, typ: 'JWT' });
      expect(payload.iss).toBe(`client-${alg}`);
      expect(Buffer.from(jwt.split('.')[2]!, 'base64url').length).toBe(SIG_BYTES[alg]);
      // The key set the target holds: jose refuses the assertion under any other algorithm name.
      const other = alg === 'EdDSA' ? 'ES256' : SIGNING_ALGS.find((a) => a !== alg && a.slice(0, 2) === alg.slice(0, 2))!;
      const relabelled = await createAssertion(client, AUD, { header: { alg: other } });
      await expect(jwtVerify(relabelled, createLocalJWKSet({ keys: [client.publicJwk] }), { algorithms: [...SIGNING_ALGS] })).rejects.toThrow();
    });

    it.each([...SIGNING_ALGS])(
      '%s: the negative matrix signs in that algorithm: a foreign key of its kind, alg none, HS256 keyed with its public key',
      async (alg) => {
        const client = clients.get(alg)!;
        const foreign = await createAssertion(client, AUD, { signWith: 'foreign' });
        expect(decodeProtectedHeader(foreign)).toEqual({ alg, kid: client.kid, typ: 'JWT' });
        await expect(verifyWithClientKey(foreign, client)).rejects.toThrow(/signature/);
        await expect(jwtVerify(foreign, createPublicKey(await foreignKey(alg)), { algorithms: [alg] })).resolves.toBeTruthy();

        const none = await createAssertion(client, AUD, { signWith: 'none' });
        expect(decodeProtectedHeader(none)).toMatchObject({ alg: 'none', kid: client.kid });
        expect(none.endsWith('.')).toBe(true);

        const hs = await createAssertion(client, AUD, { signWith: 'hs256-public-key' });
        expect(decodeProtectedHeader(hs)).toMatchObject({ alg: 'HS256', kid: client.kid });
        await expect(jwtVerify(hs, new TextEncoder().encode(publicKeyPem(client)), { algorithms: ['HS256'] })).resolves.toBeTruthy();
        await expect(verifyWithClientKey(hs, client)).rejects.toThrow();

        const corrupt = await createAssertion(client, AUD, { corruptSignature: true });
        await expect(verifyWithClientKey(corrupt, client)).rejects.toThrow(/signature/);
      },
    );
  });
});
