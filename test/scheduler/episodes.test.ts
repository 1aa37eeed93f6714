/**
 * The exhaustion episodes against the reference with short windows: one
 * episode per limit, shared by the checks that judge it, no 429 outside them,
 * and every R4 MedicationRequest and Encounter operation refused while the key
 * is exhausted (each operation's own fault is caught).
 */
import { describe, expect, it } from 'vitest';
import { runInProcess, describeResults, type InProcessOptions } from '../../src/run/in-process.js';
import { exhaustionChecks } from '../../suites/rate-limit/checks.js';
import issuanceChecks from '../../suites/issuance-limit/checks.js';
import { faults as rateLimitFaults } from '../../src/reference/faults/rate-limit.js';

// The R4 rows' faults (the R5 surface's: rate-limit-r5-not-throttled below; its code fault runs in the mutation shards).
const throttleFaults = rateLimitFaults.filter((f) => f.name.startsWith('throttled-without-code-') && !f.name.includes('document-reference'));
import type { ReferenceLimits } from '../../src/reference/types.js';
import type { Exchange } from '../../src/http/index.js';

/**
 * Short windows and low ceilings: a burst fills a window in well under a second. 6 s, not
 * less: the sliding-window probe comes after a Retry-After rounded up to whole seconds and
 * must still see the second half in the window, even when the machine is loaded.
 */
const LIMITS: Partial<ReferenceLimits> = {
  perKeyPerWindow: 30,
  perOrgPerWindow: 5000,
  windowMs: 6000,
  tokenIssuancePerWindow: 20,
  tokenWindowMs: 6000,
  tokenLifetimeSec: 60,
};

const operations = exhaustionChecks.filter((c) => c.id === 'rate-limit.operations-429');

/** With a second organization the episodes drive its key, which has no sibling key: the organization-ceiling observation skips. */
const ORG_OBSERVATION_SKIP =
  "rate-limit.organization-ceiling-while-key-throttled: skip (the episodes drove the second-org key (another organization's, so they ran beside the paced checks), and the config has no other key of its organization)";
const notPassing = (results: Map<string, import('../../src/engine/types.js').CheckResult>) =>
  describeResults(results).filter((l) => !/: (pass|observation)\b/.test(l) && l !== ORG_OBSERVATION_SKIP);

/** The embedded config without the second organization's client: the episodes drive `extra`, another key of main's organization. */
const withoutSecondOrg = (raw: Record<string, unknown>) => ({
  ...raw,
  clients: (raw.clients as Array<{ role: string }>).filter((c) => c.role !== 'second-org'),
});

describe('exhaustion episodes (certification schedule)', () => {
  it('every exhaustion check passes from one episode per limit, with no unplanned 429', async () => {
    const results = await runInProcess([...exhaustionChecks, ...issuanceChecks], { limits: LIMITS, profile: 'full' });
    expect(notPassing(results)).toEqual([]);
    expect(describeResults(results)).toContain(ORG_OBSERVATION_SKIP);
    for (const r of results.values()) expect(r.stats?.unplanned429, r.id).toBe(0);
    // The issuance burst ran once, beside the key episodes: the recovery check's only exchange is the token request after the wait.
    expect(results.get('issuance-limit.window-recovers')!.evidence.map((x) => x.response?.status)).toEqual([200]);
    // Every operation was refused on the full key, and judged.
    const ops = results.get('rate-limit.operations-429')!;
    expect(ops.requirements).toHaveLength(12);
    expect(ops.evidence.filter((x) => x.response?.status === 429)).toHaveLength(12);
    // Both key episodes ran on the other organization's key, one after the other.
    const sliding = results.get('rate-limit.capacity-returns-as-requests-leave-window')!;
    expect(new Set(sliding.evidence.map((x) => x.client))).toEqual(new Set(['second-org']));
    expect(new Set(results.get('rate-limit.excess-gives-429')!.evidence.map((x) => x.client))).toEqual(new Set(['second-org']));
    // On one key, the window's slide is judged on the throttled operations' refills (no sliding episode of its
    // own) when a refill can be judged either way; on a loaded machine none may be (whole-second slack), and the
    // sliding episode then runs and must pass by itself (it failed one fresh-clone run as a strict assertion).
    // The refill path stays proven by the next test (strict) and test/rate-limit/refill-slide.
    const judgedOn = sliding.observations.find((o) => o.key === 'rate-limit.sliding-judged-on');
    if (judgedOn) expect(String(judgedOn.value)).toMatch(/^[1-9]\d* refill\(s\) of the throttled operations/);
    else expect(sliding.observations.map((o) => o.key)).toContain('rate-limit.sliding-tries');
    // A hang guard, not a timed test: twelve throttled operations (R4 and R5), on a loaded machine about two minutes.
  }, 300_000);

  // The two variants mostly wait out windows, each on its own reference: they run together (the run
  // above and the operation faults' runs below each run apart from them).
  it.concurrent("without a second organization, the episodes drive another key of main's organization, and the organization ceiling is observed", async () => {
    const results = await runInProcess([...exhaustionChecks, ...issuanceChecks], { limits: LIMITS, profile: 'full', config: withoutSecondOrg });
    expect(describeResults(results).filter((l) => !/: (pass|observation)\b/.test(l))).toEqual([]);
    for (const r of results.values()) expect(r.stats?.unplanned429, r.id).toBe(0);
    expect(new Set(results.get('rate-limit.excess-gives-429')!.evidence.map((x) => x.client))).toEqual(new Set(['extra']));
    // The window's slide was judged on the same key's throttled operations' refills.
    const sliding = results.get('rate-limit.capacity-returns-as-requests-leave-window')!;
    expect(sliding.observations.map((o) => o.key)).toContain('rate-limit.sliding-judged-on');
    expect(new Set(sliding.evidence.map((x) => x.client))).toEqual(new Set(['extra']));
    const org = results.get('rate-limit.organization-ceiling-while-key-throttled')!;
    expect(org.outcome).toBe('observation');
    expect(org.evidence.map((x) => x.client)).toEqual(['main']);
  }, 180_000);

  it.concurrent('a target that doubles the wait on every early request: no request but the one early retry leaves on a key before its Retry-After, and every check passes', async () => {
    const exchanges: Exchange[] = [];
    const results = await runInProcess([...exhaustionChecks, ...issuanceChecks], {
      limits: LIMITS,
      profile: 'full',
      modes: { prematureRetry: 'extend-steep' },
      subscribers: [
        (e) => {
          if (e.type === 'exchange') exchanges.push(e.exchange);
        },
      ],
    });
    expect(notPassing(results)).toEqual([]);
    // Per key: every request that started after a 429 was sent (or while it was in flight) and before its
    // Retry-After elapsed from its answer. Exact: the client records both times and holds the key until then.
    const early: string[] = [];
    for (const client of new Set(exchanges.map((x) => x.client).filter((c) => c !== undefined))) {
      const own = exchanges.filter((x) => x.client === client).map((x) => ({ x, start: Date.parse(x.startedAt), end: Date.parse(x.startedAt) + x.durationMs }));
      for (const p of own.filter((o) => o.x.response?.status === 429)) {
        const until = p.end + Number(p.x.response!.headers['retry-after'] ?? 0) * 1000;
        for (const o of own) if (o !== p && o.start >= p.start && o.start < until) early.push(`${client} ${o.x.id} ${o.x.request.method} ${o.x.request.url}`);
      }
    }
    const retry = results.get('rate-limit.early-retry-refused-and-extends-reset')!;
    expect(early).toHaveLength(1);
    expect(retry.evidence.map((x) => x.id)).toContain(early[0]!.split(' ')[1]);
    expect(results.get('rate-limit.operations-429')!.evidence.filter((x) => x.response?.status === 429)).toHaveLength(12);
  }, 180_000);

  it('a run of the per-key exhaustion checks alone spends no token issuance burst it does not judge, and ends cleanly', async () => {
    const exchanges: Exchange[] = [];
    const excess = exhaustionChecks.filter((c) => c.id === 'rate-limit.excess-gives-429');
    const results = await runInProcess(excess, {
      limits: LIMITS,
      profile: 'full',
      subscribers: [(e) => void (e.type === 'exchange' && exchanges.push(e.exchange))],
    });
    expect(describeResults(results).filter((l) => !/: (pass|observation)\b/.test(l))).toEqual([]);
    const tokenRequests = exchanges.filter((x) => new URL(x.request.url).pathname === '/auth/token');
    // The episode's own tokens only (one per probe key), never the issuance burst of 2 x 20 + 1.
    expect(tokenRequests.length).toBeLessThan(10);
    expect(tokenRequests.filter((x) => x.response?.status === 429)).toEqual([]);
  }, 120_000);

  const writesServed = rateLimitFaults.find((f) => f.name === 'rate-limit-writes-not-throttled')!;
  const r5Served = rateLimitFaults.find((f) => f.name === 'rate-limit-r5-not-throttled')!;
  const operationFaults = [...throttleFaults, writesServed, r5Served];
  /**
   * The R5 surface published the other ways a conforming target may (the mutation test's modes are
   * quick-profile runs, which leave this check out): found from a servers-relative OpenAPI alone with
   * no R5 CapabilityStatement, from a bare one beside a type-level $upload, or beside an R4
   * DocumentReference that is published too. Every operation is still sent on the full key and
   * refused. They start with the fault runs.
   */
  const publicationModes = [
    { r5Capability: 'none', openapiForm: 'servers-relative' },
    { r5Capability: 'bare', uploadContract: 'type-document-reference' },
    { r4DocumentReference: 'writes-untyped' },
  ] as const;
  /**
   * The operation faults' runs (by fault name) and the mode runs (by their modes as JSON) mostly wait for
   * their windows (each about a minute, most of it Retry-After), each on its own reference: all of them
   * start together once the runs above are done, which run alone (started with them, the sliding window's
   * judgement on the throttled operations' refills was missed), and each test awaits its own.
   */
  let operationRuns: Map<string, ReturnType<typeof runInProcess>> | undefined;
  const operationRun = (label: string) => {
    const variants: Array<[string, InProcessOptions]> = [
      ...operationFaults.map((f): [string, InProcessOptions] => [f.name, { faults: [f.name] }]),
      ...publicationModes.map((modes): [string, InProcessOptions] => [JSON.stringify(modes), { modes }]),
    ];
    operationRuns ??= new Map(
      variants.map(([name, variant]) => {
        const run = runInProcess(operations, { limits: LIMITS, profile: 'full', ...variant });
        run.catch(() => {}); // awaited (and reported) by its own test
        return [name, run] as const;
      }),
    );
    return operationRuns.get(label)!;
  };
  it.concurrent.each(publicationModes.map((m) => [JSON.stringify(m)] as const))(
    'clean reference in mode %s: rate-limit.operations-429 passes with all twelve operations refused',
    async (label) => {
      const results = await operationRun(label);
      const r = results.get('rate-limit.operations-429')!;
      expect(r.outcome, describeResults(results).join('\n')).toBe('pass');
      expect(r.requirements).toHaveLength(12);
      const refused = r.evidence.filter((x) => x.response?.status === 429);
      expect(refused).toHaveLength(12);
      expect(refused.filter((x) => new URL(x.request.url).pathname.includes('/R5/'))).toHaveLength(4);
    },
    240_000,
  );

  it.concurrent.each(operationFaults.map((f) => [f.name, f.violates[0]!] as const))(
    '%s fails rate-limit.operations-429 on %s',
    async (fault, requirement) => {
      const results = await operationRun(fault);
      const r = results.get('rate-limit.operations-429')!;
      expect(r.outcome, describeResults(results).join('\n')).toBe('fail');
      expect(r.findings.map((f) => f.requirement)).toContain(requirement);
    },
    // A hang guard: each fault run waits for its throttled phase (twelve operations).
    240_000,
  );
});
