/**
 * Clients registered with the reference besides its fixture clients (`serve --client`,
 * `serve --clients FILE`): parsing, the fixture clients' defaults, refusals, and a
 * registered key getting a token from the reference.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { SignJWT, calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import { createReferenceServer } from '../../src/reference/index.js';
import type { ReferenceServer } from '../../src/reference/server.js';
import { loadClientsFile, parseClientFlag, toClientRecord, type ExtraClient } from '../../src/reference/clients.js';
import { loadClients } from '../../src/reference/auth.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { SIGNING_ALGS } from '../../src/auth/algorithms.js';

const FIXTURE_CLIENTS = await loadClients(join(PROJECT_ROOT, 'fixtures/reference'));

async function keyPair() {
  const { privateKey, publicKey } = await generateKeyPair('ES384', { extractable: true });
  const jwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(jwk);
  return { privateKey, kid, jwks: { keys: [{ ...jwk, kid, alg: 'ES384', use: 'sig' }] as JWK[] } };
}

describe('registering clients', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fhirc-clients-'));
  });

  test("--client ID=FILE reads the key set; ID=URL names a key-set endpoint; defaults are the fixture clients'", async () => {
    const { jwks } = await keyPair();
    await writeFile(join(dir, 'pub.json'), JSON.stringify(jwks));
    const fromFile = await parseClientFlag('vendor-main=pub.json', {}, dir);
    expect(fromFile).toEqual({ clientId: 'vendor-main', jwks });
    expect(await parseClientFlag('v2=https://vendor.example/jwks.json', { org: 'org-b', scopes: ['system/Encounter.rs'] })).toEqual({
      clientId: 'v2',
      jwksUri: 'https://vendor.example/jwks.json',
      org: 'org-b',
      scopes: ['system/Encounter.rs'],
    });
    const main = FIXTURE_CLIENTS.find((c) => c.role === 'main')!;
    expect(toClientRecord(fromFile, FIXTURE_CLIENTS)).toEqual({
      clientId: 'vendor-main',
      role: 'registered',
      org: 'org-a',
      keyKind: 'sandbox',
      alg: 'ES384',
      scopes: main.scopes,
      jwks,
      rateLimitPerMinute: 60,
    });
  });

  test('refusals say what is wrong', async () => {
    await expect(parseClientFlag('no-equals-sign')).rejects.toThrow(
      '--client takes ID=JWKS_FILE_OR_URL (e.g. my-client=keys/main.public.jwks.json), got "no-equals-sign"',
    );
    await expect(parseClientFlag('x=does-not-exist.json', {}, dir)).rejects.toThrow(/cannot read the key set .*does-not-exist\.json: file not found/);
    const { privateKey } = await keyPair();
    const priv = { keys: [await exportJWK(privateKey)] } as ExtraClient['jwks'];
    expect(() => toClientRecord({ clientId: 'x', jwks: priv }, FIXTURE_CLIENTS)).toThrow(
      'client x: jwks holds a private key: register the public key set only',
    );
    expect(() => toClientRecord({ clientId: 'conformance-main', jwksUri: 'https://x.example/j' }, FIXTURE_CLIENTS)).toThrow(/already a fixture client/);
    expect(() => toClientRecord({ clientId: 'x' }, FIXTURE_CLIENTS)).toThrow('client x: needs jwks (a public JWK set) or jwksUri');
  });

  test('a key of any of the ten algorithms registers; its algorithm is its alg, else its kind; other keys are refused, saying why', async () => {
    const record = (jwk: JWK) => toClientRecord({ clientId: 'x', jwks: { keys: [jwk] } }, FIXTURE_CLIENTS).alg;
    for (const alg of SIGNING_ALGS) {
      const { publicKey } = await generateKeyPair(alg, alg === 'EdDSA' ? { crv: 'Ed25519' } : {});
      const jwk = await exportJWK(publicKey);
      expect([alg, record({ ...jwk, alg })]).toEqual([alg, alg]);
      // Without alg: the curve decides; an RSA key is the suite's default RS384.
      expect([alg, record(jwk)]).toEqual([alg, alg.startsWith('RS') || alg.startsWith('PS') ? 'RS384' : alg]);
    }
    const p256 = await exportJWK((await generateKeyPair('ES256')).publicKey);
    expect(() => record({ ...p256, alg: 'HS256' })).toThrow(
      'client x: jwks.keys[0] has "alg": "HS256"; the reference verifies RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA',
    );
    expect(() => record({ ...p256, alg: 'ES384' })).toThrow('client x: jwks.keys[0] has "alg": "ES384", which its key (kty EC, crv P-256) cannot sign');
    const x25519 = await exportJWK((await generateKeyPair('ECDH-ES', { crv: 'X25519' })).publicKey);
    expect(() => record(x25519)).toThrow(
      /^client x: jwks\.keys\[0\] \(kty OKP, crv X25519\) is not a key of RS256, .*EdDSA \(RSA >= 2048 bits, EC P-256\/P-384\/P-521, OKP Ed25519\)$/,
    );
  });

  test('--clients FILE: the registry format, jwksFile relative to the file', async () => {
    const { jwks } = await keyPair();
    await writeFile(join(dir, 'k.json'), JSON.stringify(jwks));
    await writeFile(
      join(dir, 'clients.json'),
      JSON.stringify({
        clients: [
          { clientId: 'a', jwksFile: 'k.json', keyKind: 'production' },
          { clientId: 'b', jwksUri: 'https://b.example/jwks' },
        ],
      }),
    );
    expect(await loadClientsFile(join(dir, 'clients.json'))).toEqual([
      { clientId: 'a', jwks, keyKind: 'production' },
      { clientId: 'b', jwksUri: 'https://b.example/jwks' },
    ]);
    await writeFile(join(dir, 'bad.json'), JSON.stringify({ clients: [{ clientId: 'a', keyKind: 'test', jwksUri: 'https://a.example/j' }] }));
    await expect(loadClientsFile(join(dir, 'bad.json'))).rejects.toThrow(/bad\.json: clients\[0\]: keyKind must be sandbox or production/);
  });

  describe('a registered key gets a token', () => {
    let server: ReferenceServer;
    let key: Awaited<ReturnType<typeof keyPair>>;
    beforeAll(async () => {
      key = await keyPair();
      server = await createReferenceServer({ port: 0, extraClients: [{ clientId: 'vendor-main', jwks: key.jwks }] });
    });
    afterAll(() => server.close());

    const tokenRequest = async (clientId: string) => {
      const tokenUrl = `${server.url}/auth/token`;
      const assertion = await new SignJWT({})
        .setProtectedHeader({ alg: 'ES384', kid: key.kid, typ: 'JWT' })
        .setIssuer(clientId)
        .setSubject(clientId)
        .setAudience(tokenUrl)
        .setIssuedAt()
        .setExpirationTime('60s')
        .setJti(randomUUID())
        .sign(key.privateKey);
      const body = new URLSearchParams({
        grant_type: 'client_credentials',
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: assertion,
        scope: 'system/MedicationRequest.rs',
      });
      return fetch(tokenUrl, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    };

    test('the registered client: 200 with an access token; the fixture config does not list it', async () => {
      const res = await tokenRequest('vendor-main');
      expect(res.status).toBe(200);
      expect(((await res.json()) as { access_token?: unknown }).access_token).toEqual(expect.any(String));
      expect(server.targetConfig().clients.map((c) => c.clientId)).not.toContain('vendor-main');
    });

    test('an id nobody registered: 401 HPB-00106', async () => {
      const res = await tokenRequest('vendor-unknown');
      expect(res.status).toBe(401);
      expect(JSON.stringify(await res.json())).toContain('HPB-00106');
    });
  });
});
