import { errors, exportJWK, generateKeyPair, SignJWT, jwtVerify, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { remoteKeySet } from '../../src/reference/remote-key-set.js';
import { startServer } from '../http/servers.js';

async function keyPair(kid: string): Promise<{ jwk: JWK; sign: () => Promise<string> }> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  return { jwk, sign: () => new SignJWT({ sub: 'c' }).setProtectedHeader({ alg: 'ES256', kid }).setIssuedAt().sign(privateKey) };
}

/** Runs `fn` against a key-set host whose answer the test sets (it counts the fetches), closed afterwards. */
async function withKeyHost(fn: (host: { state: KeyHostState; url: URL }) => Promise<void>): Promise<void> {
  const state: KeyHostState = { keys: [], status: 200, body: undefined, delayMs: 0, fetches: 0 };
  const server = await startServer((_req, res) => {
    state.fetches++;
    setTimeout(
      () => res.writeHead(state.status, { 'Content-Type': 'application/json' }).end(state.body ?? JSON.stringify({ keys: state.keys })),
      state.delayMs,
    );
  });
  try {
    await fn({ state, url: new URL(`${server.url}/jwks.json`) });
  } finally {
    await server.close();
  }
}

interface KeyHostState {
  keys: JWK[];
  status: number;
  body: string | undefined;
  delayMs: number;
  fetches: number;
}

describe('remoteKeySet: a client key set fetched from its jwks_uri', () => {
  it('fetches once, keeps the set, and fetches again at once for a kid it lacks (a rotated key)', () =>
    withKeyHost(async ({ state, url }) => {
      const a = await keyPair('a');
      const b = await keyPair('b');
      state.keys = [a.jwk];
      const keys = remoteKeySet(url, { timeoutMs: 2000, cacheMaxAgeMs: 60_000 });
      await Promise.all([jwtVerify(await a.sign(), keys), jwtVerify(await a.sign(), keys)]);
      await jwtVerify(await a.sign(), keys);
      expect(state.fetches).toBe(1);
      state.keys = [a.jwk, b.jwk];
      expect((await jwtVerify(await b.sign(), keys)).payload.sub).toBe('c');
      expect(state.fetches).toBe(2);
      state.keys = [a.jwk];
      await expect(jwtVerify(await keyPair('b').then((k) => k.sign()), keys)).rejects.toBeInstanceOf(errors.JWSSignatureVerificationFailed);
      const stranger = await keyPair('z');
      await expect(jwtVerify(await stranger.sign(), keys)).rejects.toBeInstanceOf(errors.JWKSNoMatchingKey);
    }));

  it('fetches again once the kept set is older than cacheMaxAgeMs', () =>
    withKeyHost(async ({ state, url }) => {
      const a = await keyPair('a');
      state.keys = [a.jwk];
      const keys = remoteKeySet(url, { timeoutMs: 2000, cacheMaxAgeMs: 50 });
      await jwtVerify(await a.sign(), keys);
      await new Promise((r) => setTimeout(r, 80));
      await jwtVerify(await a.sign(), keys);
      expect(state.fetches).toBe(2);
    }));

  it("raises jose's errors for an unreachable set: the base JOSEError for a non-200 or non-JSON answer, JWKSTimeout for a slow one", () =>
    withKeyHost(async ({ state, url }) => {
      const a = await keyPair('a');
      const token = await a.sign();
      state.status = 500;
      const non200 = await jwtVerify(token, remoteKeySet(url, { timeoutMs: 2000, cacheMaxAgeMs: 60_000 })).catch((e: unknown) => e);
      expect(Object.getPrototypeOf(non200)).toBe(errors.JOSEError.prototype);
      state.status = 200;
      state.body = 'not json';
      const notJson = await jwtVerify(token, remoteKeySet(url, { timeoutMs: 2000, cacheMaxAgeMs: 60_000 })).catch((e: unknown) => e);
      expect(Object.getPrototypeOf(notJson)).toBe(errors.JOSEError.prototype);
      state.body = '{"not":"a key set"}';
      await expect(jwtVerify(token, remoteKeySet(url, { timeoutMs: 2000, cacheMaxAgeMs: 60_000 }))).rejects.toBeInstanceOf(errors.JWKSInvalid);
      state.body = undefined;
      state.delayMs = 500;
      await expect(jwtVerify(token, remoteKeySet(url, { timeoutMs: 50, cacheMaxAgeMs: 60_000 }))).rejects.toBeInstanceOf(errors.JWKSTimeout);
    }));
});
