import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLocalJWKSet, importJWK, jwtVerify, SignJWT } from 'jose';
import { SIGNING_ALGS, type SigningAlg } from '../../src/auth/algorithms.js';
import { createAssertion } from '../../src/auth/assertion.js';
import { initConfig, CLIENT_ID_PLACEHOLDER } from '../../src/config/init.js';
import { loadConfig } from '../../src/config/index.js';
import type { ConformanceError } from '../../src/errors.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fc-init-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function smartFetch(status: number, body: unknown): { fetch: typeof fetch; urls: string[] } {
  const urls: string[] = [];
  const fake = (async (input: string | URL | Request) => {
    urls.push(String(input));
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  return { fetch: fake, urls };
}

describe('initConfig', () => {
  it('discovers the token endpoint, writes a 0600 ES384 key and a skeleton that loads', async () => {
    const { fetch, urls } = smartFetch(200, { token_endpoint: 'https://t.example/auth/token' });
    const r = await initConfig({ baseUrl: 'https://t.example/', outDir: dir, fetch });
    expect(urls).toEqual(['https://t.example/fhir/.well-known/smart-configuration']);
    expect((await stat(r.keyPath)).mode & 0o777).toBe(0o600);

    const config = await loadConfig(r.configPath);
    expect(config.tokenUrl).toBe('https://t.example/auth/token');
    expect(config.baseUrl).toBe('https://t.example');
    expect(config.fixtures).toEqual({});
    expect(config.clients[0]).toMatchObject({ role: 'main', clientId: CLIENT_ID_PLACEHOLDER, alg: 'ES384' });

    // The published JWKS verifies what the written private key signs; kid is the thumbprint.
    const [pub] = r.publicJwks.keys;
    expect(pub).not.toHaveProperty('d');
    expect(pub!.kid).toBe(config.clients[0]!.kid);
    const priv = JSON.parse(await readFile(r.keyPath, 'utf8'));
    const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'ES384' }).sign(await importJWK(priv, 'ES384'));
    await expect(jwtVerify(jwt, await importJWK(pub!, 'ES384'))).resolves.toBeTruthy();

    // The public key set is written too, for `serve --client ID=FILE` (or the target's registration form).
    expect(r.publicJwksPath).toBe(join(dir, 'keys', 'main.public.jwks.json'));
    const written = JSON.parse(await readFile(r.publicJwksPath, 'utf8')) as { keys: Array<Record<string, unknown>> };
    expect(written).toEqual(r.publicJwks);
    expect(written.keys[0]).not.toHaveProperty('d');

    expect(r.missing.join('\n')).toMatch(/clientId[\s\S]*fixtures[\s\S]*second-org[\s\S]*production/);
  });

  it('refuses to overwrite an existing key or config', async () => {
    const { fetch } = smartFetch(200, { token_endpoint: 'https://t.example/auth/token' });
    await initConfig({ baseUrl: 'https://t.example', outDir: dir, fetch });
    const e = (await initConfig({ baseUrl: 'https://t.example', outDir: dir, fetch }).catch((x: unknown) => x)) as ConformanceError;
    expect(e.code).toBe('ERR_USAGE');
    expect(e.message).toContain('already exists');
  });

  it('reports an unreachable target clearly', async () => {
    const e = (await initConfig({ baseUrl: 'http://127.0.0.1:1', outDir: dir }).catch((x: unknown) => x)) as ConformanceError;
    expect(e.code).toBe('ERR_TARGET_UNREACHABLE');
    expect(e.message).toContain('http://127.0.0.1:1/fhir/.well-known/smart-configuration');
    expect(e.fix).toBeTruthy();
  });

  it('reports a SMART configuration without token_endpoint or with an error status', async () => {
    for (const [status, body] of [
      [200, { jwks_uri: 'x' }],
      [404, {}],
    ] as const) {
      const { fetch } = smartFetch(status, body);
      const e = (await initConfig({ baseUrl: 'https://t.example', outDir: dir, fetch }).catch((x: unknown) => x)) as ConformanceError;
      expect(e.code).toBe('ERR_DISCOVERY');
      expect(e.fix).toContain('tokenUrl');
    }
  });

  describe('--alg', () => {
    const TOKEN = { token_endpoint: 'https://t.example/auth/token' };
    const KTY: Record<SigningAlg, [string, string | undefined]> = {
      RS256: ['RSA', undefined],
      RS384: ['RSA', undefined],
      RS512: ['RSA', undefined],
      PS256: ['RSA', undefined],
      PS384: ['RSA', undefined],
      PS512: ['RSA', undefined],
      ES256: ['EC', 'P-256'],
      ES384: ['EC', 'P-384'],
      ES512: ['EC', 'P-521'],
      EdDSA: ['OKP', 'Ed25519'],
    };

    it.each([...SIGNING_ALGS])('%s: a key pair of that algorithm, a config that loads with it, a public JWKS that verifies what the key signs', async (alg) => {
      const out = join(dir, alg);
      const r = await initConfig({ baseUrl: 'https://t.example', outDir: out, alg, fetch: smartFetch(200, TOKEN).fetch });
      expect([r.alg, r.algReason]).toEqual([alg, '--alg']);
      const config = await loadConfig(r.configPath);
      expect(config.clients[0]).toMatchObject({ alg, algSource: 'config', algs: [alg] });
      const [pub] = r.publicJwks.keys;
      expect([pub!.kty, pub!.crv, pub!.alg, pub!.use]).toEqual([...KTY[alg], alg, 'sig']);
      // What the suite signs with the written key verifies against the public key set init printed.
      const jwt = await createAssertion(config.clients[0]!, 'https://t.example/auth/token');
      const { protectedHeader } = await jwtVerify(jwt, createLocalJWKSet(r.publicJwks), { algorithms: [alg] });
      expect(protectedHeader).toEqual({ alg, kid: pub!.kid, typ: 'JWT' });
    });

    it("the target's list: --alg must be in it; without --alg ES384 when listed, else the list's first the suite signs", async () => {
      const listing = (algs: string[]) => smartFetch(200, { ...TOKEN, token_endpoint_auth_signing_alg_values_supported: algs }).fetch;
      const e = (await initConfig({ baseUrl: 'https://t.example', outDir: join(dir, 'a'), alg: 'ES512', fetch: listing(['RS256', 'ES256', 'HS256']) }).catch(
        (x: unknown) => x,
      )) as ConformanceError;
      expect([e.code, e.field, e.message, e.fix]).toEqual([
        'ERR_USAGE',
        'alg',
        "--alg ES512 is not in the target's token_endpoint_auth_signing_alg_values_supported (RS256, ES256, HS256)",
        'use one the target lists: --alg RS256 | ES256',
      ]);
      const listed = await initConfig({ baseUrl: 'https://t.example', outDir: join(dir, 'b'), fetch: listing(['RS256', 'ES384']) });
      expect([listed.alg, listed.algReason]).toEqual(['ES384', 'the default, which the target lists']);
      const first = await initConfig({ baseUrl: 'https://t.example', outDir: join(dir, 'c'), fetch: listing(['HS256', 'PS256', 'ES256']) });
      expect([first.alg, first.algReason]).toEqual([
        'PS256',
        "the first algorithm of the target's token_endpoint_auth_signing_alg_values_supported (it lacks ES384)",
      ]);
      const none = (await initConfig({ baseUrl: 'https://t.example', outDir: join(dir, 'd'), fetch: listing(['HS256']) }).catch(
        (x: unknown) => x,
      )) as ConformanceError;
      expect([none.code, none.field]).toEqual(['ERR_USAGE', 'token_endpoint_auth_signing_alg_values_supported']);
      const unlisted = await initConfig({ baseUrl: 'https://t.example', outDir: join(dir, 'e'), fetch: smartFetch(200, TOKEN).fetch });
      expect([unlisted.alg, unlisted.algReason]).toEqual(['ES384', 'the default; the target publishes no token_endpoint_auth_signing_alg_values_supported']);
    });

    it('an algorithm the suite does not sign is refused before any request', async () => {
      const { fetch, urls } = smartFetch(200, TOKEN);
      const e = (await initConfig({ baseUrl: 'https://t.example', outDir: dir, alg: 'HS256', fetch }).catch((x: unknown) => x)) as ConformanceError;
      expect([e.code, e.field, e.message, e.fix]).toEqual([
        'ERR_USAGE',
        'alg',
        '--alg "HS256" is not a signing algorithm the suite supports',
        'use one of RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA',
      ]);
      expect(urls).toEqual([]);
    });
  });
});
