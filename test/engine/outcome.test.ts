import { afterEach, describe, expect, it } from 'vitest';
import { defineCheck, type CheckDefinition } from '../../src/engine/check.js';
import { executeCheck } from '../../src/engine/execute.js';
import { expectError } from '../../src/service/expect.js';
import { controlPath, decideOutcome, normalElsewhere, type Happened, type OutcomeEnv } from '../../src/engine/outcome.js';
import { CheckScope, type Runtime } from '../../src/engine/runtime.js';
import type { Exchange } from '../../src/engine/types.js';
import { CheckFailure, ConformanceError, OpenChoiceSignal, SkipSignal } from '../../src/errors.js';
import { HttpClient } from '../../src/http/client.js';
import { startServer, type TestServer } from '../http/servers.js';
import { SERVICE_BINDING } from '../../src/service/run.js';
import { isServicePath } from '../../src/service/paths.js';

const exchange = (id: string, url: string, status?: number): Exchange => ({
  id,
  startedAt: new Date().toISOString(),
  durationMs: 1,
  request: { method: 'GET', url, headers: {} },
  ...(status === undefined ? {} : { response: { status, headers: {}, bodyBytes: 0 } }),
  curl: 'curl',
});

const env = (over: Partial<OutcomeEnv> = {}): OutcomeEnv => ({
  unjudgeable: () => undefined,
  health: async () => ({ normal: true, how: 'GET /fhir/R4/metadata answered 200' }),
  ...over,
});

const happened = (over: Partial<Happened>): Happened => ({
  level: 'MUST',
  ending: { kind: 'completed' },
  findings: [],
  observations: [],
  evidence: [],
  ...over,
});

describe('decideOutcome: the outcome policy', () => {
  it('pass, skip and error follow from how the check ended', async () => {
    expect((await decideOutcome(happened({}), env())).outcome).toBe('pass');
    expect(await decideOutcome(happened({ ending: { kind: 'thrown', error: new SkipSignal('fixture not provided: x') } }), env())).toMatchObject({
      outcome: 'skip',
      message: 'fixture not provided: x',
    });
    const err = await decideOutcome(happened({ ending: { kind: 'thrown', error: new ConformanceError('ERR_TIMEOUT', 'no response within 15 s') } }), env());
    expect(err).toMatchObject({ outcome: 'error', message: 'ERR_TIMEOUT: no response within 15 s', extraEvidence: [] });
    // An error on an exchange (sent by this check or by work it shares) names that exchange as evidence.
    const timedOut = new ConformanceError('ERR_TIMEOUT', 'no response within 15 s');
    timedOut.exchange = {
      id: 'x-000042',
      startedAt: '',
      durationMs: 15_000,
      request: { method: 'GET', url: 'u', headers: {} },
      curl: '',
      error: 'no response within 15 s',
    };
    expect((await decideOutcome(happened({ ending: { kind: 'thrown', error: timedOut } }), env())).extraEvidence).toEqual([timedOut.exchange]);
    const bug = await decideOutcome(happened({ ending: { kind: 'thrown', error: new TypeError('x is undefined') } }), env());
    expect(bug.outcome).toBe('error');
  });

  it('an open choice of the target (ctx.openChoice) is an observation at any level, unless a finding came first', async () => {
    const open = new OpenChoiceSignal('a token was issued; whether such a request is refused is not stated');
    const observations = [{ key: 'token-request.x', value: { status: 200 } }];
    expect(await decideOutcome(happened({ ending: { kind: 'thrown', error: open }, observations }), env())).toMatchObject({
      outcome: 'observation',
      message: open.reason,
      observations,
    });
    const found = await decideOutcome(happened({ ending: { kind: 'thrown', error: open }, findings: [{ message: 'not JSON' }] }), env());
    expect(found).toMatchObject({ outcome: 'fail', message: 'not JSON' });
  });

  it('a finding is a fail; a hard failure joins the soft ones', async () => {
    const d = await decideOutcome(
      happened({ findings: [{ message: 'soft' }], ending: { kind: 'thrown', error: new CheckFailure('hard', { expected: 404, actual: 500 }) } }),
      env(),
    );
    expect(d.outcome).toBe('fail');
    expect(d.findings.map((f) => f.message)).toEqual(['soft', 'hard']);
    expect(d.message).toBe('soft; hard');
  });

  it('an observation check never fails: its assertions become observations', async () => {
    const soft = await decideOutcome(happened({ level: 'observation', findings: [{ message: 'was 201' }] }), env());
    expect(soft.outcome).toBe('observation');
    expect(soft.findings).toEqual([]);
    expect(soft.observations).toEqual([expect.objectContaining({ key: 'asserted', value: 'was 201' })]);
    const hard = await decideOutcome(
      happened({
        level: 'observation',
        observations: [{ key: 'k', value: 1 }],
        ending: { kind: 'thrown', error: new CheckFailure('status: expected 200, got 404', { expected: 200, actual: 404 }) },
      }),
      env(),
    );
    expect(hard.outcome).toBe('observation');
    expect(hard.observations).toHaveLength(2);
    expect(hard.observations[1]!.value).toEqual({ message: 'status: expected 200, got 404', expected: 200, actual: 404 });
    // A network error in an observation check is still an error: the tool could not tell.
    const net = await decideOutcome(
      happened({ level: 'observation', ending: { kind: 'thrown', error: new ConformanceError('ERR_TARGET_UNREACHABLE', 'refused') } }),
      env(),
    );
    expect(net.outcome).toBe('error');
  });

  it('a persistent 5xx where a 4xx is required is a fail that says so, while the target answers normally elsewhere', async () => {
    const x = exchange('x-1', 'http://t/fhir/R4/MedicationRequest/abc', 500);
    const d = await decideOutcome(
      happened({
        evidence: [x],
        ending: { kind: 'thrown', error: new CheckFailure('status (with HPB-00102): expected 404, got 500', { expected: 404, actual: 500, exchange: 'x-1' }) },
      }),
      env({ unjudgeable: (id) => (id === 'x-1' ? { kind: 'server-error', status: 500, attempts: 4, reason: 'kept answering 500' } : undefined) }),
    );
    expect(d.outcome).toBe('fail');
    expect(d.message).toMatch(
      /^answered 500 to GET \/fhir\/R4\/MedicationRequest\/abc where 404 is required, consistently after 3 retries; other endpoints answer normally \(GET \/fhir\/R4\/metadata answered 200\): status \(with HPB-00102\): expected 404, got 500$/,
    );
  });

  it('a persistent 5xx from a target that answers 5xx everywhere is an error (down), with the control request as evidence', async () => {
    const x = exchange('x-1', 'http://t/fhir/R4/MedicationRequest/abc', 503);
    const control = exchange('x-2', 'http://t/fhir/R4/metadata', 503);
    const d = await decideOutcome(
      happened({ evidence: [x], findings: [{ message: 'status: expected 404, got 503', exchange: 'x-1' }] }),
      env({
        unjudgeable: () => ({ kind: 'server-error', status: 503, attempts: 4, reason: 'kept answering 503' }),
        health: async () => ({ normal: false, how: 'control request GET /fhir/R4/metadata answered 503', control }),
      }),
    );
    expect(d.outcome).toBe('error');
    expect(d.message).toMatch(/looks down; no verdict/);
    expect(d.extraEvidence).toEqual([control]);
  });

  it('a provoked 5xx (a request sent without retries) where a 4xx is required is a fail while the target answers normally elsewhere', async () => {
    const x = {
      ...exchange('x-1', 'http://t/fhir/R4/MedicationRequest', 500),
      request: { method: 'POST', url: 'http://t/fhir/R4/MedicationRequest', headers: {} },
    };
    let asked = 0;
    const d = await decideOutcome(
      happened({
        evidence: [x],
        ending: { kind: 'thrown', error: new CheckFailure('status (with HPB-00101): expected 400, got 500', { expected: 400, actual: 500, exchange: 'x-1' }) },
      }),
      env({
        unjudgeable: (id) =>
          id === 'x-1' ? { kind: 'server-error', status: 500, attempts: 1, provoked: true, reason: 'answered 500 without retries' } : undefined,
        health: async () => (asked++, { normal: true, how: 'control request GET /fhir/R4/metadata answered 200' }),
      }),
    );
    expect(asked).toBe(1);
    expect(d.outcome).toBe('fail');
    expect(d.message).toBe(
      'answered 500 to POST /fhir/R4/MedicationRequest where 400 is required (a request that provokes an error, not retried; 1 send answered 5xx); ' +
        'other endpoints answer normally (control request GET /fhir/R4/metadata answered 200): status (with HPB-00101): expected 400, got 500',
    );
  });

  it('a provoked 5xx from a target that answers 5xx everywhere is an error (down), not a fail', async () => {
    // Two tries of a refusal probe, both 503, and the control request 503 too.
    const tries = [exchange('x-1', 'http://t/fhir/R4/MedicationRequest/unknown', 503), exchange('x-2', 'http://t/fhir/R4/MedicationRequest/unknown', 503)];
    const control = exchange('x-3', 'http://t/fhir/R4/metadata', 503);
    let besides: readonly Exchange[] = [];
    const d = await decideOutcome(
      happened({
        evidence: tries,
        ending: { kind: 'thrown', error: new CheckFailure('status: expected 404, got 503', { expected: 404, actual: 503, exchange: 'x-2' }) },
      }),
      env({
        unjudgeable: (id) => ({ kind: 'server-error', status: 503, attempts: 1, provoked: true, reason: `${id} answered 503 without retries` }),
        health: async (b) => ((besides = b), { normal: false, how: 'control request GET /fhir/R4/metadata answered 503', control }),
      }),
    );
    expect(besides.map((x) => x.id)).toEqual(['x-1', 'x-2']);
    expect(d.outcome).toBe('error');
    expect(d.message).toBe(
      'the target answered 503 to GET /fhir/R4/MedicationRequest/unknown (a request that provokes an error, not retried; 2 sends answered 5xx) ' +
        'and does not answer normally elsewhere either (control request GET /fhir/R4/metadata answered 503): it looks down; no verdict (status: expected 404, got 503)',
    );
    expect(d.extraEvidence).toEqual([control]);
  });

  it('a 5xx the run had no time to retry, a cut body and a redirect give no verdict', async () => {
    const x = exchange('x-1', 'http://t/fhir/R4/Encounter', 503);
    const failing = happened({ evidence: [x], findings: [{ message: 'bad' }] });
    const once = await decideOutcome(failing, env({ unjudgeable: () => ({ kind: 'server-error', status: 503, attempts: 1, reason: 'r' }) }));
    expect(once.outcome).toBe('error');
    const cut = await decideOutcome(failing, env({ unjudgeable: () => ({ kind: 'truncated', status: 200, attempts: 1, reason: 'cut at the cap' }) }));
    expect(cut).toMatchObject({ outcome: 'error', message: 'cut at the cap; no verdict (bad)' });
    const redirect = {
      ...exchange('x-3', 'http://t/fhir/R4/Encounter', 302),
      response: { status: 302, headers: { location: 'http://elsewhere/' }, bodyBytes: 0 },
    };
    expect((await decideOutcome(happened({ evidence: [redirect], findings: [{ message: 'bad' }] }), env())).outcome).toBe('error');
  });

  it('a finding about another, normal answer stands whatever the 5xx elsewhere', async () => {
    let asked = false;
    const d = await decideOutcome(
      happened({
        evidence: [exchange('x-1', 'http://t/fhir/R4/a', 500), exchange('x-2', 'http://t/fhir/R4/b', 200)],
        findings: [{ message: 'b lacks a field', exchange: 'x-2' }],
      }),
      env({
        unjudgeable: (id) => (id === 'x-1' ? { kind: 'server-error', status: 500, attempts: 4, reason: 'r' } : undefined),
        health: async () => ((asked = true), { normal: false, how: '' }),
      }),
    );
    expect(d).toMatchObject({ outcome: 'fail', message: 'b lacks a field' });
    expect(asked).toBe(false);
  });

  it('a passing check is not judged on the answers it saw', async () => {
    let asked = false;
    const d = await decideOutcome(
      happened({ evidence: [exchange('x-1', 'http://t/fhir/R4/x', 500)] }),
      env({
        unjudgeable: () => ({ kind: 'server-error', status: 500, attempts: 4, reason: 'r' }),
        health: async () => ((asked = true), { normal: true, how: '' }),
      }),
    );
    expect(d.outcome).toBe('pass');
    expect(asked).toBe(false);
  });
});

describe('normalElsewhere and controlPath', () => {
  const started = 1_000_000;
  const failing = [{ ...exchange('x-9', 'http://t/fhir/R4/MedicationRequest/abc', 500), startedAt: new Date(started).toISOString() }];
  it('finds a non-5xx answer of another FHIR path that ended after the failing request started', () => {
    const recent = [
      { at: started + 1000, method: 'GET', path: '/fhir/R4/Encounter/e1', status: 200 },
      { at: started + 1500, method: 'GET', path: '/fhir/R4/MedicationRequest/abc', status: 500 },
    ];
    expect(normalElsewhere(recent, failing, isServicePath)?.path).toBe('/fhir/R4/Encounter/e1');
  });
  it('ignores older answers, the failing path, the token endpoint, 5xx answers and failed exchanges', () => {
    const recent = [
      { at: started - 1, method: 'GET', path: '/fhir/R4/Encounter/e0', status: 200 },
      { at: started + 10, method: 'POST', path: '/auth/token', status: 200 },
      { at: started + 20, method: 'GET', path: '/fhir/R4/Encounter/e2', status: 502 },
      { at: started + 30, method: 'GET', path: '/fhir/R4/MedicationRequest/abc', status: 404 },
      { at: started + 40, method: 'GET', path: '/fhir/R4/Encounter/e3' },
    ];
    expect(normalElsewhere(recent, failing, isServicePath)).toBeUndefined();
  });
  it('sends the control request where nothing failed', () => {
    expect(controlPath(failing, SERVICE_BINDING.controlPaths)).toBe('/fhir/R4/metadata');
    expect(controlPath([exchange('x-1', 'http://t/base/fhir/R4/metadata', 500)], SERVICE_BINDING.controlPaths)).toBe('/fhir/.well-known/smart-configuration');
  });
});

// ---- end to end: HttpClient retry rules -> executeCheck -> outcome ----------

function runtimeWith(baseUrl: string): Runtime {
  const scope = new CheckScope();
  // Exchanges reach the running check's recorder as in the real runtime.
  const http = new HttpClient({ baseUrl, sleep: async () => {}, timeoutMs: 2000, onExchange: (x) => scope.getStore()?.recorder.addExchange(x) });
  const rt = {
    spec: {
      profile: 'full',
      runId: 'r1',
      model: { operations: [], divergences: [], problems: [], hashes: {} },
      deadline: Date.now() + 60_000,
      service: SERVICE_BINDING,
    },
    config: {
      baseUrl: 'http://127.0.0.1:1',
      fixtures: {},
      clients: [{ role: 'main' }],
      limits: { tokenLifetimeSec: 300, windowSec: 60, tokenIssuancePerMinute: 20 },
    },
    http,
    tokens: {},
    scope,
    shared: new Map(),
    validator: { validate: () => [] },
    tally: () => ({ violations: [], violationCount: 0 }),
    exchangesSeen: 0,
    recentAnswers: [],
    sleep: async () => {},
    onWait: () => {},
  };
  return rt as unknown as Runtime;
}

const notFoundCheck: CheckDefinition = defineCheck({
  id: 'demo.unknown-id-404',
  title: 'an unknown id gives 404 HPB-00102',
  area: 'demo',
  level: 'MUST',
  requirements: ['demo.rule'],
  async run(ctx) {
    const res = await ctx.request({ url: '/fhir/R4/MedicationRequest/unknown' });
    expectError(res, { status: 404, code: 'HPB-00102' });
  },
});

describe('executeCheck with a target answering 500 where 404 is required', () => {
  let server: TestServer | undefined;
  afterEach(async () => server?.close());

  async function start(metadataStatus: number | 'close'): Promise<{ rt: Runtime; hits: Map<string, number> }> {
    const hits = new Map<string, number>();
    server = await startServer((req, res) => {
      const path = req.url ?? '';
      hits.set(path, (hits.get(path) ?? 0) + 1);
      if (path === '/fhir/R4/metadata' && metadataStatus === 'close') return void res.socket?.destroy();
      const status = path === '/fhir/R4/metadata' ? (metadataStatus as number) : 500;
      res.writeHead(status, { 'content-type': 'application/fhir+json' });
      res.end(
        JSON.stringify({
          resourceType: 'OperationOutcome',
          issue: [{ severity: 'error', code: 'exception', diagnostics: 'SVC-00001: Internal server error' }],
        }),
      );
    });
    return { rt: runtimeWith(server.url), hits };
  }

  it('fails, naming the status, the retries and the control answer', async () => {
    const { rt, hits } = await start(200);
    const r = await executeCheck(notFoundCheck, rt);
    await rt.http.close();
    expect(r.outcome).toBe('fail');
    expect(hits.get('/fhir/R4/MedicationRequest/unknown')).toBe(4);
    expect(r.message).toContain('answered 500 to GET /fhir/R4/MedicationRequest/unknown where 404 is required, consistently after 3 retries');
    expect(r.message).toContain('control request GET /fhir/R4/metadata answered 200');
    expect(r.message).toContain('expected 404, got 500');
    expect(r.evidence.map((x) => x.request.url.replace(server!.url, ''))).toEqual([
      ...Array(4).fill('/fhir/R4/MedicationRequest/unknown'),
      '/fhir/R4/metadata',
    ]);
  });

  it('is an error when the control request also gets a 5xx', async () => {
    const { rt } = await start(503);
    const r = await executeCheck(notFoundCheck, rt);
    await rt.http.close();
    expect(r.outcome).toBe('error');
    expect(r.message).toMatch(/does not answer normally elsewhere either .*503.*looks down; no verdict/);
  });

  it('is an error when the control request gets no answer', async () => {
    const { rt } = await start('close');
    const r = await executeCheck(notFoundCheck, rt);
    await rt.http.close();
    expect(r.outcome).toBe('error');
    expect(r.message).toMatch(/control request GET \/fhir\/R4\/metadata failed/);
  });

  const provokingCheck: CheckDefinition = defineCheck({
    id: 'demo.invalid-body-400',
    title: 'an invalid body gives 400',
    area: 'demo',
    level: 'MUST',
    requirements: ['demo.rule'],
    async run(ctx) {
      const res = await ctx.request({ url: '/fhir/R4/MedicationRequest/unknown', retry: 'none' });
      expectError(res, { status: 404, code: 'HPB-00102' });
    },
  });

  it("fails a provoked 5xx (retry: 'none') once the control request shows the target answering normally", async () => {
    const { rt, hits } = await start(200);
    const r = await executeCheck(provokingCheck, rt);
    await rt.http.close();
    expect(r.outcome).toBe('fail');
    expect(hits.get('/fhir/R4/MedicationRequest/unknown')).toBe(1);
    expect(hits.get('/fhir/R4/metadata')).toBe(1);
    expect(r.message).toMatch(
      /^answered 500 to GET \/fhir\/R4\/MedicationRequest\/unknown where 404 is required \(a request that provokes an error, not retried; 1 send answered 5xx\); other endpoints answer normally \(control request GET \/fhir\/R4\/metadata answered 200\): status/,
    );
  });

  it('is an error when a provoked 5xx comes from a target that is down (503 everywhere)', async () => {
    const { rt } = await start(503);
    const r = await executeCheck(provokingCheck, rt);
    await rt.http.close();
    expect(r.outcome).toBe('error');
    expect(r.message).toMatch(
      /^the target answered 500 to GET \/fhir\/R4\/MedicationRequest\/unknown \(a request that provokes an error, not retried; 1 send answered 5xx\) and does not answer normally elsewhere either \(control request GET \/fhir\/R4\/metadata answered 503\): it looks down; no verdict/,
    );
  });

  it('uses a recent normal answer of the run instead of a control request', async () => {
    const { rt, hits } = await start(200);
    // Another endpoint answers normally while the failing request is retried.
    const check = {
      ...notFoundCheck,
      run: async (ctx: Parameters<CheckDefinition['run']>[0]) => {
        setTimeout(() => (rt.recentAnswers as Array<unknown>).push({ at: Date.now(), method: 'GET', path: '/fhir/R4/Encounter/e1', status: 200 }), 0);
        await notFoundCheck.run(ctx);
      },
    };
    const r = await executeCheck(check, rt);
    await rt.http.close();
    expect(r.outcome).toBe('fail');
    expect(r.message).toContain('GET /fhir/R4/Encounter/e1 answered 200 meanwhile');
    expect(hits.get('/fhir/R4/metadata')).toBeUndefined();
  });
});
