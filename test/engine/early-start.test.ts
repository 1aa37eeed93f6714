/**
 * Work started early (CheckDefinition.startEarly): the executor starts it once no check still to
 * run before its own declares one of its keys, and holds back every other request on those keys
 * until it settles. The paced checks declaring its keys run together, where the first of them
 * stands (a later one would hold the work back). Against the embedded reference; nothing here is
 * timed, only ordered.
 */
import { describe, expect, it } from 'vitest';
import { defineCheck, type CheckContext, type CheckDefinition } from '../../src/engine/check.js';
import { gatherEarlyKeyUsers } from '../../src/engine/executor.js';
import { runConformance } from '../../src/run/index.js';

const READ = ['system/MedicationRequest.rs'];

/** Moments (ms) the checks and the early work recorded. */
interface Trace {
  earlyStart?: number;
  earlyEnd?: number;
  declaredEnd?: number;
  lateDeclaredEnd?: number;
  pacedStart?: number;
  undeclaredSent?: number;
}

function checksFor(trace: Trace): CheckDefinition[] {
  const otherOrgRead = (ctx: CheckContext) =>
    ctx.fhir({ role: 'second-org', scopes: READ, url: `/fhir/R4/MedicationRequest/${ctx.fixture('otherOrgMedicationRequest')}` });
  const base = { area: 'rate-limit', level: 'MUST' as const, requirements: ['rate-limit.excess-429'] };
  let work: Promise<unknown> | undefined;
  return [
    defineCheck({
      ...base,
      id: 'demo.declares-second-org',
      title: 'uses the second organization key (declared)',
      clients: ['second-org'],
      async run(ctx) {
        await otherOrgRead(ctx);
        trace.declaredEnd = Date.now();
      },
    }),
    defineCheck({
      ...base,
      id: 'demo.paced',
      title: 'a main-key read',
      async run(ctx) {
        trace.pacedStart = Date.now();
        await ctx.fhir({ scopes: READ, url: `/fhir/R4/MedicationRequest/${ctx.fixture('medicationRequest')}` });
      },
    }),
    defineCheck({
      ...base,
      id: 'demo.declares-second-org-later',
      title: 'uses the second organization key (declared), later in the plan',
      clients: ['second-org'],
      async run(ctx) {
        await otherOrgRead(ctx);
        trace.lateDeclaredEnd = Date.now();
      },
    }),
    defineCheck({
      ...base,
      id: 'demo.undeclared-second-org',
      title: 'uses the second organization key without declaring it',
      async run(ctx) {
        const res = await otherOrgRead(ctx);
        trace.undeclaredSent = Date.parse(res.exchange.startedAt);
      },
    }),
    defineCheck({
      ...base,
      id: 'demo.exhausting',
      title: 'judges work started early',
      tags: ['exhausts-key-limit', 'waits'],
      startEarly: {
        roles: () => ['second-org'],
        start: (ctx) =>
          (work ??= (async () => {
            trace.earlyStart = Date.now();
            await otherOrgRead(ctx);
            await ctx.sleep(300);
            await otherOrgRead(ctx);
            trace.earlyEnd = Date.now();
          })()),
      },
      async run() {
        await work;
      },
    }),
  ];
}

describe('work started early', () => {
  it('starts after the checks declaring its key (run together), before the paced checks after them, and owns the key until it ends', async () => {
    const trace: Trace = {};
    const early: string[] = [];
    const run = await runConformance({
      checks: checksFor(trace),
      profile: 'full',
      progress: false,
      writeReports: false,
      subscribers: [(e) => void (e.type === 'check-finished' && e.startedEarly && early.push(e.check.id))],
    });
    // Its waits overlapped the paced checks (the pacing bound does not add them).
    expect(early).toEqual(['demo.exhausting']);
    expect(run.results.map((r) => `${r.id}: ${r.outcome}`)).toEqual([
      'demo.declares-second-org: pass',
      'demo.declares-second-org-later: pass',
      'demo.paced: pass',
      'demo.undeclared-second-org: pass',
      'demo.exhausting: pass',
    ]);
    expect(trace.earlyStart).toBeGreaterThanOrEqual(trace.lateDeclaredEnd!);
    expect(trace.earlyStart).toBeLessThanOrEqual(trace.pacedStart!);
    // The undeclared user of the key waited until the early work was done with it.
    expect(trace.undeclaredSent).toBeGreaterThanOrEqual(trace.earlyEnd!);
    // The early work's requests count for the check that declared it.
    expect(run.result.info.budget?.episodes?.['demo.exhausting']?.requests).toBe(2);
  }, 60_000);

  it('gathers the paced checks declaring an early key after the first of them, keeping every other order', () => {
    const check = (id: string, more: Partial<CheckDefinition> = {}) => ({ id, clients: [], ...more }) as unknown as CheckDefinition;
    const plan = [
      check('a'),
      check('tenancy-1', { clients: ['second-org'] }),
      check('b'),
      check('late', { tags: ['exhausts-key-limit'], clients: ['second-org'] }),
      check('tenancy-2', { clients: ['main', 'second-org'] }),
      check('c', { clients: ['extra'] }),
      check('upload-tenancy', { clients: ['second-org'] }),
      check('episode', { tags: ['exhausts-key-limit'], startEarly: { roles: () => ['second-org'], start: async () => undefined } }),
    ];
    const ids = (p: CheckDefinition[]) => p.map((c) => c.id);
    expect(ids(gatherEarlyKeyUsers(plan, new Set(['second-org'])))).toEqual(['a', 'tenancy-1', 'tenancy-2', 'upload-tenancy', 'b', 'late', 'c', 'episode']);
    // No early work on a key, or no paced user of it: the plan as it was.
    expect(ids(gatherEarlyKeyUsers(plan, new Set()))).toEqual(ids(plan));
    expect(ids(gatherEarlyKeyUsers(plan, new Set(['production'])))).toEqual(ids(plan));
  });

  it('starts token-endpoint work once no paced check still to run asks for tokens, and holds every other token request until it ends', async () => {
    const t: { exactEnd?: number; workStart?: number; workEnd?: number; coveringStart?: number; otherTokenSent?: number } = {};
    const base = { area: 'issuance-limit', level: 'MUST' as const, requirements: ['issuance-limit.excess-429'] };
    const read = (ctx: CheckContext) => ctx.fhir({ scopes: READ, url: `/fhir/R4/MedicationRequest/${ctx.fixture('medicationRequest')}` });
    let work: Promise<unknown> | undefined;
    const checks: CheckDefinition[] = [
      defineCheck({
        ...base,
        id: 'demo.covering-first',
        title: 'a read with any covering token, before the exact one',
        coveringTokens: true,
        async run(ctx) {
          await read(ctx);
        },
      }),
      defineCheck({
        ...base,
        id: 'demo.exact-scopes',
        title: 'a read with a token of exactly its scopes (may ask for one)',
        async run(ctx) {
          await read(ctx);
          t.exactEnd = Date.now();
        },
      }),
      defineCheck({
        ...base,
        id: 'demo.covering-after',
        title: 'a read with any covering token, then a token request of its own',
        coveringTokens: true,
        async run(ctx) {
          t.coveringStart = Date.now();
          await read(ctx);
          const res = await ctx.tokens.request('main', { scopes: READ });
          t.otherTokenSent = Date.parse(res.exchange.startedAt);
        },
      }),
      defineCheck({
        ...base,
        id: 'demo.issuance',
        title: 'judges work on the token endpoint started early',
        tags: ['exhausts-issuance-limit'],
        startEarly: {
          roles: () => [],
          afterTokens: true,
          start: (ctx) =>
            (work ??= ctx.tokens.alone(async (send) => {
              t.workStart = Date.now();
              await send('main', { scopes: READ });
              await ctx.sleep(300);
              t.workEnd = Date.now();
            })),
        },
        async run() {
          await work;
        },
      }),
    ];
    const early: string[] = [];
    const run = await runConformance({
      checks,
      profile: 'full',
      progress: false,
      writeReports: false,
      subscribers: [(e) => void (e.type === 'check-finished' && e.startedEarly && early.push(e.check.id))],
    });
    expect(run.results.map((r) => `${r.id}: ${r.outcome}`)).toEqual([
      'demo.covering-first: pass',
      'demo.exact-scopes: pass',
      'demo.covering-after: pass',
      'demo.issuance: pass',
    ]);
    expect(early).toEqual(['demo.issuance']);
    // Not before the check that may ask for a token (a covering one before it does not hold it back) ...
    expect(t.workStart).toBeGreaterThanOrEqual(t.exactEnd!);
    // ... and before the covering check after it, whose own token request waited for the work to end.
    expect(t.workStart).toBeLessThanOrEqual(t.coveringStart!);
    expect(t.otherTokenSent).toBeGreaterThanOrEqual(t.workEnd!);
  }, 60_000);

  it('does not start when the profile leaves the check out', async () => {
    const trace: Trace = {};
    const run = await runConformance({ checks: checksFor(trace), profile: 'quick', progress: false, writeReports: false });
    expect(run.results.find((r) => r.id === 'demo.exhausting')?.outcome).toBe('skip');
    expect(trace.earlyStart).toBeUndefined();
  }, 60_000);
});
