import { describe, expect, it } from 'vitest';
import { planChecks, slotOf, SCHEDULE, type CatalogCheck } from '../../src/engine/plan.js';
import type { CheckTag } from '../../src/engine/check.js';
import { referenceCatalog } from '../../src/run/reference-model.js';
import { runInProcess } from '../../src/run/in-process.js';
import { runConformance } from '../../src/run/index.js';
import type { PlannedCheck, Subscriber } from '../../src/engine/events.js';

const check = (id: string, folder: string, tags: CheckTag[] = []): CatalogCheck => ({
  id,
  title: id,
  area: folder,
  folder,
  requirements: ['x'],
  level: 'MUST',
  tags,
  run: async () => {},
});

describe('the schedule', () => {
  it('derives the slot from tags only', () => {
    expect(slotOf({ tags: [] })).toBe('paced');
    expect(slotOf({ tags: ['early'] })).toBe('early');
    expect(slotOf({ tags: ['writes', 'exhausts-key-limit', 'waits'] })).toBe('exhausting');
    expect(slotOf({ tags: ['exhausts-issuance-limit'] })).toBe('exhausting');
    expect(slotOf({ tags: ['waits', 'expiry-probe'] })).toBe('probe');
    expect(slotOf({ tags: ['last'] })).toBe('last');
  });

  it('orders by slot, then folder rank, then catalog order, whatever the input order', () => {
    const input = [
      check('invariants.a', 'invariants', ['last']),
      check('token-lifetime.a', 'token-lifetime', ['waits', 'expiry-probe']),
      check('auth.expiry', 'auth', ['waits', 'expiry-probe']),
      check('rate-limit.excess', 'rate-limit', ['exhausts-key-limit']),
      check('issuance-limit.a', 'issuance-limit', ['exhausts-issuance-limit']),
      check('pagination.a', 'pagination'),
      check('tenancy.a', 'tenancy'),
      check('auth.a', 'auth'),
      check('rate-limit.headers', 'rate-limit', ['early']),
      check('discovery.a', 'discovery', ['early']),
      check('zzz-new.a', 'zzz-new'),
      check('auth.b', 'auth'),
    ];
    const order = planChecks(input).map((c) => c.id);
    expect(order).toEqual([
      'discovery.a',
      'rate-limit.headers',
      'auth.a',
      'auth.b',
      'tenancy.a',
      'pagination.a',
      'zzz-new.a',
      'rate-limit.excess',
      'issuance-limit.a',
      'auth.expiry',
      'token-lifetime.a',
      'invariants.a',
    ]);
    expect(
      planChecks([...input].reverse())
        .map((c) => c.id)
        .filter((id) => id.startsWith('auth.') && !id.includes('expiry')),
    ).toEqual(['auth.b', 'auth.a']);
    expect(SCHEDULE.folders.indexOf('tenancy')).toBeLessThan(SCHEDULE.folders.indexOf('encounter'));
    // Right after auth (which uses the second organization's key undeclared), before the generated checks' pinned main-key load.
    expect(SCHEDULE.folders.indexOf('tenancy')).toBe(SCHEDULE.folders.indexOf('auth') + 1);
  });

  it("puts the catalog's discovery and header checks first and the invariants last", async () => {
    const order = planChecks(await referenceCatalog());
    expect(order[0]!.area).toBe('discovery');
    expect(slotOf(order.at(-1)!)).toBe('last');
    const firstPaced = order.findIndex((c) => slotOf(c) === 'paced');
    expect(order.slice(0, firstPaced).every((c) => c.id.startsWith('discovery.') || c.id.startsWith('rate-limit.'))).toBe(true);
  });
});

describe('one run path', () => {
  it('the mutation runner (in-process) and the CLI path execute checks in the same order for one profile', async () => {
    const seen = (into: string[]) => [(e: { type: string; check?: PlannedCheck }) => void (e.type === 'check-started' && into.push(e.check!.id))];
    const only = /^(discovery|tenancy|headers|media-type)\./;
    const inProcess: string[] = [];
    const product: string[] = [];
    await runInProcess('all', { profile: 'quick', only, subscribers: seen(inProcess) });
    await runConformance({ profile: 'quick', only, progress: false, writeReports: false, subscribers: seen(product) });
    expect(inProcess.length).toBeGreaterThan(10);
    expect(inProcess).toEqual(product);
  }, 120_000);

  it('plan the whole full profile identically, every slot included (each run cancelled once its plan is published)', async () => {
    const planOf = async (start: (subscribers: Subscriber[]) => Promise<unknown>) => {
      let plan: Array<{ id: string; slot: string }> = [];
      await start([
        (e) => {
          if (e.type === 'run-started') plan = e.planned.map((c) => ({ id: c.id, slot: c.slot }));
        },
      ]);
      return plan;
    };
    const abortAtStart = (): { signal: AbortSignal; subscriber: Subscriber } => {
      const controller = new AbortController();
      return { signal: controller.signal, subscriber: (e) => void (e.type === 'run-started' && controller.abort()) };
    };
    const a = abortAtStart();
    const b = abortAtStart();
    // The mutation runner's entry (runInProcess) and the CLI's (runConformance), side by side.
    const inProcess = await planOf((subs) => runInProcess('all', { profile: 'full', signal: a.signal, subscribers: [...subs, a.subscriber] }));
    const cli = await planOf((subs) =>
      runConformance({ profile: 'full', progress: false, writeReports: false, signal: b.signal, subscribers: [...subs, b.subscriber] }),
    );
    expect(inProcess.length).toBeGreaterThan(300);
    expect(new Set(inProcess.map((c) => c.slot))).toEqual(new Set(['early', 'paced', 'exhausting', 'probe', 'last']));
    expect(cli).toEqual(inProcess);
  }, 120_000);
});
