/** End to end: the broker against the embedded reference server, over a minimal undici client. */
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { request as undiciRequest } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenBroker } from '../../src/auth/broker.js';
import { keySetState, publicJwks, serveJwks, setKeySetReachable, type JwksServer } from '../../src/auth/jwks.js';
import { resolveTokenUrl } from '../../src/auth/token-url.js';
import { loadConfig, type ResolvedConfig } from '../../src/config/index.js';
import type { HttpResponse, RequestOptions } from '../../src/http/types.js';
import { createReferenceServer, type ReferenceServer } from '../../src/reference/index.js';

/** Just enough of the HTTP layer for the broker: form bodies, raw bodies, bearer tokens. */
function minimalHttp(baseUrl: string) {
  return {
    async request(opts: RequestOptions): Promise<HttpResponse> {
      const url = new URL(opts.url, `${baseUrl}/`).toString();
      const headers: Record<string, string> = { ...opts.headers };
      let body: string | undefined;
      if (opts.form) {
        headers['content-type'] = 'application/x-www-form-urlencoded';
        body = new URLSearchParams(opts.form).toString();
      } else if (typeof opts.body === 'string') body = opts.body;
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      const res = await undiciRequest(url, { method: (opts.method ?? 'GET') as 'GET', headers, body });
      const text = await res.body.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      const flat: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
      return {
        status: res.statusCode,
        headers: flat,
        text,
        json,
        bodyTruncated: false,
        exchange: { id: 'x', startedAt: '', durationMs: 0, request: { method: opts.method ?? 'GET', url, headers: {} }, curl: '' },
      };
    },
  };
}

let ref: ReferenceServer;
let config: ResolvedConfig;
let broker: TokenBroker;
let http: ReturnType<typeof minimalHttp>;

beforeAll(async () => {
  ref = await createReferenceServer({ host: '127.0.0.1', port: 0 });
  config = await loadConfig(new URL('../../fixtures/example-target.json', import.meta.url).pathname, { baseUrl: ref.url });
  http = minimalHttp(config.baseUrl);
  const tokenUrl = await resolveTokenUrl({ baseUrl: config.baseUrl }, http);
  broker = new TokenBroker({ http, tokenUrl, clients: config.clients, issuancePerMinute: 20, windowSec: 60, tokenLifetimeSec: 300 });
});
afterAll(async () => {
  await ref?.close();
});

describe('TokenBroker against the reference server', () => {
  it('discovers the token URL and issues tokens the FHIR API accepts, for every configured client', async () => {
    for (const client of config.clients) {
      const token = await broker.token(client.role, ['system/Encounter.rs']);
      const res = await http.request({ url: `/fhir/R4/Encounter?patient=${config.fixtures.patient}`, token });
      expect(res.status, client.role).toBe(200);
    }
    expect(await broker.token('main', ['system/Encounter.rs'])).toBeTypeOf('string');
    expect(broker.issued).toBe(config.clients.length);
  });

  for (const overrides of [
    { signWith: 'foreign' },
    { signWith: 'none' },
    { signWith: 'hs256-public-key' },
    { corruptSignature: true },
    { aud: 'https://elsewhere/token' },
  ] as const) {
    it(`a bad assertion (${JSON.stringify(overrides)}) is refused with 401 HPB-00106`, async () => {
      const res = await broker.request('main', { scopes: ['system/Encounter.rs'], assertion: overrides });
      expect(res.status).toBe(401);
      expect(res.text).toContain('HPB-00106');
    });
  }
});

describe('serveJwks', () => {
  let server: JwksServer;
  afterAll(async () => {
    await server?.close();
  });

  it("serves the clients' public keys, which verify their assertions; no private members", async () => {
    server = await serveJwks({ host: '127.0.0.1', port: 0, path: '/jwks.json' }, publicJwks(config.clients));
    const res = await undiciRequest(server.url);
    const body = (await res.body.json()) as { keys: Record<string, unknown>[] };
    expect(body.keys.map((k) => k.kid)).toEqual(config.clients.map((c) => c.kid));
    expect(body.keys.some((k) => 'd' in k)).toBe(false);
    const assertion = await broker.assertion('extra');
    const { protectedHeader } = await jwtVerify(assertion, createRemoteJWKSet(new URL(server.url)));
    expect(protectedHeader.alg).toBe('RS384');
    const missing = await undiciRequest(server.url.replace('/jwks.json', '/other'));
    await missing.body.dump();
    expect(missing.statusCode).toBe(404);
  });

  it('the control endpoint makes the key set unreachable (connections cut) and reachable again, counting the requests', async () => {
    const jwks = await serveJwks({ host: '127.0.0.1', port: 0, path: '/jwks.json' }, { keys: [] });
    try {
      jwks.setKeys(publicJwks(config.clients));
      expect(jwks.control.jwksUrl).toBe(jwks.url);
      expect(jwks.control.url.startsWith('http://127.0.0.1:')).toBe(true);
      expect(await setKeySetReachable(jwks.control, false)).toMatchObject({ reachable: false, refusedFetches: 0 });
      await expect(fetch(jwks.url)).rejects.toThrow();
      await expect(fetch(jwks.url)).rejects.toThrow();
      expect(await setKeySetReachable(jwks.control, true)).toMatchObject({ reachable: true, fetches: 2, refusedFetches: 2 });
      const body = (await (await fetch(jwks.url)).json()) as { keys: unknown[] };
      expect(body.keys).toHaveLength(config.clients.length);
      expect(await keySetState(jwks.control)).toMatchObject({ reachable: true, fetches: 3 });
      // Without the secret, the control endpoint is not there.
      const wrong = await fetch(`${jwks.control.url.replace(/\/[^/]+$/, '/guess')}/unreachable`, { method: 'POST' });
      expect(wrong.status).toBe(404);
      expect((await keySetState(jwks.control)).reachable).toBe(true);
    } finally {
      await jwks.close();
    }
  });
});
