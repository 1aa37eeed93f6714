/**
 * Requests are a budget: checks share the exchanges of identical safe reads, every report
 * states the requests per area and per covered requirement, and the gate profile is the
 * cheapest set of checks that judges every MUST requirement needing no wait.
 * Against the embedded reference at its short windows; nothing here is timed.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineCheck, type CheckDefinition } from '../../src/engine/check.js';
import { selectGate, spreadTokenChecks, type Estimate } from '../../src/engine/budget.js';
import type { Level } from '../../src/engine/types.js';
import type { Exchange } from '../../src/http/index.js';
import { runConformance } from '../../src/run/index.js';
import { createOwn as postOwn } from '../../src/service/index.js';

const READ = ['system/MedicationRequest.rs'];
const WRITE = ['system/MedicationRequest.cru'];
const fixtureUrl = (ctx: Parameters<CheckDefinition['run']>[0]) => `/fhir/R4/MedicationRequest/${ctx.fixture('medicationRequest')}`;

function check(id: string, run: CheckDefinition['run'], over: Partial<CheckDefinition> = {}): CheckDefinition {
  return defineCheck({
    id,
    title: id,
    area: 'medication-request',
    level: 'MUST',
    requirements: ['medication-request.read-returns-resource'],
    fixtures: ['medicationRequest'],
    run,
    ...over,
  });
}

async function run(checks: CheckDefinition[], extra: { reportsRoot?: string } = {}) {
  const sent: Exchange[] = [];
  const outcome = await runConformance({
    checks,
    profile: 'full',
    progress: false,
    writeReports: extra.reportsRoot !== undefined,
    ...(extra.reportsRoot ? { reportsRoot: extra.reportsRoot } : {}),
    subscribers: [(e) => void (e.type === 'exchange' && sent.push(e.exchange))],
  });
  return { outcome, sent, byId: new Map(outcome.results.map((r) => [r.id, r])) };
}

const reads = (sent: Exchange[], path: string) => sent.filter((x) => x.request.method === 'GET' && new URL(x.request.url).pathname === path);

describe('shared exchanges', () => {
  it("a covering check sends with the key's wider token and never shares a read with a check asking for the exact scopes", async () => {
    const seen: Record<string, string> = {};
    const reader = (id: string, over: Partial<CheckDefinition>, wideFirst: boolean) =>
      check(
        id,
        async (ctx) => {
          if (wideFirst) await ctx.fhir({ scopes: [...READ, ...WRITE], url: fixtureUrl(ctx), coveringToken: false });
          const res = await ctx.fhir({ scopes: READ, url: fixtureUrl(ctx), share: true });
          ctx.check(res.status === 200, `status ${res.status}`);
          seen[id] = res.exchange.id;
        },
        over,
      );
    const tokenScopes = (sent: Exchange[]) =>
      sent.filter((x) => x.request.url.endsWith('/auth/token')).map((x) => new URLSearchParams(x.request.body ?? '').get('scope'));
    const covering = () => reader('demo.b-covering', { coveringTokens: true }, true);
    // Alone, the covering check asks for one token (READ and WRITE) and reads with it: no token of exactly READ.
    const alone = await run([covering()]);
    expect(alone.byId.get('demo.b-covering')!.outcome).toBe('pass');
    expect(tokenScopes(alone.sent)).toContain([...READ, ...WRITE].join(' '));
    expect(tokenScopes(alone.sent)).not.toContain(READ.join(' '));
    // Beside a check after it asking for exactly READ: that one gets a token of its own and its own exchange.
    const { sent, byId } = await run([covering(), reader('demo.c-exact', { tags: ['last'] }, false)]);
    expect([...byId.values()].map((r) => r.outcome)).toEqual(['pass', 'pass']);
    expect(tokenScopes(sent).filter((s) => s === READ.join(' '))).toHaveLength(1);
    expect(seen['demo.c-exact']).not.toBe(seen['demo.b-covering']);
    expect(byId.get('demo.c-exact')!.stats?.shared ?? 0).toBe(0);
  });

  it('two checks that read the same fixture share one exchange, and each cites it', async () => {
    const seen: Record<string, string> = {};
    const reader = (id: string) =>
      check(id, async (ctx) => {
        const res = await ctx.fhir({ scopes: READ, url: fixtureUrl(ctx), share: true });
        ctx.check(res.status === 200, `status ${res.status}`);
        seen[id] = res.exchange.id;
        // Each check gets its own copy of the body: editing it changes no other check's.
        (res.json as Record<string, unknown>).status = `edited by ${id}`;
      });
    const { sent, byId, outcome } = await run([reader('demo.first-reader'), reader('demo.second-reader')]);
    const path = new URL(sent.find((x) => x.request.url.includes('/MedicationRequest/'))!.request.url).pathname;
    expect(reads(sent, path)).toHaveLength(1);
    expect(seen['demo.first-reader']).toBe(seen['demo.second-reader']);
    const first = byId.get('demo.first-reader')!;
    const second = byId.get('demo.second-reader')!;
    expect([first.outcome, second.outcome]).toEqual(['pass', 'pass']);
    expect(first.evidence.map((x) => x.id)).toContain(seen['demo.first-reader']);
    expect(second.evidence.map((x) => x.id)).toContain(seen['demo.first-reader']);
    // Requests with the main key (the token request the first check also sent aside).
    expect(first.stats).toMatchObject({ mainKeyRequests: 1, shared: 0 });
    expect(second.stats).toMatchObject({ requests: 0, mainKeyRequests: 0, shared: 1 });
    expect(outcome.result.info.budget?.shared).toBe(1);
  });

  it('a check that did not opt in, one that repeats the request, and a read after a write are sent', async () => {
    let created = '';
    const checks = [
      check('demo.a-opted-in', async (ctx) => void (await ctx.fhir({ scopes: READ, url: fixtureUrl(ctx), share: true }))),
      check('demo.b-not-opted-in', async (ctx) => void (await ctx.fhir({ scopes: READ, url: fixtureUrl(ctx) }))),
      // Compares two answers on purpose: the second read is its own.
      check('demo.c-twice', async (ctx) => {
        const one = await ctx.fhir({ scopes: READ, url: fixtureUrl(ctx), share: true });
        const two = await ctx.fhir({ scopes: READ, url: fixtureUrl(ctx), share: true });
        ctx.check(one.exchange.id !== two.exchange.id, 'the repeated read was answered with the same exchange');
      }),
      check(
        'demo.d-create-and-read',
        async (ctx) => {
          created = (await postOwn(ctx)).id;
          await ctx.fhir({ scopes: READ, url: `/fhir/R4/MedicationRequest/${created}`, share: true });
        },
        { fixtures: ['medicationRequest', 'patient'] },
      ),
      check('demo.e-update', async (ctx) => {
        const read = await ctx.fhir({ scopes: READ, url: `/fhir/R4/MedicationRequest/${created}`, share: true });
        const body = { ...(read.json as Record<string, unknown>), note: [{ text: 'updated' }] };
        await ctx.fhir({ scopes: WRITE, method: 'PUT', url: `/fhir/R4/MedicationRequest/${created}`, body });
      }),
      check('demo.f-read-after-update', async (ctx) => {
        const res = await ctx.fhir({ scopes: READ, url: `/fhir/R4/MedicationRequest/${created}`, share: true });
        ctx.check(JSON.stringify(res.json).includes('updated'), 'the read after the update shows the old version');
      }),
    ];
    const { sent, byId } = await run(checks);
    for (const r of byId.values()) expect(r.outcome, `${r.id}: ${r.message}`).toBe('pass');
    const fixturePath = new URL(sent.find((x) => x.request.url.includes('/MedicationRequest/') && x.request.method === 'GET')!.request.url).pathname;
    // a (sent), b (not opted in: sent), c (first read shared with a, second sent): 3 sends of the fixture read.
    expect(reads(sent, fixturePath)).toHaveLength(3);
    expect(byId.get('demo.c-twice')!.stats).toMatchObject({ mainKeyRequests: 1, shared: 1 });
    // d reads the created record (sent), e shares d's read, f reads after e's update: sent again.
    expect(reads(sent, `/fhir/R4/MedicationRequest/${created}`)).toHaveLength(2);
    expect(byId.get('demo.e-update')!.stats).toMatchObject({ shared: 1 });
    expect(byId.get('demo.f-read-after-update')!.stats).toMatchObject({ mainKeyRequests: 1, shared: 0 });
  });
});

describe('the request budget in every report', () => {
  let dir: string;
  beforeAll(async () => void (dir = await mkdtemp(join(tmpdir(), 'fhirc-budget-'))));
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('states requests per area, planned against sent, and requests per covered requirement (JSON and summary)', async () => {
    const checks = [
      check(
        'demo.declares-two',
        async (ctx) => {
          await ctx.fhir({ scopes: READ, url: fixtureUrl(ctx), share: true });
          await ctx.fhir({ scopes: READ, url: `/fhir/R4/MedicationRequest?patient=${ctx.fixture('patient')}&_count=1` });
        },
        { requests: 2, fixtures: ['medicationRequest', 'patient'] },
      ),
      check(
        'demo.encounter-read',
        async (ctx) => void (await ctx.fhir({ scopes: ['system/Encounter.rs'], url: `/fhir/R4/Encounter/${ctx.fixture('encounter')}` })),
        {
          area: 'encounter',
          requirements: ['encounter.read-returns-200'],
          fixtures: ['encounter'],
          requests: 1,
        },
      ),
    ];
    const { outcome, sent, byId } = await run(checks, { reportsRoot: dir });
    const b = outcome.result.info.budget!;
    expect(b.profile).toBe('full');
    const mr = byId.get('demo.declares-two')!.stats!;
    // Its two reads with the main key, and the token request for them.
    expect(mr).toMatchObject({ mainKeyRequests: 2, planned: 2 });
    expect(b.byArea['medication-request']).toEqual({ checks: 1, planned: 2, requests: mr.requests, shared: 0 });
    expect(b.byArea.encounter).toEqual({ checks: 1, planned: 1, requests: byId.get('demo.encounter-read')!.stats!.requests, shared: 0 });
    expect(b.planned).toBe(3);
    // Every request the run sent (the exchange events) is in the total; discovery's own client comes on top.
    expect(b.requests).toBeGreaterThanOrEqual(sent.length);
    expect(b.setup).toBe(b.requests - Object.values(b.byArea).reduce((n, a) => n + a.requests, 0));
    expect(b.tokenRequests).toBe(sent.filter((x) => x.request.url.endsWith('/auth/token')).length);
    expect(b.coveredRequirements).toBe(2);
    expect(b.requestsPerRequirement).toBeCloseTo(b.requests / 2, 2);
    expect(b.keys.roles).toEqual(['main']);
    const report = JSON.parse(await readFile(join(outcome.reportDir!, 'report.json'), 'utf8')) as {
      run: { budget: typeof b };
      checks: Array<{ id: string; stats?: { planned?: number } }>;
    };
    expect(report.run.budget).toEqual(b);
    expect(report.checks.find((c) => c.id === 'demo.declares-two')!.stats).toMatchObject({ planned: 2, mainKeyRequests: 2 });
    const summary = await readFile(join(outcome.reportDir!, 'summary.md'), 'utf8');
    expect(summary).toContain(`requests (full): ${b.requests} sent`);
    expect(summary).toContain(`${b.requestsPerRequirement} requests per requirement`);
    expect(summary).toContain(`requests per area: encounter ${b.byArea.encounter!.requests}, medication-request ${mr.requests}`);
  });
});

describe('the gate profile', () => {
  const levels = new Map<string, Level>([
    ['r.a', 'MUST'],
    ['r.b', 'MUST'],
    ['r.c', 'MUST'],
    ['r.wait', 'MUST'],
    ['r.obs', 'observation'],
    ['r.fixture', 'MUST'],
    ['r.only', 'MUST'],
  ]);
  const noop = async () => {};
  const c = (id: string, area: string, requirements: string[], requests: number, over: Partial<CheckDefinition> = {}): CheckDefinition => ({
    id,
    title: id,
    area,
    level: 'MUST',
    requirements,
    requests,
    run: noop,
    ...over,
  });
  const input = { fixtures: new Set(['patient']), roles: new Set(['main']), levels };

  it('runs the cheapest checks judging every MUST requirement that needs no waiting, one per area at least', () => {
    const checks = [
      c('x.expensive-ab', 'x', ['r.a', 'r.b'], 9),
      c('x.cheap-a', 'x', ['r.a'], 1),
      c('x.cheap-b', 'x', ['r.b'], 2),
      c('x.redundant', 'x', ['r.a'], 3),
      c('y.c', 'y', ['r.c'], 4),
      c('y.waits', 'y', ['r.wait', 'r.c'], 1, { tags: ['waits'] }),
      c('y.exhausts', 'y', ['r.wait'], 1, { tags: ['exhausts-key-limit'] }),
      c('z.observation', 'z', ['r.obs'], 1, { level: 'observation' }),
      c('w.free', 'w', ['r.a'], 0),
      c('v.needs-fixture', 'v', ['r.fixture'], 1, { fixtures: ['encounter'] }),
    ];
    const g = selectGate(checks, input);
    const runs = checks
      .filter((x) => !g.excluded.has(x.id))
      .map((x) => x.id)
      .sort();
    // cheap-b (with the free check for r.a) beats expensive-ab (9); free checks always run; the fixture-less check runs and skips itself.
    expect(runs).toEqual(['v.needs-fixture', 'w.free', 'x.cheap-b', 'y.c']);
    expect(g.excluded.get('y.waits')).toBe('left to full: needs waiting/exhaustion');
    expect(g.excluded.get('z.observation')).toMatch(/^left to full: an observation/);
    expect(g.excluded.get('x.expensive-ab')).toMatch(/^left to full: the gate runs the cheapest checks/);
    expect(g.leftToFull).toEqual([
      { requirement: 'r.fixture', reason: 'no check can run: a fixture or client role it needs is not in the config' },
      { requirement: 'r.wait', reason: 'left to full: needs waiting/exhaustion' },
    ]);
    expect(g.excluded.get('x.cheap-a')).toMatch(/^left to full: the gate runs the cheapest checks/);
    expect(g.planned).toBe(0 + 2 + 4);
  });

  it('never lets a conditional check (one a conforming target may leave nothing to judge) stand in for another; it judges what only it can', () => {
    const checks = [
      c('x.conditional-ab', 'x', ['r.a', 'r.b'], 1, { tags: ['conditional'] }),
      c('x.a', 'x', ['r.a'], 3),
      c('x.b', 'x', ['r.b'], 3),
      c('x.conditional-only', 'x', ['r.only'], 2, { tags: ['conditional'] }),
      c('x.conditional-redundant', 'x', ['r.a'], 1, { tags: ['conditional'] }),
    ];
    const g = selectGate(checks, input);
    const runs = checks
      .filter((x) => !g.excluded.has(x.id))
      .map((x) => x.id)
      .sort();
    // Without the tag x.conditional-ab (cost 1, two requirements) would have replaced x.a and x.b.
    expect(runs).toEqual(['x.a', 'x.b', 'x.conditional-only']);
    expect(g.leftToFull).toEqual([]);
  });

  it('keeps an area that would otherwise run nothing', () => {
    const checks = [c('x.ab', 'x', ['r.a', 'r.b'], 1), c('y.a', 'y', ['r.a'], 5)];
    const g = selectGate(checks, input);
    expect([...g.excluded.keys()]).toEqual([]);
  });
});

describe('checks that only talk to the token endpoint', () => {
  const noop = async () => {};
  const c = (id: string): CheckDefinition => ({ id, title: id, area: 'x', level: 'MUST', requirements: ['r.a'], run: noop });
  // Paced checks of 20 main-key requests and one token each; token-only checks of one token each.
  const est = new Map<string, Estimate>();
  const paced = Array.from({ length: 9 }, (_, i) => (est.set(`p.${i}`, { requests: 21, tokens: 1, mainKey: 20 }), c(`p.${i}`)));
  const tokenOnly = Array.from({ length: 12 }, (_, i) => (est.set(`t.${i}`, { requests: 1, tokens: 1, mainKey: 0 }), c(`t.${i}`)));
  const limits = { keyCeiling: 61, issuancePerWindow: 6, reserved: 2, estimate: (x: CheckDefinition) => est.get(x.id) };

  it("are spread over the main key's windows after the first, within the issuance limit, the rest at the end", () => {
    // Key windows of 60 requests: p.0-p.2 in window 0, p.3-p.5 in 1, p.6-p.8 in 2 (3 tokens each), then window 3 (no check starts in it).
    const order = spreadTokenChecks([...tokenOnly, ...paced], limits).map((x) => x.id);
    // At most 5 a window: 2 token-only checks in window 1, 2 in window 2, after the checks that start in them, 5 in window 3; 3 run last.
    const t = tokenOnly.map((x) => x.id);
    expect(order).toEqual(['p.0', 'p.1', 'p.2', 'p.3', 'p.4', 'p.5', 't.0', 't.1', 'p.6', 'p.7', 'p.8', 't.2', 't.3', ...t.slice(4)]);
    expect(order).toHaveLength(21);
  });

  it('keep their order when the key never waits for a window', () => {
    const order = spreadTokenChecks([...tokenOnly, ...paced], { ...limits, keyCeiling: 1000 }).map((x) => x.id);
    expect(order).toEqual([...tokenOnly, ...paced].map((x) => x.id));
  });
});
