import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { generateKeyPair, exportJWK, SignJWT, decodeJwt, calculateJwkThumbprint } from 'jose';
import type { CryptoKey } from 'jose';
import * as oidc from 'openid-client';
import type { ReferenceServer } from '../../../src/reference/server.js';
import { ASSERTION_TYPE, ALL_SCOPES, call, clientKey, codeOf, fakeClock, getToken, signAssertion, startStub, tokenRequest } from './helpers.js';
import type { ClientKey } from './helpers.js';
import { readFile } from 'node:fs/promises';
import { SIGNING_ALGS, type SigningAlg } from '../../../src/auth/algorithms.js';
import { createAssertion } from '../../../src/auth/assertion.js';
import type { AssertionOverrides } from '../../../src/auth/types.js';
import type { ResolvedClient } from '../../../src/config/index.js';
import { testClient } from '../../auth/helpers.js';

let server: ReferenceServer;
let main: ClientKey;

beforeAll(async () => {
  server = await startStub({ limits: { tokenIssuancePerWindow: 1000 } });
  main = await clientKey(server, 'main');
});
afterAll(() => server.close());

const form = (assertion: string, extra: Record<string, string> = {}) => ({
  grant_type: 'client_credentials',
  client_assertion_type: ASSERTION_TYPE,
  client_assertion: assertion,
  ...extra,
});

describe('token issuance', () => {
  test('openid-client (client_credentials + private_key_jwt) gets a token', async () => {
    const config = new oidc.Configuration(
      { issuer: server.url, token_endpoint: `${server.url}/auth/token` },
      main.clientId,
      {},
      oidc.PrivateKeyJwt(main.key, {
        [oidc.modifyAssertion]: (header, payload) => {
          header.kid = main.kid;
          payload.aud = `${server.url}/auth/token`;
        },
      }),
    );
    oidc.allowInsecureRequests(config);
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'system/MedicationRequest.rs' });
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(300);
    expect(tokens.scope).toBe('system/MedicationRequest.rs');
    const claims = decodeJwt(tokens.access_token);
    expect(claims).toMatchObject({ iss: server.url, sub: main.clientId, org: 'org-a', key_kind: 'sandbox', scope: 'system/MedicationRequest.rs' });
    expect(claims.exp! - claims.iat!).toBe(300);
  });

  test('success response: JSON, no-store, rate-limit and correlation headers; no scope grants the full grant', async () => {
    const r = await getToken(server, 'extra');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.headers['cache-control']).toBe('no-store');
    expect(r.headers['x-correlation-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.headers['x-ratelimit-limit']).toBe('1000');
    expect(r.json.scope).toBe(ALL_SCOPES);
    expect(Object.keys(r.json).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
  });

  test('the issued token verifies against the published JWKS', async () => {
    const r = await getToken(server);
    const set = await call(`${server.url}/fhir/.well-known/jwks.json`);
    expect(set.headers['content-type']).toMatch(/^application\/json/);
    const key = set.json.keys[0];
    expect(key).toMatchObject({ alg: 'ES256', use: 'sig' });
    const { jwtVerify, createLocalJWKSet } = await import('jose');
    const { payload } = await jwtVerify(r.json.access_token, createLocalJWKSet(set.json), { issuer: server.url });
    expect(payload.sub).toBe('conformance-main');
  });
});

describe('token endpoint refusals', () => {
  const cases: Array<[string, () => Promise<Record<string, string>>, number, string]> = [
    [
      'bad signature',
      async () => {
        const a = await signAssertion(server, main);
        const [h, p, s] = a.split('.');
        return form(`${h}.${p}.${s!.startsWith('A') ? 'B' : 'A'}${s!.slice(1)}`);
      },
      401,
      'HPB-00106',
    ],
    [
      'foreign key',
      async () => {
        const { privateKey } = await generateKeyPair(main.alg);
        return form(await signAssertion(server, { ...main, key: privateKey as CryptoKey }));
      },
      401,
      'HPB-00106',
    ],
    ['unknown kid', async () => form(await signAssertion(server, main, {}, { kid: 'no-such-kid' })), 401, 'HPB-00106'],
    [
      'alg none',
      async () => {
        const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
        const now = Math.floor(Date.now() / 1000);
        return form(
          `${enc({ alg: 'none', kid: main.kid })}.${enc({ iss: main.clientId, sub: main.clientId, aud: `${server.url}/auth/token`, exp: now + 60, jti: 'x1' })}.`,
        );
      },
      401,
      'HPB-00106',
    ],
    [
      'HS256 signed with the public key',
      async () => {
        const pub = { ...main.jwk, d: undefined };
        const secret = new TextEncoder().encode(JSON.stringify(pub));
        const now = Math.floor(Date.now() / 1000);
        const a = await new SignJWT({ iss: main.clientId, sub: main.clientId, aud: `${server.url}/auth/token`, exp: now + 60, jti: 'hs1' })
          .setProtectedHeader({ alg: 'HS256', kid: main.kid })
          .sign(secret);
        return form(a);
      },
      401,
      'HPB-00106',
    ],
    ['wrong iss', async () => form(await signAssertion(server, main, { iss: 'conformance-main-2' })), 401, 'HPB-00106'],
    ['wrong sub', async () => form(await signAssertion(server, main, { sub: 'someone-else' })), 401, 'HPB-00106'],
    ['wrong aud', async () => form(await signAssertion(server, main, { aud: `${server.url}/fhir` })), 401, 'HPB-00106'],
    ['unregistered client', async () => form(await signAssertion(server, main, { iss: 'nobody', sub: 'nobody' })), 401, 'HPB-00106'],
    ['expired exp', async () => form(await signAssertion(server, main, { exp: Math.floor(Date.now() / 1000) - 10 })), 401, 'HPB-00106'],
    ['exp too far ahead', async () => form(await signAssertion(server, main, { exp: Math.floor(Date.now() / 1000) + 3600 })), 401, 'HPB-00106'],
    ['missing jti', async () => form(await signAssertion(server, main, { jti: null })), 401, 'HPB-00106'],
    ['not a JWT', async () => form('not.a.jwt'), 401, 'HPB-00106'],
    [
      'missing client_assertion',
      async () => {
        const f = form('x');
        delete (f as Partial<typeof f>).client_assertion;
        return f;
      },
      400,
      'HPB-00101',
    ],
    ['wrong grant_type', async () => form(await signAssertion(server, main), { grant_type: 'password' }), 400, 'HPB-00101'],
    ['wrong client_assertion_type', async () => form(await signAssertion(server, main), { client_assertion_type: 'urn:x' }), 400, 'HPB-00101'],
    [
      'excess scope (refuse mode)',
      async () => form(await signAssertion(server, main), { scope: 'system/MedicationRequest.rs system/Patient.rs' }),
      403,
      'HPB-00104',
    ],
  ];

  test.each(cases)('%s -> %i %s', async (_name, build, status, code) => {
    const r = await tokenRequest(server, await build());
    expect(r.status).toBe(status);
    expect(codeOf(r)).toBe(code);
    expect(r.headers['content-type']).toBe('application/fhir+json; charset=utf-8');
    expect(r.headers['x-correlation-id']).toBeTruthy();
    expect(r.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
    expect(r.json.issue[0].code).toBe({ 400: 'invalid', 401: 'login', 403: 'forbidden' }[status]);
  });

  test('replayed jti -> 401 HPB-00106', async () => {
    const a = await signAssertion(server, main);
    expect((await tokenRequest(server, form(a))).status).toBe(200);
    const replay = await tokenRequest(server, form(a));
    expect(replay.status).toBe(401);
    expect(codeOf(replay)).toBe('HPB-00106');
  });

  test('non-form body -> 400 HPB-00101', async () => {
    const r = await call(`${server.url}/auth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(form('x')) });
    expect(r.status).toBe(400);
    expect(codeOf(r)).toBe('HPB-00101');
    expect(r.json.issue[0].code).toBe('invalid');
  });

  test('error messages never echo the assertion', async () => {
    const a = await signAssertion(server, main, { aud: 'https://elsewhere.example/token' });
    const r = await tokenRequest(server, form(a));
    expect(r.text).not.toContain(a.split('.')[2]);
    expect(r.text).not.toContain(a.split('.')[1]);
  });
});

describe('scopes and modes', () => {
  test('narrow mode grants the intersection and refuses an empty one', async () => {
    const s = await startStub({ modes: { excessScope: 'narrow' } });
    try {
      const ok = await getToken(s, 'main', 'system/MedicationRequest.rs system/Patient.rs system/Encounter.r');
      expect(ok.status).toBe(200);
      expect(ok.json.scope).toBe('system/MedicationRequest.rs system/Encounter.r');
      const none = await getToken(s, 'main', 'system/Patient.rs');
      expect(none.status).toBe(403);
      expect(codeOf(none)).toBe('HPB-00104');
    } finally {
      await s.close();
    }
  });

  test('tokenResponseExtras=false returns access_token only', async () => {
    const s = await startStub({ modes: { tokenResponseExtras: false } });
    try {
      const r = await getToken(s);
      expect(Object.keys(r.json)).toEqual(['access_token']);
    } finally {
      await s.close();
    }
  });

  test('aud-not-checked fault accepts a wrong aud', async () => {
    const s = await startStub({ faults: ['aud-not-checked'] });
    try {
      const k = await clientKey(s, 'main');
      const r = await tokenRequest(s, form(await signAssertion(s, k, { aud: 'https://elsewhere.example/token' })));
      expect(r.status).toBe(200);
    } finally {
      await s.close();
    }
  });

  test('unknown fault names fail at start-up', async () => {
    await expect(startStub({ faults: ['no-such-fault'] })).rejects.toThrow(/unknown fault "no-such-fault"/);
  });
});

describe('issuance limit (fixed window per source IP)', () => {
  test.each(['first-request', 'clock'] as const)('%s mode: 429 throttled with Retry-After; early retry extends; recovery', async (mode) => {
    const clock = fakeClock(Date.UTC(2030, 0, 1, 0, 0, 30, 500));
    const s = await startStub({ now: clock.now, limits: { tokenIssuancePerWindow: 2, tokenWindowMs: 10_000 }, modes: { issuanceWindow: mode } });
    try {
      const windowStart = mode === 'clock' ? Math.floor(clock.now() / 10_000) * 10_000 : clock.now();
      const first = await getToken(s, 'main', undefined, clock.now());
      expect(first.status).toBe(200);
      expect(first.headers['x-ratelimit-limit']).toBe('2');
      expect(first.headers['x-ratelimit-remaining']).toBe('1');
      expect(first.headers['x-ratelimit-reset']).toBe(String(Math.ceil((windowStart + 10_000) / 1000)));
      expect((await getToken(s, 'main', undefined, clock.now())).status).toBe(200);
      clock.advance(1_000);
      const refused = await getToken(s, 'main', undefined, clock.now());
      expect(refused.status).toBe(429);
      expect(codeOf(refused)).toBe('HPB-00105');
      expect(refused.json.issue[0].code).toBe('throttled');
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');
      const retryAfter = Number(refused.headers['retry-after']);
      expect(retryAfter).toBe(Math.ceil((windowStart + 10_000 - clock.now()) / 1000));
      clock.advance(500);
      const early = await getToken(s, 'main', undefined, clock.now());
      expect(early.status).toBe(429);
      expect(Number(early.headers['x-ratelimit-reset'])).toBeGreaterThan(Number(refused.headers['x-ratelimit-reset']));
      clock.advance(Number(early.headers['retry-after']) * 1000);
      expect((await getToken(s, 'main', undefined, clock.now())).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe('client key set fetched from jwksUri', () => {
  let jwksServer: Server;
  let fetches = 0;
  let remote: { key: CryptoKey; kid: string };

  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS384');
    const pub = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(pub);
    remote = { key: privateKey as CryptoKey, kid };
    jwksServer = createServer((_req, res) => {
      fetches++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: [{ ...pub, kid, alg: 'RS384', use: 'sig' }] }));
    });
    await new Promise<void>((ok) => jwksServer.listen(0, '127.0.0.1', ok));
  });
  afterAll(() => new Promise<void>((ok) => jwksServer.close(() => ok())));

  test('a client registered by jwksUri authenticates; the key set is cached', async () => {
    const { Authority } = await import('../../../src/reference/auth.js');
    const { DEFAULT_LIMITS, DEFAULT_MODES } = await import('../../../src/reference/types.js');
    const addr = jwksServer.address();
    const port = typeof addr === 'object' && addr ? addr.port : 0;
    const baseUrl = 'http://127.0.0.1:1';
    const authority = await Authority.create({
      clients: [
        {
          clientId: 'remote',
          role: 'remote',
          org: 'org-a',
          keyKind: 'sandbox',
          alg: 'RS384',
          scopes: ['system/Encounter.rs'],
          jwksUri: `http://127.0.0.1:${port}/jwks.json`,
        },
        {
          clientId: 'unreachable',
          role: 'x',
          org: 'org-a',
          keyKind: 'sandbox',
          alg: 'RS384',
          scopes: ['system/Encounter.rs'],
          jwksUri: 'http://127.0.0.1:1/jwks.json',
        },
      ],
      baseUrl,
      limits: DEFAULT_LIMITS,
      modes: DEFAULT_MODES,
      faults: new Set(),
      now: Date.now,
    });
    const assertion = (iss: string) =>
      new SignJWT({ iss, sub: iss, aud: authority.tokenUrl, exp: Math.floor(Date.now() / 1000) + 60, jti: crypto.randomUUID() })
        .setProtectedHeader({ alg: 'RS384', kid: remote.kid })
        .sign(remote.key);
    const issue = async (iss: string) => authority.issue(new URLSearchParams(form(await assertion(iss))));
    expect((await issue('remote')).scope).toBe('system/Encounter.rs');
    expect((await issue('remote')).access_token).toBeTruthy();
    expect(fetches).toBe(1);
    await expect(issue('unreachable')).rejects.toMatchObject({ status: 401, code: 'HPB-00106' });
  });
});

test('token endpoint accepts only form-encoded POST', async () => {
  const get = await call(`${server.url}/auth/token`);
  expect(get.status).toBe(405);
  expect(get.headers.allow).toBe('POST');
  const text = await call(`${server.url}/auth/token`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'grant_type=client_credentials' });
  expect(text.status).toBe(400);
  expect(codeOf(text)).toBe('HPB-00101');
});

describe('client keys in every algorithm the spec leaves open', () => {
  const clients = new Map<SigningAlg, ResolvedClient>();
  let authority: import('../../../src/reference/auth.js').Authority;
  let rsaOpen: ResolvedClient;

  beforeAll(async () => {
    const { Authority } = await import('../../../src/reference/auth.js');
    const { DEFAULT_LIMITS, DEFAULT_MODES } = await import('../../../src/reference/types.js');
    for (const alg of SIGNING_ALGS) clients.set(alg, testClient('main', alg, `client-${alg}`));
    // An RSA key registered without alg: any RS* or PS*.
    const rsa = testClient('extra', 'PS512', 'rsa-open');
    rsaOpen = { ...rsa, publicJwk: { ...rsa.publicJwk, alg: undefined } };
    const record = (c: ResolvedClient) => ({
      clientId: c.clientId,
      role: c.role,
      org: 'org-a',
      keyKind: 'sandbox' as const,
      alg: c.alg,
      scopes: ['system/Encounter.rs'],
      jwks: { keys: [JSON.parse(JSON.stringify(c.publicJwk))] },
    });
    authority = await Authority.create({
      clients: [...clients.values(), rsaOpen].map(record),
      baseUrl: 'http://127.0.0.1:1',
      limits: DEFAULT_LIMITS,
      modes: DEFAULT_MODES,
      faults: new Set(),
      now: Date.now,
    });
  });

  const issue = async (c: ResolvedClient, overrides: AssertionOverrides = {}) =>
    authority.issue(new URLSearchParams(form(await createAssertion(c, authority.tokenUrl, overrides))));

  test.each([...SIGNING_ALGS])('%s: an assertion signed by the registered key gets a token', async (alg) => {
    expect((await issue(clients.get(alg)!)).scope).toBe('system/Encounter.rs');
  });

  test.each([...SIGNING_ALGS])('%s: alg none, HS256 keyed with the public key, a foreign key of the same kind: 401 HPB-00106', async (alg) => {
    const c = clients.get(alg)!;
    for (const signWith of ['none', 'hs256-public-key', 'foreign'] as const) {
      await expect(issue(c, { signWith })).rejects.toMatchObject({ status: 401, code: 'HPB-00106' });
    }
  });

  test("an algorithm other than the registered key's is refused, even signed by that key", async () => {
    // RS384-registered key signing RS256 / PS384 (the same RSA key): refused.
    const rs384 = clients.get('RS384')!;
    for (const alg of ['RS256', 'PS384'] as const) {
      await expect(issue({ ...rs384, alg })).rejects.toMatchObject({
        status: 401,
        code: 'HPB-00106',
        message: expect.stringContaining('no key of the client has this kid and this alg'),
      });
    }
    // A P-256 key registered as ES256 named ES384 in the header: refused.
    await expect(issue(clients.get('ES256')!, { header: { alg: 'ES384' } })).rejects.toMatchObject({ status: 401, code: 'HPB-00106' });
    // An algorithm outside the ten: refused by name.
    await expect(issue(clients.get('ES256')!, { header: { alg: 'ES256K' } })).rejects.toMatchObject({
      status: 401,
      message: expect.stringContaining('alg must be one of RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA'),
    });
  });

  test('an RSA key registered without alg verifies every RS* and PS*, nothing else', async () => {
    for (const alg of ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'] as const) expect((await issue({ ...rsaOpen, alg })).access_token).toBeTruthy();
    await expect(issue(rsaOpen, { signWith: 'hs256-public-key' })).rejects.toMatchObject({ status: 401, code: 'HPB-00106' });
  });

  test('smart-configuration lists the ten, RS384 and ES384 first', async () => {
    const r = await call(`${server.url}/fhir/.well-known/smart-configuration`);
    expect(r.json.token_endpoint_auth_signing_alg_values_supported).toEqual([
      'RS384',
      'ES384',
      'RS256',
      'RS512',
      'PS256',
      'PS384',
      'PS512',
      'ES256',
      'ES512',
      'EdDSA',
    ]);
  });
});

describe('mode mainKeyAlg: the main client registered with its test key of another algorithm', () => {
  test.each(['RS256', 'PS384', 'ES384', 'ES512', 'EdDSA'] as const)(
    '%s: the target config names that key and algorithm; a token for it, none for the default ES256 key',
    async (alg) => {
      const s = await startStub({ modes: { mainKeyAlg: alg } });
      try {
        const c = s.targetConfig().clients.find((x) => x.role === 'main')!;
        expect([c.clientId, c.alg, c.privateKey.file.split('/').at(-1)]).toEqual([
          'conformance-main',
          alg,
          // ES384 is the fixture key's own algorithm: that file, no test key.
          alg === 'ES384' ? 'conformance-main.test-key.private.jwk.json' : `conformance-main.${alg.toLowerCase()}.test-key.private.jwk.json`,
        ]);
        const jwk = JSON.parse(await readFile(c.privateKey.file, 'utf8')) as { kid: string; alg: string };
        expect([c.kid, jwk.alg]).toEqual([jwk.kid, alg]);
        const r = await getToken(s, 'main');
        expect(r.status).toBe(200);
        // The default mode's ES256 key no longer authenticates the main client.
        const fixture = await clientKey(server, 'main');
        const old = await tokenRequest(s, form(await signAssertion(s, fixture)));
        expect([old.status, codeOf(old)]).toEqual([401, 'HPB-00106']);
      } finally {
        await s.close();
      }
    },
  );
});
