/** Each client's signing algorithm settled against the target's token_endpoint_auth_signing_alg_values_supported. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResolvedClient, ResolvedConfig } from '../../src/config/index.js';
import { applySigningAlgs, settleSigningAlgs } from '../../src/run/signing-algs.js';
import { SetupStop } from '../../src/run/preflight.js';
import { testClient } from '../auth/helpers.js';

const RSA_ALGS = ['RS384', 'RS256', 'RS512', 'PS256', 'PS384', 'PS512'] as const;

function config(clients: ResolvedClient[], baseUrl = 'https://t.example'): ResolvedConfig {
  return {
    baseUrl,
    clients,
    fixtures: {},
    limits: { tokenLifetimeSec: 300, windowSec: 60, tokenIssuancePerMinute: 20 },
    deviations: [],
    profile: 'quick',
    timeouts: { requestMs: 5000, runMs: 60_000 },
    redactPhi: false,
    documentReference: {},
    source: 'target.json',
  };
}

/** An RSA client whose key leaves the algorithm open (no alg in the config or the JWK). */
const rsaOpen = (): ResolvedClient => ({ ...testClient('extra', 'RS384', 'rsa-open'), algs: [...RSA_ALGS], algSource: 'key' });
const ecFromKey = (): ResolvedClient => ({ ...testClient('main', 'ES256', 'ec'), algSource: 'key' });

describe('applySigningAlgs', () => {
  it('nothing published: every client keeps its preferred algorithm (RSA: RS384)', () => {
    const c = config([ecFromKey(), rsaOpen()]);
    expect(applySigningAlgs(c, undefined)).toBe(c);
  });

  it("an RSA key without alg takes the first algorithm of the target's list it signs; the public JWK follows", () => {
    const settled = applySigningAlgs(config([ecFromKey(), rsaOpen()]), ['EdDSA', 'PS256', 'ES256', 'RS384']);
    expect(settled.clients.map((c) => [c.alg, c.algSource, c.publicJwk.alg])).toEqual([
      ['ES256', 'key', 'ES256'],
      ['PS256', 'target', 'PS256'],
    ]);
  });

  it('an algorithm the key gives that the list lacks stops the run with exit 2, naming the client, the field and the lists', () => {
    const e = (() => {
      try {
        applySigningAlgs(config([ecFromKey(), rsaOpen()]), ['ES384', 'EdDSA']);
      } catch (x) {
        return x;
      }
    })() as SetupStop;
    expect(e).toBeInstanceOf(SetupStop);
    expect(e.exitCode).toBe(2);
    expect(e.message).toBe(
      'Cannot run: clients[0] (role main, client "ec") signs ES256 (by its key (clients[0].privateKey)), which the target\'s token_endpoint_auth_signing_alg_values_supported (ES384, EdDSA) does not list; ' +
        'clients[1] (role extra, client "rsa-open") signs RS384, RS256, RS512, PS256, PS384, PS512 (by its key (clients[1].privateKey)), which the target\'s token_endpoint_auth_signing_alg_values_supported (ES384, EdDSA) does not list. ' +
        'Register a key whose algorithm the target lists (fhir-conformance init --alg ALG generates one), or, if the target accepts the algorithm all the same, state it as clients[].alg in target.json.',
    );
    const fromJwk = { ...testClient('main', 'PS512', 'ps'), algSource: 'jwk' as const };
    expect(() => applySigningAlgs(config([fromJwk]), ['RS256'])).toThrow(/signs PS512 \(by the "alg" of clients\[0\]\.privateKey\)/);
  });

  it('an alg the config states wins, listed or not', () => {
    const stated = testClient('main', 'PS384', 'stated');
    const c = config([stated]);
    expect(applySigningAlgs(c, ['ES384']).clients[0]).toBe(stated);
  });
});

describe('settleSigningAlgs: one GET of smart-configuration', () => {
  let server: Server;
  let base: string;
  let answer: { status: number; body: unknown } = { status: 200, body: {} };
  let gets = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      gets++;
      expect(req.url).toBe('/fhir/.well-known/smart-configuration');
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

  it('reads the list and says what each client signs with', async () => {
    answer = { status: 200, body: { token_endpoint: `${base}/auth/token`, token_endpoint_auth_signing_alg_values_supported: ['PS384', 'ES256'] } };
    const counter = { count: 0 };
    const r = await settleSigningAlgs(config([ecFromKey(), rsaOpen()], base), { deadline: Date.now() + 10_000, counter });
    expect(r.config.clients.map((c) => c.alg)).toEqual(['ES256', 'PS384']);
    expect(r.line).toBe("signing algorithms: main ES256, extra PS384 (from the target's list)");
    expect(counter.count).toBe(1);
  });

  it('no list, a malformed one, or a 401: the preferred algorithms, and the line says the target publishes none', async () => {
    for (const a of [
      { status: 200, body: { token_endpoint: 'x' } },
      { status: 200, body: { token_endpoint_auth_signing_alg_values_supported: 'RS256' } },
      { status: 401, body: { resourceType: 'OperationOutcome' } },
    ]) {
      answer = a;
      const r = await settleSigningAlgs(config([rsaOpen()], base), { deadline: Date.now() + 10_000 });
      expect(r.config.clients[0]!.alg).toBe('RS384');
      expect(r.line).toBe('signing algorithms: extra RS384 (the target publishes no token_endpoint_auth_signing_alg_values_supported)');
    }
    expect(gets).toBe(4);
  });
});
