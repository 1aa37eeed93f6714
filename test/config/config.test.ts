import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_KEYS, loadConfig, redactedConfig, resolveConfig } from '../../src/config/index.js';
import { ConformanceError } from '../../src/errors.js';

let dir: string;
let ecKey: KeyObject;
let rsaKey: KeyObject;

const ecPem = () => ecKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const jwkOf = (k: KeyObject, extra: object = {}) => JSON.stringify({ ...k.export({ format: 'jwk' }), ...extra });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fc-config-'));
  ecKey = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey;
  rsaKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  await writeFile(join(dir, 'ec.jwk.json'), jwkOf(ecKey, { kid: 'ec-kid' }));
  await writeFile(join(dir, 'ec.pem'), ecPem());
  await writeFile(join(dir, 'rsa.jwk.json'), jwkOf(rsaKey));
  await writeFile(join(dir, 'rsa.pem'), rsaKey.export({ type: 'pkcs8', format: 'pem' }));
  await writeFile(
    join(dir, 'ec.public.jwk.json'),
    JSON.stringify(ecKey.export({ format: 'jwk' }), (k, v) => (k === 'd' ? undefined : v)),
  );
  await writeFile(join(dir, 'garbage.txt'), 'not a key');
  const pem = (k: KeyObject) => k.export({ type: 'pkcs8', format: 'pem' });
  await writeFile(join(dir, 'ed.pem'), pem(generateKeyPairSync('ed25519').privateKey));
  await writeFile(join(dir, 'ed448.pem'), pem(generateKeyPairSync('ed448').privateKey));
  await writeFile(join(dir, 'rsa1024.pem'), pem(generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey));
  await writeFile(join(dir, 'ec.hs.jwk.json'), jwkOf(ecKey, { alg: 'HS256' }));
  await writeFile(join(dir, 'ec.es256.jwk.json'), jwkOf(ecKey, { alg: 'ES256' }));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function base(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    baseUrl: 'https://staging.example.com/',
    clients: [{ role: 'main', clientId: 'c-main', alg: 'ES384', privateKey: { file: 'ec.jwk.json' } }],
    ...overrides,
  };
}

async function configError(raw: unknown, profile?: 'certification'): Promise<ConformanceError> {
  const e = await resolveConfig(raw, dir, { profile }).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ConformanceError);
  const ce = e as ConformanceError;
  expect(ce.code).toBe('ERR_CONFIG_INVALID');
  expect(ce.fix).toBeTruthy();
  return ce;
}

describe('resolveConfig: valid configs', () => {
  it('applies defaults, strips the trailing slash and takes the JWK kid', async () => {
    const c = await resolveConfig(base(), dir);
    expect(c.baseUrl).toBe('https://staging.example.com');
    expect(c.profile).toBe('full');
    expect(c.limits).toEqual({ tokenLifetimeSec: 300, windowSec: 60, tokenIssuancePerMinute: 20 });
    expect(c.deviations).toEqual([]);
    expect(c.timeouts).toEqual({ requestMs: 15000, runMs: 3600000 });
    expect(c.redactPhi).toBe(false);
    expect(c.sourceAddress).toBeUndefined();
    expect((await resolveConfig(base({ sourceAddress: { exclusive: true } }), dir)).sourceAddress).toEqual({ exclusive: true });
    expect((await resolveConfig(base({ sourceAddress: { trustedProxy: true } }), dir)).sourceAddress).toEqual({ exclusive: false, trustedProxy: true });
    expect(c.source).toBe('embedded');
    expect(c.clients[0]).toMatchObject({ role: 'main', clientId: 'c-main', kid: 'ec-kid', alg: 'ES384', rateLimitPerMinute: 60 });
    expect(c.clients[0]!.publicJwk).toMatchObject({ kty: 'EC', crv: 'P-384', kid: 'ec-kid', alg: 'ES384', use: 'sig' });
    expect(c.clients[0]!.publicJwk).not.toHaveProperty('d');
  });

  it('reads PEM keys from files and JWK/PEM keys from env vars; kid defaults to the thumbprint', async () => {
    process.env.FC_TEST_RSA_JWK = jwkOf(rsaKey);
    process.env.FC_TEST_EC_PEM = ecPem();
    try {
      const c = await resolveConfig(
        base({
          clients: [
            { role: 'main', clientId: 'a', alg: 'ES384', privateKey: { file: 'ec.pem' } },
            { role: 'extra', clientId: 'b', alg: 'RS384', privateKey: { env: 'FC_TEST_RSA_JWK' } },
            { role: 'extra', clientId: 'c', alg: 'ES384', kid: 'mine', privateKey: { env: 'FC_TEST_EC_PEM' } },
            { role: 'second-org', clientId: 'd', alg: 'RS384', privateKey: { file: 'rsa.pem' }, rateLimitPerMinute: 120 },
          ],
        }),
        dir,
      );
      expect(c.clients.map((x) => x.alg)).toEqual(['ES384', 'RS384', 'ES384', 'RS384']);
      expect(c.clients[0]!.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(c.clients[2]!.kid).toBe('mine');
      expect(c.clients[3]!.rateLimitPerMinute).toBe(120);
      expect(c.clients[1]!.publicJwk).toMatchObject({ kty: 'RSA', alg: 'RS384' });
    } finally {
      delete process.env.FC_TEST_RSA_JWK;
      delete process.env.FC_TEST_EC_PEM;
    }
  });

  it('every algorithm: an explicit alg, else the JWK alg, else the kind of key (RSA: all RS*/PS*, RS384 first)', async () => {
    const keys = {
      p256: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
      p521: generateKeyPairSync('ec', { namedCurve: 'P-521' }).privateKey,
      ed: generateKeyPairSync('ed25519').privateKey,
    };
    await writeFile(join(dir, 'p256.pem'), keys.p256.export({ type: 'pkcs8', format: 'pem' }));
    await writeFile(join(dir, 'p521.jwk.json'), jwkOf(keys.p521));
    await writeFile(join(dir, 'ed.jwk.json'), jwkOf(keys.ed, { kid: 'ed-kid' }));
    await writeFile(join(dir, 'rsa.ps512.jwk.json'), jwkOf(rsaKey, { alg: 'PS512' }));
    const c = await resolveConfig(
      base({
        clients: [
          { role: 'main', clientId: 'a', privateKey: { file: 'p256.pem' } },
          { role: 'extra', clientId: 'b', privateKey: { file: 'p521.jwk.json' } },
          { role: 'extra', clientId: 'c', privateKey: { file: 'ed.jwk.json' } },
          { role: 'extra', clientId: 'd', privateKey: { file: 'rsa.pem' } },
          { role: 'extra', clientId: 'e', alg: 'PS384', privateKey: { file: 'rsa.jwk.json' } },
          { role: 'extra', clientId: 'f', privateKey: { file: 'rsa.ps512.jwk.json' } },
          { role: 'extra', clientId: 'g', alg: 'EdDSA', privateKey: { file: 'ed.pem' } },
          { role: 'extra', clientId: 'h', privateKey: { file: 'ec.jwk.json' } },
        ],
      }),
      dir,
    );
    expect(c.clients.map((x) => [x.alg, x.algSource, x.algs.length])).toEqual([
      ['ES256', 'key', 1],
      ['ES512', 'key', 1],
      ['EdDSA', 'key', 1],
      ['RS384', 'key', 6],
      ['PS384', 'config', 1],
      ['PS512', 'jwk', 1],
      ['EdDSA', 'config', 1],
      ['ES384', 'key', 1],
    ]);
    expect(c.clients[3]!.algs).toEqual(['RS384', 'RS256', 'RS512', 'PS256', 'PS384', 'PS512']);
    expect(c.clients.map((x) => x.publicJwk.alg)).toEqual(['ES256', 'ES512', 'EdDSA', 'RS384', 'PS384', 'PS512', 'EdDSA', 'ES384']);
    expect(c.clients[1]!.publicJwk).toMatchObject({ kty: 'EC', crv: 'P-521' });
    expect(c.clients[2]!.publicJwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519', kid: 'ed-kid', use: 'sig' });
    expect(c.clients[2]!.publicJwk).not.toHaveProperty('d');
  });

  it('lists declared deviations and derives jwksUri from jwksHosting', async () => {
    const c = await resolveConfig(
      base({ limits: { tokenLifetimeSec: 20, windowSec: 10 }, jwksHosting: { host: '127.0.0.1', port: 9999, path: '/jwks.json' } }),
      dir,
    );
    expect(c.deviations).toEqual(['token lifetime 20 s (spec: 300 s)', 'rate-limit window 10 s (spec: 60 s)']);
    expect(c.limits.tokenIssuancePerMinute).toBe(20);
    expect(c.clients[0]!.jwksUri).toBe('http://127.0.0.1:9999/jwks.json');
  });

  it('applies the profile and baseUrl overrides', async () => {
    const c = await resolveConfig(base({ profile: 'quick' }), dir, { profile: 'read-only', baseUrl: 'http://127.0.0.1:1234/' });
    expect(c.profile).toBe('read-only');
    expect(c.baseUrl).toBe('http://127.0.0.1:1234');
  });

  it('certification accepts a config without deviations', async () => {
    const c = await resolveConfig(base({ limits: { windowSec: 60 } }), dir, { profile: 'certification' });
    expect(c.profile).toBe('certification');
  });

  it('fixtures/example-target.json loads with all four reference clients and the reference fixture ids', async () => {
    const c = await loadConfig(new URL('../../fixtures/example-target.json', import.meta.url).pathname);
    expect(c.baseUrl).toBe('http://127.0.0.1:4780');
    expect(c.clients.map((x) => x.role).sort()).toEqual(['extra', 'main', 'production', 'second-org']);
    const ids = JSON.parse(await readFile(new URL('../../fixtures/reference/fixture-ids.json', import.meta.url), 'utf8'));
    expect(Object.keys(c.fixtures).length).toBeGreaterThan(0);
    for (const [key, id] of Object.entries(c.fixtures)) expect(id).toBe(ids[key]);
    expect(c.source).toMatch(/example-target\.json$/);
  });
});

describe('resolveConfig: every error names the field and the fix', () => {
  const cases: [string, Record<string, unknown>, string, RegExp?][] = [
    ['missing baseUrl', { baseUrl: undefined }, 'baseUrl'],
    ['non-http baseUrl', { baseUrl: 'ftp://x.example' }, 'baseUrl', /http/],
    ['no clients', { clients: [] }, 'clients'],
    [
      'bad alg',
      { clients: [{ role: 'main', clientId: 'a', alg: 'HS256', privateKey: { file: 'ec.jwk.json' } }] },
      'clients[0].alg',
      /^use "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512" or "EdDSA" /,
    ],
    ['unknown role', { clients: [{ role: 'boss', clientId: 'a', alg: 'ES384', privateKey: { file: 'ec.jwk.json' } }] }, 'clients[0].role'],
    [
      'inline key material',
      { clients: [{ role: 'main', clientId: 'a', alg: 'ES384', privateKey: { kty: 'EC', d: 'x' } }] },
      'clients[0].privateKey.kty',
      /file|env/,
    ],
    ['both file and env', { clients: [{ role: 'main', clientId: 'a', alg: 'ES384', privateKey: { file: 'a', env: 'B' } }] }, 'clients[0].privateKey'],
    ['unknown top-level field', { bogus: 1 }, 'bogus'],
    ['unknown fixture key', { fixtures: { patient: 'p', notAFixture: 'x' } }, 'fixtures.notAFixture', /fixture-ids/],
    ['bad profile', { profile: 'fast' }, 'profile', /"quick"/],
    ['non-integer limit', { limits: { windowSec: 1.5 } }, 'limits.windowSec'],
    ['jwksHosting port out of range', { jwksHosting: { host: '127.0.0.1', port: 70000, path: '/j' } }, 'jwksHosting.port'],
    ['sourceAddress.exclusive not a boolean', { sourceAddress: { exclusive: 'yes' } }, 'sourceAddress.exclusive'],
    ['sourceAddress.trustedProxy not a boolean', { sourceAddress: { trustedProxy: 'yes' } }, 'sourceAddress.trustedProxy'],
    ['no main client', { clients: [{ role: 'extra', clientId: 'a', alg: 'ES384', privateKey: { file: 'ec.jwk.json' } }] }, 'clients', /"role": "main"/],
    [
      'duplicate main',
      {
        clients: [
          { role: 'main', clientId: 'a', alg: 'ES384', privateKey: { file: 'ec.jwk.json' } },
          { role: 'main', clientId: 'b', alg: 'ES384', privateKey: { file: 'ec.jwk.json' } },
        ],
      },
      'clients[1].role',
    ],
    ['missing key file', { clients: [{ role: 'main', clientId: 'a', alg: 'ES384', privateKey: { file: 'nope.json' } }] }, 'clients[0].privateKey.file'],
    [
      'missing env var',
      { clients: [{ role: 'main', clientId: 'a', alg: 'ES384', privateKey: { env: 'FC_TEST_UNSET_VAR' } }] },
      'clients[0].privateKey.env',
      /export FC_TEST_UNSET_VAR/,
    ],
    ['key that does not parse', { clients: [{ role: 'main', clientId: 'a', alg: 'ES384', privateKey: { file: 'garbage.txt' } }] }, 'clients[0].privateKey'],
    [
      'public JWK instead of private',
      { clients: [{ role: 'main', clientId: 'a', alg: 'ES384', privateKey: { file: 'ec.public.jwk.json' } }] },
      'clients[0].privateKey',
      /private/,
    ],
    ['EC key with alg RS384', { clients: [{ role: 'main', clientId: 'a', alg: 'RS384', privateKey: { file: 'ec.pem' } }] }, 'clients[0].privateKey', /RSA/],
    [
      'RSA key with alg ES384',
      { clients: [{ role: 'main', clientId: 'a', alg: 'ES384', privateKey: { file: 'rsa.jwk.json' } }] },
      'clients[0].privateKey',
      /P-384/,
    ],
    [
      'P-384 key with alg ES256',
      { clients: [{ role: 'main', clientId: 'a', alg: 'ES256', privateKey: { file: 'ec.pem' } }] },
      'clients[0].privateKey',
      /EC P-256/,
    ],
    [
      'Ed25519 key with alg PS256',
      { clients: [{ role: 'main', clientId: 'a', alg: 'PS256', privateKey: { file: 'ed.pem' } }] },
      'clients[0].privateKey',
      /Ed25519 key, which cannot sign PS256/,
    ],
    [
      'RSA key of 1024 bits',
      { clients: [{ role: 'main', clientId: 'a', privateKey: { file: 'rsa1024.pem' } }] },
      'clients[0].privateKey',
      /at least 2048 bits/,
    ],
    ['an Ed448 key, which signs none', { clients: [{ role: 'main', clientId: 'a', privateKey: { file: 'ed448.pem' } }] }, 'clients[0].privateKey', /Ed25519/],
    [
      'a JWK whose alg the suite cannot sign with',
      { clients: [{ role: 'main', clientId: 'a', privateKey: { file: 'ec.hs.jwk.json' } }] },
      'clients[0].privateKey',
      /"HS256"/,
    ],
    [
      'a JWK whose alg its key cannot sign',
      { clients: [{ role: 'main', clientId: 'a', privateKey: { file: 'ec.es256.jwk.json' } }] },
      'clients[0].privateKey',
      /cannot sign ES256/,
    ],
    [
      'kid differing from the JWK',
      { clients: [{ role: 'main', clientId: 'a', kid: 'other', alg: 'ES384', privateKey: { file: 'ec.jwk.json' } }] },
      'clients[0].kid',
      /ec-kid/,
    ],
  ];
  for (const [name, patch, field, fix] of cases) {
    it(name, async () => {
      const e = await configError(base(patch));
      expect(e.field).toBe(field);
      expect(e.message).toContain(field);
      if (fix) expect(`${e.fix} ${e.message}`).toMatch(fix);
    });
  }

  it('the certification profile refuses declared deviations, naming limits.<field>', async () => {
    const e = await configError(base({ limits: { tokenIssuancePerMinute: 5 } }), 'certification');
    expect(e.field).toBe('limits.tokenIssuancePerMinute');
    expect(e.message).toContain('token issuance 5 per window (spec: 20 per minute)');
  });

  it('the config profile "certification" refuses deviations too', async () => {
    const e = await configError(base({ profile: 'certification', limits: { tokenLifetimeSec: 20 } }));
    expect(e.field).toBe('limits.tokenLifetimeSec');
  });

  it('key text never appears in an error message', async () => {
    process.env.FC_TEST_BAD_KEY = ecPem().replace('MI', 'XX');
    try {
      const e = await configError(base({ clients: [{ role: 'main', clientId: 'a', alg: 'ES384', privateKey: { env: 'FC_TEST_BAD_KEY' } }] }));
      expect(e.field).toBe('clients[0].privateKey');
      expect(e.message).not.toContain('PRIVATE KEY');
    } finally {
      delete process.env.FC_TEST_BAD_KEY;
    }
  });
});

describe('loadConfig', () => {
  it('resolves key files relative to the config file and records the source', async () => {
    const path = join(dir, 'target.json');
    await writeFile(path, JSON.stringify(base()));
    const c = await loadConfig(path, { profile: 'quick' });
    expect(c.source).toBe(path);
    expect(c.profile).toBe('quick');
  });

  it('names the file on unreadable or unparsable files', async () => {
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{ "baseUrl": ');
    for (const path of [join(dir, 'absent.json'), bad]) {
      const e = (await loadConfig(path).catch((x: unknown) => x)) as ConformanceError;
      expect(e.code).toBe('ERR_CONFIG_INVALID');
      expect(e.field).toBe('(file)');
      expect(e.message).toContain(path);
      expect(e.fix).toBeTruthy();
    }
  });
});

describe('redactedConfig', () => {
  it('keeps key sources but no key material', async () => {
    const pem = ecPem();
    process.env.FC_TEST_EC_PEM2 = pem;
    try {
      const c = await resolveConfig(base({ clients: [{ role: 'main', clientId: 'a', alg: 'ES384', privateKey: { env: 'FC_TEST_EC_PEM2' } }] }), dir);
      const text = JSON.stringify(redactedConfig(c));
      expect(text).toContain('FC_TEST_EC_PEM2');
      expect(text).toContain('[redacted]');
      const d = (ecKey.export({ format: 'jwk' }) as { d: string }).d;
      expect(text).not.toContain(d);
      expect(text).not.toContain('PRIVATE KEY');
      expect(text).not.toContain(pem.split('\n')[1]!);
    } finally {
      delete process.env.FC_TEST_EC_PEM2;
    }
  });
});

describe('fixture keys', () => {
  it('FIXTURE_KEYS are the keys of fixture-ids.json minus orgA/orgB', async () => {
    const ids = JSON.parse(await readFile(new URL('../../fixtures/reference/fixture-ids.json', import.meta.url), 'utf8'));
    expect([...FIXTURE_KEYS].sort()).toEqual(
      Object.keys(ids)
        .filter((k) => k !== 'orgA' && k !== 'orgB')
        .sort(),
    );
  });
});

describe('clients[].keyKind', () => {
  const client = (role: string, keyKind?: string) => ({
    role,
    clientId: `c-${role}`,
    alg: 'ES384',
    privateKey: { file: 'ec.jwk.json' },
    ...(keyKind ? { keyKind } : {}),
  });

  it('is unknown unless declared; role production is a production key', async () => {
    const c = await resolveConfig(base({ clients: [client('main'), client('extra', 'sandbox'), client('production')] }), dir);
    expect(c.clients.map((x) => x.keyKind)).toEqual([undefined, 'sandbox', 'production']);
    expect((redactedConfig(c) as { clients: Array<{ keyKind: string }> }).clients.map((x) => x.keyKind)).toEqual(['unknown', 'sandbox', 'production']);
  });

  it('a main key may be declared production', async () => {
    const c = await resolveConfig(base({ clients: [client('main', 'production')] }), dir);
    expect(c.clients[0]!.keyKind).toBe('production');
  });

  it('refuses a sandbox kind on the production role and an unknown kind, naming the field', async () => {
    expect((await configError(base({ clients: [client('main'), client('production', 'sandbox')] }))).field).toBe('clients[1].keyKind');
    expect((await configError(base({ clients: [client('main', 'test')] }))).field).toBe('clients[0].keyKind');
  });
});
