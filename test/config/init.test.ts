import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importJWK, jwtVerify, SignJWT } from 'jose';
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
});
