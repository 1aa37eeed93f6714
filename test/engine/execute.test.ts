import { describe, expect, it } from 'vitest';
import { defineCheck, excludedBy, type CheckDefinition } from '../../src/engine/check.js';
import { executeCheck } from '../../src/engine/execute.js';
import { CheckScope, type Runtime } from '../../src/engine/runtime.js';
import { ConformanceError } from '../../src/errors.js';
import { runConformance } from '../../src/run/index.js';

function fakeRuntime(profile: 'quick' | 'full' | 'read-only' = 'full', fixtures: Record<string, string> = {}): Runtime {
  return {
    spec: { profile, runId: 'r1', model: { operations: [], divergences: [], problems: [], hashes: {} }, deadline: Date.now() + 60_000 },
    config: {
      baseUrl: 'http://127.0.0.1:1',
      fixtures,
      clients: [{ role: 'main' }],
      limits: { tokenLifetimeSec: 300, windowSec: 60, tokenIssuancePerMinute: 20 },
    },
    http: { stats: { requests: 0, unplanned429: 0, waitsMs: 0 }, request: async () => ({}) },
    tokens: {},
    scope: new CheckScope(),
    shared: new Map(),
    validator: { validate: () => [] },
    tally: () => ({ violations: [], violationCount: 0 }),
    exchangesSeen: 0,
    sleep: async () => {},
    onWait: () => {},
  } as unknown as Runtime;
}

const base = { area: 'demo', requirements: ['demo.rule'], title: 'a demo check' };
const check = (over: Partial<CheckDefinition>): CheckDefinition => defineCheck({ id: 'demo.check', level: 'MUST', ...base, run: async () => {}, ...over });

describe('executeCheck outcomes follow from error types', () => {
  it('a check that completes passes', async () => {
    const r = await executeCheck(check({}), fakeRuntime());
    expect(r.outcome).toBe('pass');
    expect(r.requirements).toEqual(['demo.rule']);
  });

  it('a hard assertion is fail with expected/actual', async () => {
    const r = await executeCheck(
      check({ run: async (ctx) => ctx.fail('bad status', { expected: 200, actual: 500, requirement: 'demo.rule' }) }),
      fakeRuntime(),
    );
    expect(r.outcome).toBe('fail');
    expect(r.message).toBe('bad status');
    expect(r.expected).toBe(200);
    expect(r.actual).toBe(500);
    expect(r.findings).toHaveLength(1);
  });

  it('soft assertions collect every finding and fail at the end', async () => {
    const r = await executeCheck(
      check({
        run: async (ctx) => {
          ctx.check(false, 'first');
          ctx.check(true, 'never');
          ctx.check(false, 'second');
        },
      }),
      fakeRuntime(),
    );
    expect(r.outcome).toBe('fail');
    expect(r.findings.map((f) => f.message)).toEqual(['first', 'second']);
  });

  it('a skip signal is skip with its reason', async () => {
    const r = await executeCheck(check({ run: async (ctx) => ctx.skip('not today') }), fakeRuntime());
    expect(r).toMatchObject({ outcome: 'skip', message: 'not today' });
  });

  it('any other error is error, never fail', async () => {
    const r = await executeCheck(
      check({
        run: async () => {
          throw new ConformanceError('ERR_TARGET_UNREACHABLE', 'connection refused by 127.0.0.1:1');
        },
      }),
      fakeRuntime(),
    );
    expect(r.outcome).toBe('error');
    expect(r.message).toBe('ERR_TARGET_UNREACHABLE: connection refused by 127.0.0.1:1');
  });

  it('an observation check records and never fails', async () => {
    const r = await executeCheck(check({ level: 'observation', run: async (ctx) => ctx.observe('create.status', 201) }), fakeRuntime());
    expect(r.outcome).toBe('observation');
    expect(r.observations).toEqual([{ key: 'create.status', value: 201 }]);
  });

  it('a missing fixture skips and names it', async () => {
    const r = await executeCheck(check({ fixtures: ['patient', 'encounter'] }), fakeRuntime('full', { patient: 'p1' }));
    expect(r).toMatchObject({ outcome: 'skip', message: 'fixture not provided: encounter' });
  });

  it('a missing client role skips', async () => {
    const r = await executeCheck(check({ clients: ['second-org'] }), fakeRuntime());
    expect(r).toMatchObject({ outcome: 'skip', message: 'no client with role second-org in the config' });
  });

  it('profiles exclude checks by tag, with a reason', async () => {
    const r = await executeCheck(check({ tags: ['writes'] }), fakeRuntime('read-only'));
    expect(r.outcome).toBe('skip');
    expect(r.message).toMatch(/read-only/);
    expect(excludedBy('quick', { tags: ['waits'] })).toMatch(/quick/);
    expect(excludedBy('full', { tags: ['waits', 'writes'] })).toBeUndefined();
  });
});

describe('defineCheck', () => {
  it('refuses ids that are not area.slug and checks without requirements', () => {
    expect(() => defineCheck({ ...base, id: 'Check 1', level: 'MUST', run: async () => {} })).toThrow(/area\.slug/);
    expect(() => defineCheck({ ...base, id: 'demo.x', level: 'MUST', requirements: [], run: async () => {} })).toThrow(/no requirement/);
  });
});

describe('the per-check time budget', () => {
  it('a check past its budget ends as error ERR_TIMEOUT, and its abandoned run sends nothing more', async () => {
    let requestsAfter = 0;
    let resume: () => void = () => {};
    const rt = fakeRuntime();
    (rt.http as unknown as { request: () => Promise<unknown> }).request = async () => {
      requestsAfter++;
      return {};
    };
    const started = Date.now();
    const r = await executeCheck(
      check({
        run: async (ctx) => {
          // Hangs past the budget, then tries to go on.
          await new Promise<void>((done) => {
            resume = done;
          });
          await ctx.request({ url: 'http://127.0.0.1:1/after' });
        },
      }),
      rt,
      { timeoutMs: 50 },
    );
    expect(r.outcome).toBe('error');
    expect(r.message).toMatch(/did not finish within its time budget of 0 s/);
    expect(Date.now() - started).toBeLessThan(5_000);
    resume();
    await new Promise((done) => setTimeout(done, 20));
    expect(requestsAfter).toBe(0);
  });

  it("stops while the check's token request waits for another section of the token endpoint (the run's own wait), and runs on after it", async () => {
    // The section lasts twice the budget; the check's own time is a token request and a read.
    let sectionEnd = 0;
    let tokenAt = 0;
    const waiting = check({
      id: 'demo.token-behind-a-section',
      timeoutMs: 1500,
      run: async (ctx) => {
        const section = ctx.tokens.alone(async () => {
          await new Promise((done) => setTimeout(done, 3000));
          sectionEnd = Date.now();
        });
        await ctx.token(['system/Encounter.rs']);
        tokenAt = Date.now();
        await section;
      },
    });
    const { results } = await runConformance({ checks: [waiting], profile: 'full', progress: false, writeReports: false });
    expect(results[0]).toMatchObject({ id: 'demo.token-behind-a-section', outcome: 'pass' });
    expect(tokenAt).toBeGreaterThanOrEqual(sectionEnd);
  }, 30_000);

  it('a check within its budget is judged as usual', async () => {
    const r = await executeCheck(check({ run: async (ctx) => ctx.skip('fixture missing') }), fakeRuntime(), { timeoutMs: 5_000 });
    expect(r).toMatchObject({ outcome: 'skip', message: 'fixture missing' });
  });
});
