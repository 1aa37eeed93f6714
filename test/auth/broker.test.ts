import { decodeJwt, importJWK, jwtVerify, UnsecuredJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { TokenBroker, CLIENT_ASSERTION_TYPE } from '../../src/auth/broker.js';
import type { ResolvedClient } from '../../src/config/index.js';
import { type ConformanceError, SkipSignal } from '../../src/errors.js';
import type { HttpResponse, RequestOptions } from '../../src/http/types.js';
import { FakeClock, testClient } from './helpers.js';

const TOKEN_URL = 'https://target.example/auth/token';
let main: ResolvedClient;
let orgB: ResolvedClient;

beforeAll(() => {
  main = testClient('main');
  orgB = testClient('second-org', 'RS384');
});

interface Sent {
  opts: RequestOptions;
  sentAt: number;
  doneAt?: number;
}

type Reply = { status: number; body?: unknown; headers?: Record<string, string>; text?: string };

/** A fake token endpoint: answers with `reply(n)` after `latencyMs` of virtual time. */
function fakeHttp(clock: FakeClock, reply: (n: number, opts: RequestOptions) => Reply = (n) => okReply(n), latencyMs = 0) {
  const sent: Sent[] = [];
  const http = {
    async request(opts: RequestOptions): Promise<HttpResponse> {
      const entry: Sent = { opts, sentAt: clock.now() };
      sent.push(entry);
      if (latencyMs > 0) await clock.sleep(latencyMs);
      const r = reply(sent.length, opts);
      entry.doneAt = clock.now();
      const text = r.text ?? JSON.stringify(r.body ?? {});
      return {
        status: r.status,
        headers: r.headers ?? {},
        text,
        json: r.body,
        bodyTruncated: false,
        exchange: { id: `x-${sent.length}`, startedAt: '', durationMs: 0, request: { method: 'POST', url: opts.url, headers: {} }, curl: '' },
      };
    },
  };
  return { http, sent };
}

function okReply(n: number, extra: Record<string, unknown> = { expires_in: 300 }): Reply {
  return { status: 200, body: { access_token: `access-token-number-${n}`, token_type: 'Bearer', ...extra } };
}

function broker(clock: FakeClock, http: ReturnType<typeof fakeHttp>['http'], over: Partial<ConstructorParameters<typeof TokenBroker>[0]> = {}) {
  return new TokenBroker({
    http,
    tokenUrl: TOKEN_URL,
    clients: [main, orgB],
    issuancePerMinute: 20,
    windowSec: 60,
    tokenLifetimeSec: 300,
    now: clock.now,
    sleep: clock.sleep,
    ...over,
  });
}

describe('TokenBroker.token', () => {
  it('sends a form-encoded client_credentials request with a valid assertion for the token URL', async () => {
    const clock = new FakeClock();
    const { http, sent } = fakeHttp(clock);
    const b = broker(clock, http);
    expect(await clock.run(b.token('second-org', ['system/Encounter.rs']))).toBe('access-token-number-1');
    const { opts } = sent[0]!;
    expect(opts).toMatchObject({ method: 'POST', url: TOKEN_URL, secretFields: ['client_assertion'], retry: 'none' });
    expect(opts.form).toMatchObject({ grant_type: 'client_credentials', client_assertion_type: CLIENT_ASSERTION_TYPE, scope: 'system/Encounter.rs' });
    const { payload } = await jwtVerify(opts.form!.client_assertion!, await importJWK(orgB.publicJwk, 'RS384'), {
      audience: TOKEN_URL,
      currentDate: new Date(clock.now()),
    });
    expect(payload).toMatchObject({ iss: orgB.clientId, sub: orgB.clientId });
    expect(b.issued).toBe(1);
  });

  it('tells onIssued of each token issued (by role, even when asked by client id), with its expiry; never the token; not of a refusal', async () => {
    const clock = new FakeClock();
    const { http } = fakeHttp(clock, (n) => (n === 3 ? { status: 429, body: {}, headers: { 'retry-after': '1' } } : okReply(n)));
    const issued: unknown[] = [];
    const b = broker(clock, http, { onIssued: (info) => issued.push({ client: info.client, exchange: info.exchange.id, expiresAt: info.expiresAt }) });
    await clock.run(b.token('main', ['a']));
    await clock.run(b.request(orgB.clientId, { scopes: ['b'] }));
    await clock.run(b.request('main', { scopes: ['c'] }));
    // The exchange's startedAt ('' here) is when the lifetime starts: expiresAt is NaN + 300 s.
    expect(issued.map((i) => ({ ...(i as object), expiresAt: typeof (i as { expiresAt: unknown }).expiresAt }))).toEqual([
      { client: 'main', exchange: 'x-1', expiresAt: 'number' },
      { client: 'second-org', exchange: 'x-2', expiresAt: 'number' },
    ]);
    expect(JSON.stringify(issued)).not.toContain('access-token');
  });

  it('caches per role and scope set (order and duplicates do not matter)', async () => {
    const clock = new FakeClock();
    const { http, sent } = fakeHttp(clock);
    const b = broker(clock, http);
    const t1 = await clock.run(b.token('main', ['a', 'b']));
    expect(await clock.run(b.token('main', ['b', 'a', 'a']))).toBe(t1);
    const t2 = await clock.run(b.token('main', ['a']));
    const t3 = await clock.run(b.token('second-org', ['a', 'b']));
    expect(new Set([t1, t2, t3]).size).toBe(3);
    expect(sent.length).toBe(3);
    expect(await clock.run(b.token('main', ['a']))).toBe(t2);
    expect(b.issued).toBe(3);
  });

  const expiryCases: [string, (n: number) => Reply, number, number][] = [
    // [name, reply, last reuse offset ms, first refresh offset ms]
    ['expires_in 300 s: refresh 30 s before expiry', (n) => okReply(n), 269_000, 270_000],
    ['expires_in 20 s: refresh 10 % (2 s) before expiry', (n) => okReply(n, { expires_in: '20' }), 17_999, 18_000],
    ['JWT exp without expires_in', (n) => ({ status: 200, body: { access_token: jwtExpiringIn(120, n) } }), 107_999, 108_000],
    ['neither: the declared lifetime (100 s)', (n) => okReply(n, {}), 89_999, 90_000],
  ];
  for (const [name, reply, reuseUntil, refreshFrom] of expiryCases) {
    it(name, async () => {
      const clock = new FakeClock();
      const { http, sent } = fakeHttp(clock, reply);
      const b = broker(clock, http, { tokenLifetimeSec: 100 });
      const start = clock.t;
      const t1 = await clock.run(b.token('main', ['s']));
      clock.t = start + reuseUntil;
      expect(await clock.run(b.token('main', ['s']))).toBe(t1);
      clock.t = start + refreshFrom;
      expect(await clock.run(b.token('main', ['s']))).not.toBe(t1);
      expect(sent.length).toBe(2);
    });
  }

  function jwtExpiringIn(sec: number, n: number): string {
    return new UnsecuredJWT({ n }).setExpirationTime(Math.floor(1_000_000 / 1000) + sec).encode();
  }

  it('concurrent calls for the same key share one request', async () => {
    const clock = new FakeClock();
    const { http, sent } = fakeHttp(clock, (n) => okReply(n), 500);
    const b = broker(clock, http);
    const tokens = await clock.run(Promise.all([1, 2, 3, 4, 5].map(() => b.token('main', ['x', 'y']))));
    expect(new Set(tokens).size).toBe(1);
    expect(sent.length).toBe(1);
  });

  it('a failed issuance is not cached: the next call retries', async () => {
    const clock = new FakeClock();
    const { http, sent } = fakeHttp(clock, (n) =>
      n === 1 ? { status: 500, body: { resourceType: 'OperationOutcome', issue: [{ code: 'exception' }] } } : okReply(n),
    );
    const b = broker(clock, http);
    await expect(clock.run(b.token('main', ['s']))).rejects.toThrow(/HTTP 500, exception/);
    expect(await clock.run(b.token('main', ['s']))).toBe('access-token-number-2');
    expect(sent.length).toBe(2);
  });
});

describe('TokenBroker.covering', () => {
  it('answers with a usable token of the role whose scopes include the asked ones, else issues one for exactly those', async () => {
    const clock = new FakeClock();
    const { http, sent } = fakeHttp(clock);
    const b = broker(clock, http, { tokenLifetimeSec: 100 });
    const wide = await clock.run(b.token('main', ['a', 'b', 'c']));
    expect(await clock.run(b.covering('main', ['b', 'a']))).toBe(wide);
    expect(sent.length).toBe(1);
    // Another role's token never serves; a scope the held token lacks gets its own token.
    const other = await clock.run(b.covering('second-org', ['a']));
    expect(other).not.toBe(wide);
    const narrow = await clock.run(b.covering('main', ['a', 'd']));
    expect(sent.map((s) => s.opts.form?.scope)).toEqual(['a b c', 'a', 'a d']);
    expect(narrow).not.toBe(wide);
    // Past its refresh point the wide token no longer serves: the newest covering one does.
    clock.t += 280_000;
    const fresh = await clock.run(b.covering('main', ['a']));
    expect([wide, narrow]).not.toContain(fresh);
    expect(sent.length).toBe(4);
  });

  it('with nothing held, asks for all the scopes the client declares (when they include these); refused, for exactly these from then on', async () => {
    const clock = new FakeClock();
    const { http, sent } = fakeHttp(clock);
    const declared = { ...main, scopes: ['a', 'b', 'c'] };
    const b = broker(clock, http, { clients: [declared, orgB] });
    const wide = await clock.run(b.covering('main', ['b']));
    expect(await clock.run(b.covering('main', ['a', 'c']))).toBe(wide);
    // A scope it does not declare: exactly the asked ones.
    await clock.run(b.covering('main', ['d']));
    expect(sent.map((x) => x.opts.form?.scope)).toEqual(['a b c', 'd']);

    // An endpoint that refuses the declared set as a whole (one scope of it not granted with the other).
    const { http: http2, sent: sent2 } = fakeHttp(clock, (n, opts) =>
      opts.form?.scope === 'a z' ? { status: 403, body: { resourceType: 'OperationOutcome', issue: [{ code: 'forbidden' }] } } : okReply(n),
    );
    const b2 = broker(clock, http2, { clients: [{ ...main, scopes: ['a', 'z'] }, orgB] });
    expect(await clock.run(b2.covering('main', ['a']))).toMatch(/^access-token-number-/);
    await clock.run(b2.covering('main', ['a']));
    await clock.run(b2.covering('main', ['z']));
    // The declared set refused once: the asked scopes alone, and never the declared set again.
    expect(sent2.map((x) => x.opts.form?.scope)).toEqual(['a z', 'a', 'z']);
  });

  it('in a read-only run asks for the declared read scopes only', async () => {
    const clock = new FakeClock();
    const { http, sent } = fakeHttp(clock);
    const declared = { ...main, scopes: ['x/A.rs', 'x/A.cru', 'x/B.rs', 'x/B.c'] };
    const b = broker(clock, http, { clients: [declared, orgB], readOnly: true });
    await clock.run(b.covering('main', ['x/A.rs']));
    await clock.run(b.covering('main', ['x/B.rs']));
    // A write scope (never asked in a read-only run): exactly the asked one.
    await clock.run(b.covering('main', ['x/A.cru']));
    expect(sent.map((x) => x.opts.form?.scope)).toEqual(['x/A.rs x/B.rs', 'x/A.cru']);
  });

  it('waits for a covering token on its way instead of sending a second request', async () => {
    const clock = new FakeClock();
    const { http, sent } = fakeHttp(clock, (n) => okReply(n), 500);
    const b = broker(clock, http);
    const [wide, covered] = await clock.run(Promise.all([b.token('main', ['x', 'y']), b.covering('main', ['y'])]));
    expect(covered).toBe(wide);
    expect(sent.length).toBe(1);
  });
});

describe('TokenBroker.renewCovering', () => {
  it("re-issues a role's covering token that would not stay usable through the horizon, and only that", async () => {
    const clock = new FakeClock();
    const { http, sent } = fakeHttp(clock);
    const b = broker(clock, http, {
      clients: [
        { ...main, scopes: ['a', 'b'] },
        { ...orgB, scopes: ['c'] },
      ],
    });
    const old = await clock.run(b.covering('main', ['a']));
    await clock.run(b.token('main', ['a'])); // an exact-scope token: never renewed
    clock.t += 100_000;
    const other = await clock.run(b.covering('second-org', ['c']));
    // At 250 s main's covering token (300 s, refreshed 30 s before its end) has 20 s left; second-org's 120 s.
    clock.t += 150_000;
    expect(await clock.run(b.renewCovering(100_000))).toBe(1);
    expect(sent.map((x) => x.opts.form?.scope)).toEqual(['a b', 'a', 'c', 'a b']);
    const renewed = await clock.run(b.covering('main', ['b']));
    expect(renewed).not.toBe(old);
    expect(await clock.run(b.covering('second-org', ['c']))).toBe(other);
    // Nothing left to renew within the horizon; a role that never held one is not asked for.
    expect(await clock.run(b.renewCovering(100_000))).toBe(0);
    // The old token's holders are handed the renewed one once it is no longer usable, without a token request.
    clock.t += 30_000;
    expect(await clock.run(b.current(old))).toBe(renewed);
    expect(sent.length).toBe(4);
  });

  it('keeps the old token when the renewal is refused', async () => {
    const clock = new FakeClock();
    const { http, sent } = fakeHttp(clock, (n) => (n === 1 ? okReply(n) : { status: 400, body: { error: 'invalid_client' } }));
    const b = broker(clock, http, { clients: [{ ...main, scopes: ['a'] }, orgB] });
    const old = await clock.run(b.covering('main', ['a']));
    clock.t += 250_000;
    expect(await clock.run(b.renewCovering(180_000))).toBe(1);
    expect(sent.length).toBe(2);
    expect(await clock.run(b.covering('main', ['a']))).toBe(old);
  });
});

describe('TokenBroker.holds', () => {
  it('exact: a token of exactly these scopes; covering: any usable token of the role whose scopes include them', async () => {
    const clock = new FakeClock();
    const { http } = fakeHttp(clock);
    const b = broker(clock, http, { tokenLifetimeSec: 100 });
    await clock.run(b.token('main', ['a', 'b']));
    expect(b.holds('main', ['b', 'a'])).toBe(true);
    expect(b.holds('main', ['a'])).toBe(false);
    expect(b.holds('main', ['a'], { covering: true })).toBe(true);
    expect(b.holds('main', ['a', 'c'], { covering: true })).toBe(false);
    expect(b.holds('second-org', ['a'], { covering: true })).toBe(false);
    // Past its refresh point the token no longer counts.
    clock.t += 280_000;
    expect(b.holds('main', ['a'], { covering: true })).toBe(false);
  });
});

describe('TokenBroker.alone: the token endpoint to one section', () => {
  it('starts after the token request in flight ends, holds later ones until it ends, and sends its own at once', async () => {
    const clock = new FakeClock();
    const { http, sent } = fakeHttp(clock, (n) => okReply(n), 1000);
    const b = broker(clock, http);
    const events: string[] = [];
    const before = b.token('main', ['a']).then(() => events.push(`before done ${clock.now()}`));
    await new Promise((r) => setImmediate(r));
    let other: Promise<unknown> = Promise.resolve();
    const section = b.alone(async (request) => {
      events.push(`section starts ${clock.now()}`);
      // Another check's request meanwhile: it must not go out while the section runs.
      other = b.token('second-org', ['b']).then(() => events.push(`other done ${clock.now()}`));
      const own = await request('main', { scopes: ['c'] });
      events.push(`own done ${clock.now()} ${own.status}`);
    });
    await clock.run(Promise.all([before, section]));
    await clock.run(other);
    // (The section and the earlier caller both resume when that answer comes, in either order.)
    expect([...events].sort()).toEqual(['before done 1001000', 'other done 1003000', 'own done 1002000 200', 'section starts 1001000']);
    // The other check's request left only after the section's own answer.
    expect(sent.map((s) => [s.opts.form?.scope, s.sentAt])).toEqual([
      ['a', 1_000_000],
      ['c', 1_001_000],
      ['b', 1_002_000],
    ]);
  });
});

describe('TokenBroker.request: beforeSend', () => {
  it('runs after the wait for the issuance window and the signing, right before the request leaves', async () => {
    const clock = new FakeClock();
    const { http, sent } = fakeHttp(clock);
    const b = broker(clock, http, { issuancePerMinute: 1, windowSec: 60 });
    const start = clock.t;
    await clock.run(b.freshToken('main', ['a']));
    let ranAt: number | undefined;
    let sentBefore: number | undefined;
    await clock.run(
      b.request('main', {
        scopes: ['b'],
        beforeSend: async () => {
          ranAt = clock.now();
          sentBefore = sent.length;
        },
      }),
    );
    // The window held the second request about 60 s; the hook ran after that wait, before the send.
    expect(ranAt! - start).toBeGreaterThanOrEqual(60_000);
    expect(sentBefore).toBe(1);
    expect(sent[1]!.sentAt).toBe(ranAt);
  });
});

describe('TokenBroker.freshToken', () => {
  it('always issues and never feeds the cache', async () => {
    const clock = new FakeClock();
    const { http, sent } = fakeHttp(clock);
    const b = broker(clock, http);
    const f1 = await clock.run(b.freshToken('main', ['s']));
    const f2 = await clock.run(b.freshToken('main', ['s']));
    const cached = await clock.run(b.token('main', ['s']));
    expect(new Set([f1, f2, cached]).size).toBe(3);
    expect(sent.length).toBe(3);
  });
});

/** Max number of instants in any half-open interval [a, a + windowMs). */
function maxInWindow(instants: number[], windowMs: number): number {
  const sorted = [...instants].sort((a, b) => a - b);
  let best = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= windowMs) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

describe('issuance pacing', () => {
  for (const [name, concurrent] of [
    ['sequential', false],
    ['concurrent', true],
  ] as const) {
    it(`${name}: never more than N requests in any window, at send or at response time`, async () => {
      const clock = new FakeClock();
      const { http, sent } = fakeHttp(clock, (n) => okReply(n), 250);
      const waits: { reason: string; ms: number }[] = [];
      const b = broker(clock, http, { issuancePerMinute: 5, windowSec: 60, onWait: (w) => waits.push(w) });
      const start = clock.t;
      const total = 23;
      if (concurrent) {
        await clock.run(Promise.all(Array.from({ length: total }, () => b.freshToken('main', ['s']))));
      } else {
        await clock.run(
          (async () => {
            for (let i = 0; i < total; i++) await b.freshToken('main', ['s']);
          })(),
        );
      }
      expect(sent.length).toBe(total);
      expect(
        maxInWindow(
          sent.map((s) => s.sentAt),
          60_000,
        ),
      ).toBeLessThanOrEqual(5);
      expect(
        maxInWindow(
          sent.map((s) => s.doneAt!),
          60_000,
        ),
      ).toBeLessThanOrEqual(5);
      // It does fill the window: 5 at once, then the next batch after about one window.
      expect(sent.slice(0, 5).every((s) => s.sentAt - start < 60_000)).toBe(true);
      expect(waits.length).toBeGreaterThan(0);
      expect(waits.every((w) => w.reason === 'token issuance limit' && w.ms > 0)).toBe(true);
      expect(clock.t - start).toBeLessThan(5 * 62_000);
    });
  }

  it('unpaced requests go out at once but still count against later paced ones', async () => {
    const clock = new FakeClock();
    const { http, sent } = fakeHttp(clock);
    const b = broker(clock, http, { issuancePerMinute: 2, windowSec: 10 });
    const start = clock.t;
    await clock.run(Promise.all([1, 2, 3].map(() => b.request('main', { pace: false, expect429: true }))));
    expect(sent.map((s) => s.sentAt - start)).toEqual([0, 0, 0]);
    expect(sent[0]!.opts).toMatchObject({ pace: false, expect429: true });
    await clock.run(b.request('main'));
    expect(sent[3]!.sentAt - start).toBeGreaterThanOrEqual(10_000);
  });
});

describe('adopting a token issued through another broker', () => {
  it("sentElsewhere: the adopted token request counts against this broker's issuance limit, and the token is reused", async () => {
    const clock = new FakeClock();
    const other = fakeHttp(clock);
    const elsewhere = await clock.run(broker(clock, other.http, { issuancePerMinute: 2, windowSec: 10 }).request('main', { scopes: ['s'] }));
    elsewhere.exchange.startedAt = new Date(clock.now()).toISOString();
    const { http, sent } = fakeHttp(clock, (n) => okReply(100 + n));
    const b = broker(clock, http, { issuancePerMinute: 2, windowSec: 10 });
    const start = clock.t;
    b.adopt('main', ['s'], elsewhere, { sentElsewhere: true });
    expect(b.issued).toBe(1);
    // The adopted token serves its scopes: no request.
    expect(await clock.run(b.token('main', ['s']))).toBe('access-token-number-1');
    expect(sent).toHaveLength(0);
    // One slot left in the window, then the next waits for the adopted request's slot to free.
    await clock.run(b.freshToken('main', ['t']));
    await clock.run(b.freshToken('main', ['u']));
    expect(sent[0]!.sentAt - start).toBe(0);
    expect(sent[1]!.sentAt - start).toBeGreaterThanOrEqual(10_000);
  });
});

describe('Retry-After from the token endpoint', () => {
  it('token() waits Retry-After after a 429, then succeeds', async () => {
    const clock = new FakeClock();
    const reply = (n: number): Reply =>
      n === 1 ? { status: 429, headers: { 'retry-after': '7' }, body: { resourceType: 'OperationOutcome', issue: [{ code: 'throttled' }] } } : okReply(n);
    const { http, sent } = fakeHttp(clock, reply);
    const waits: string[] = [];
    const b = broker(clock, http, { onWait: (w) => waits.push(`${w.reason} ${w.ms}`) });
    expect(await clock.run(b.token('main', ['s']))).toBe('access-token-number-2');
    expect(sent[1]!.sentAt - sent[0]!.doneAt!).toBe(7_000);
    expect(waits).toEqual(['token endpoint Retry-After 7000']);
  });

  it('a raw request that got 429 delays the next issuance; an HTTP-date is understood', async () => {
    const clock = new FakeClock();
    const date = () => new Date(clock.now() + 12_000).toUTCString();
    const { http, sent } = fakeHttp(clock, (n) => (n === 1 ? { status: 429, headers: { 'retry-after': date() } } : okReply(n)));
    const b = broker(clock, http);
    const res = await clock.run(b.request('main', { scopes: ['s'], expect429: true }));
    expect(res.status).toBe(429);
    await clock.run(b.token('main', ['s']));
    expect(sent[1]!.sentAt - sent[0]!.doneAt!).toBeGreaterThanOrEqual(11_000);
  });

  it('gives up with ERR_TOKEN after repeated 429s', async () => {
    const clock = new FakeClock();
    const { http, sent } = fakeHttp(clock, () => ({ status: 429, headers: { 'retry-after': '1' } }));
    const b = broker(clock, http);
    const e = (await clock.run(b.token('main', ['s'])).catch((x: unknown) => x)) as ConformanceError;
    expect(e.code).toBe('ERR_TOKEN');
    expect(e.message).toContain('HTTP 429');
    expect(sent.length).toBe(3);
  });
});

describe('TokenBroker.request', () => {
  it('applies form overrides (null removes a field), omits scope when none, sends raw bodies', async () => {
    const clock = new FakeClock();
    const { http, sent } = fakeHttp(clock);
    const b = broker(clock, http);
    await clock.run(b.request('main', { form: { grant_type: 'password', client_assertion_type: null } }));
    expect(sent[0]!.opts.form).not.toHaveProperty('client_assertion_type');
    expect(sent[0]!.opts.form).not.toHaveProperty('scope');
    expect(sent[0]!.opts.form!.grant_type).toBe('password');

    await clock.run(b.request('main', { rawBody: { contentType: 'application/json', body: '{"grant_type":"client_credentials"}' } }));
    expect(sent[1]!.opts).toMatchObject({ body: '{"grant_type":"client_credentials"}', headers: { 'content-type': 'application/json' } });
    expect(sent[1]!.opts.form).toBeUndefined();

    await clock.run(b.request('main', { assertion: { signWith: 'none' } }));
    expect(sent[2]!.opts.form!.client_assertion!.endsWith('.')).toBe(true);
    expect(b.issued).toBe(3);
  });

  it('an unknown role skips the check that needs it', async () => {
    const clock = new FakeClock();
    const b = broker(clock, fakeHttp(clock).http);
    await expect(b.token('production', ['s'])).rejects.toBeInstanceOf(SkipSignal);
    expect(() => b.client('production')).toThrow(/no client with role "production"/);
  });

  it('assertion() signs for the token URL', async () => {
    const clock = new FakeClock();
    const b = broker(clock, fakeHttp(clock).http);
    expect(decodeJwt(await b.assertion('main', { jti: 'abc' }))).toMatchObject({ aud: TOKEN_URL, jti: 'abc', iss: main.clientId });
  });
});

describe('token errors carry no secret', () => {
  it('ERR_TOKEN: one line with status and issue, never the assertion or a token', async () => {
    const clock = new FakeClock();
    let assertion = '';
    const { http } = fakeHttp(clock, (_n, opts) => {
      assertion = opts.form!.client_assertion!;
      return {
        status: 401,
        body: {
          resourceType: 'OperationOutcome',
          issue: [
            {
              severity: 'error',
              code: 'security',
              diagnostics: `HPB-00106: Authentication failed for ${assertion} (access_token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln)`,
            },
          ],
        },
      };
    });
    const b = broker(clock, http);
    const e = (await clock.run(b.token('main', ['s'])).catch((x: unknown) => x)) as ConformanceError;
    expect(e.code).toBe('ERR_TOKEN');
    expect(e.message).toMatch(/^token request for client "main" failed: HTTP 401, security: HPB-00106: Authentication failed/);
    expect(e.message).not.toContain(assertion);
    expect(e.message).not.toMatch(/eyJ/);
    expect(e.message.split('\n')).toHaveLength(1);
  });

  it('a 2xx without access_token is an ERR_TOKEN that does not echo the body', async () => {
    const clock = new FakeClock();
    const { http } = fakeHttp(clock, () => ({ status: 200, body: { token: 'secret-ish-value-123' } }));
    const e = (await clock.run(broker(clock, http).token('main', ['s'])).catch((x: unknown) => x)) as ConformanceError;
    expect(e.code).toBe('ERR_TOKEN');
    expect(e.message).toBe('token request for client "main" failed: HTTP 200, no access_token in the response');
  });
});

describe('token lifecycle: tokens handed out only while they outlive the send', () => {
  it('an expiring cached token is not handed out: the send margin (request timeout) is capped at a quarter of the lifetime', async () => {
    const clock = new FakeClock();
    const { http, sent } = fakeHttp(clock, (n) => okReply(n, { expires_in: 8 }));
    // 15 s request timeout, 8 s tokens: the margin is 2 s, on top of the refresh point (10 % = 0.8 s).
    const b = broker(clock, http, { sendMarginMs: 15_000 });
    const start = clock.t;
    const t1 = await clock.run(b.token('main', ['s']));
    clock.t = start + 5_199;
    expect(await clock.run(b.token('main', ['s']))).toBe(t1);
    clock.t = start + 5_200;
    const t2 = await clock.run(b.token('main', ['s']));
    expect(t2).not.toBe(t1);
    expect(sent.length).toBe(2);
  });

  it('a long-lived token keeps the whole request timeout as its margin', async () => {
    const clock = new FakeClock();
    const { http } = fakeHttp(clock);
    const b = broker(clock, http, { sendMarginMs: 15_000 });
    const start = clock.t;
    const t1 = await clock.run(b.token('main', ['s']));
    // expires_in 300: refresh point at 270 s, minus the 15 s margin.
    clock.t = start + 254_999;
    expect(await clock.run(b.token('main', ['s']))).toBe(t1);
    clock.t = start + 255_000;
    expect(await clock.run(b.token('main', ['s']))).not.toBe(t1);
  });

  it('current(): the same token while usable, a newer one for the same client and scopes after, nothing for a token it never handed out', async () => {
    const clock = new FakeClock();
    const { http, sent } = fakeHttp(clock, (n) => okReply(n, { expires_in: 8 }));
    const b = broker(clock, http, { sendMarginMs: 15_000 });
    const start = clock.t;
    const t1 = await clock.run(b.token('second-org', ['a', 'b']));
    expect(await clock.run(b.current(t1))).toBe(t1);
    clock.t = start + 6_000;
    const t2 = await clock.run(b.current(t1));
    expect(t2).toBe('access-token-number-2');
    expect(await clock.run(b.token('second-org', ['b', 'a']))).toBe(t2);
    expect(sent[1]!.opts.form).toMatchObject({ scope: 'a b' });
    // freshToken (the expiry probe) and foreign strings are never renewed.
    const probe = await clock.run(b.freshToken('main', ['s']));
    clock.t = start + 60_000;
    expect(await clock.run(b.current(probe))).toBeUndefined();
    expect(await clock.run(b.current('a-deliberately-invalid-token'))).toBeUndefined();
  });

  it('replaceExpired(): drops the refused token, issues one new token for concurrent refusals, and reports the age', async () => {
    const clock = new FakeClock();
    const { http, sent } = fakeHttp(clock, (n) => okReply(n, { expires_in: 300 }), 100);
    const b = broker(clock, http);
    const t1 = await clock.run(b.token('main', ['s']));
    clock.t += 40_000;
    const [r1, r2] = await clock.run(Promise.all([b.replaceExpired(t1), b.replaceExpired(t1)]));
    expect(r1).toEqual({ token: 'access-token-number-2', ageMs: 40_000, lifetimeMs: 300_000 });
    expect(r2?.token).toBe('access-token-number-2');
    expect(sent.length).toBe(2);
    expect(await clock.run(b.token('main', ['s']))).toBe('access-token-number-2');
    expect(await clock.run(b.replaceExpired('never-issued-by-the-broker'))).toBeUndefined();
  });

  it('replaceExpired(): futile once a replacement is itself refused young (the target refuses fresh tokens): the 401 shows from then on', async () => {
    const clock = new FakeClock();
    const { http, sent } = fakeHttp(clock);
    const b = broker(clock, http);
    const t1 = await clock.run(b.token('main', ['s']));
    clock.t += 200_000;
    const r = await clock.run(b.replaceExpired(t1));
    clock.t += 1_000;
    expect(await clock.run(b.replaceExpired(r!.token))).toBeUndefined();
    const t3 = await clock.run(b.token('main', ['other']));
    expect(await clock.run(b.replaceExpired(t3))).toBeUndefined();
    // Other roles still get a replacement.
    const o = await clock.run(b.token('second-org', ['s']));
    expect((await clock.run(b.replaceExpired(o)))?.token).toBeDefined();
    expect(sent.length).toBe(5);
  });
});
