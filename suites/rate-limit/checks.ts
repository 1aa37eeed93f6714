/**
 * Rate limits (spec: Limits, rate-limit response headers; Errors, Retry rule 1;
 * catalog HPB-00105). The header checks send a handful of requests; the
 * exhaustion checks drive one key (`extra` when configured) to its limit and
 * end with that key served again. Timing rules are judged from measured send and
 * answer times (judge.ts): a fail states the timings that prove it; a run too slow
 * to observe a rule skips with its figures, never fails.
 */
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import { randomUUID } from 'node:crypto';
import {
  PATHS,
  clearlyBeforeWait,
  expectError,
  firstIssue,
  integerHeader,
  judgeRemainingSteps,
  judgeRetryAfterValue,
  judgeRetryAfterWait,
  pathOf,
  type Verdict,
} from '../../src/service/index.js';
import type { HttpResponse } from '../../src/http/index.js';
import { type Attempt, excessScenario, KEY_EPISODES_EARLY, slidingScenario } from './scenarios.js';
import { operationsCheck } from './operations-check.js';
import {
  type Hit,
  hit,
  keyTraffic,
  organizationSiblings,
  othersThan,
  type Probe,
  PROBE_SCOPES,
  probeFor,
  quietAt,
  ROTATION_SCOPES,
  timed,
  wait,
  waitUntil,
} from './support.js';

const area = 'rate-limit';
const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'] as const;
const EXHAUSTS = {
  tags: ['exhausts-key-limit', 'waits'] as CheckDefinition['tags'],
  fixtures: ['medicationRequest'],
  timeoutMs: 10 * 60_000,
  startEarly: KEY_EPISODES_EARLY,
};

/** Seconds of clock difference tolerated when the response has no Date header. */
const CLOCK_SLACK_S = 5;

/** The server's clock in unix seconds (its Date header), else ours with a slack. */
function serverClock(res: HttpResponse): { nowS: number; slackS: number } {
  const date = Date.parse(res.headers.date ?? '');
  return Number.isNaN(date) ? { nowS: Math.floor(Date.now() / 1000), slackS: CLOCK_SLACK_S } : { nowS: Math.floor(date / 1000), slackS: 2 };
}

/** A request of each kind a key makes: a read, a search, a read of an absent id, a read outside the token's scope. */
async function authenticatedSamples(ctx: CheckContext): Promise<HttpResponse[]> {
  const read = pathOf(ctx, 'R4', 'MedicationRequest', 'read');
  const search = pathOf(ctx, 'R4', 'MedicationRequest', 'search-type');
  const encounterRead = pathOf(ctx, 'R4', 'Encounter', 'read');
  return [
    await ctx.fhir({ scopes: PROBE_SCOPES, url: ctx.path(read, { id: ctx.fixture('medicationRequest') }), coveringToken: true }),
    await ctx.fhir({ scopes: PROBE_SCOPES, url: `${search}?patient=${encodeURIComponent(ctx.fixture('patient'))}&_count=1`, coveringToken: true }),
    await ctx.fhir({ scopes: PROBE_SCOPES, url: ctx.path(read, { id: randomUUID() }), coveringToken: true }),
    // Its token's exact scopes are the point: the read is outside them.
    await ctx.fhir({ scopes: PROBE_SCOPES, url: ctx.path(encounterRead, { id: ctx.fixture('encounter') }) }),
  ];
}

/**
 * One key of each declared kind other than main's (clients[].keyKind: sandbox, production) in main's
 * organization, whose scopes allow the probe: the first client of that kind.
 */
function otherKindKeys(ctx: CheckContext): Array<{ kind: 'sandbox' | 'production'; role: string }> {
  const mainKind = ctx.client('main').keyKind;
  const out: Array<{ kind: 'sandbox' | 'production'; role: string }> = [];
  for (const kind of ['sandbox', 'production'] as const) {
    if (kind === mainKind) continue;
    const other = ctx.config.clients.find(
      (c) => c.keyKind === kind && c.role !== 'second-org' && (c.scopes === undefined || c.scopes.some((s) => PROBE_SCOPES.includes(s))),
    );
    if (other) out.push({ kind, role: other.role });
  }
  return out;
}

function attachAll(ctx: CheckContext, hits: Array<Hit | undefined>): void {
  for (const h of hits) if (h) ctx.attach(h.res.exchange);
}

/** One line per attempt: what it sent, how fast, how close it came. */
function describeAttempts(attempts: Attempt[]): string {
  return attempts.map((a, i) => `try ${i + 1} (${a.concurrency} in flight): ${a.message ?? `${a.figures.sent} requests in ${a.figures.spanMs} ms`}`).join('; ');
}

/**
 * Turns a judge's verdict into the check's outcome: a fail with its timings, an
 * error, or (after the faster re-send) a skip that states how close the run came.
 */
function settle<F>(ctx: CheckContext, v: Verdict<F>, attempts: Attempt[], exchange?: string): void {
  if (v.verdict === 'fail') ctx.fail(v.message, { requirement: v.requirement, expected: v.expected, actual: v.actual, ...(exchange ? { exchange } : {}) });
  if (v.verdict === 'error') throw new Error(v.message);
  if (v.verdict === 'inconclusive')
    ctx.skip(`inconclusive on this run, the target's timing left the rule unobservable: ${attempts.length ? describeAttempts(attempts) : v.message}`);
}

/** A handful of requests of `main`: they run early in the run, while the key has room (see the sequencer). */
export const headerChecks: CheckDefinition[] = [
  defineCheck({
    id: 'rate-limit.headers-on-authenticated-responses',
    surfaces: {
      release: 'R4',
      resource: 'MedicationRequest (read, search, 404), Encounter (read); every surface by the invariants.rate-limit-* checks',
      keyKind: 'main, and one key of each other declared kind (clients[].keyKind: sandbox, production) of its organization',
    },
    title: "authenticated responses carry X-RateLimit-Limit (the key's limit), -Remaining and -Reset",
    area,
    tags: ['early'],
    level: 'MUST',
    requirements: ['rate-limit.headers-present', 'rate-limit.limit-header', 'rate-limit.per-key-default-60'],
    quote: 'Rate-limit response headers (on every response):',
    fixtures: ['medicationRequest', 'patient', 'encounter'],
    async run(ctx: CheckContext) {
      // The main key's samples, and one read with a key of each other declared kind (sandbox, production): each
      // response carries the limit of the key that sent it.
      const samples = (await authenticatedSamples(ctx)).map((res) => ({ res, role: 'main' }));
      const mainKind = ctx.client('main').keyKind;
      const read = pathOf(ctx, 'R4', 'MedicationRequest', 'read');
      const kinds: string[] = mainKind ? [`${mainKind} (main)`] : [];
      for (const { kind, role } of otherKindKeys(ctx)) {
        kinds.push(`${kind} (${role})`);
        samples.push({ res: await ctx.fhir({ scopes: PROBE_SCOPES, role, url: ctx.path(read, { id: randomUUID() }), coveringToken: true }), role });
      }
      ctx.observe('surfaces', { keyKinds: kinds });
      for (const { res, role } of samples) {
        const expectedLimit = ctx.client(role).rateLimitPerMinute;
        const what = `${res.exchange.request.method} ${new URL(res.exchange.request.url).pathname} (${res.status}, key ${role})`;
        const missing = RATE_HEADERS.filter((n) => res.headers[n] === undefined);
        if (
          !ctx.check(missing.length === 0, `${what} lacks ${missing.join(', ')}`, {
            requirement: 'rate-limit.headers-present',
            expected: RATE_HEADERS,
            actual: `missing: ${missing.join(', ')}`,
            exchange: res.exchange.id,
          })
        )
          continue;
        const limit = integerHeader(res.headers['x-ratelimit-limit']);
        ctx.check(limit !== undefined && limit > 0, `${what}: X-RateLimit-Limit is not a positive integer`, {
          requirement: 'rate-limit.limit-header',
          expected: 'a positive integer',
          actual: res.headers['x-ratelimit-limit'],
          exchange: res.exchange.id,
        });
        ctx.check(limit === undefined || limit === expectedLimit, `${what}: X-RateLimit-Limit is ${limit}, the key's ceiling is ${expectedLimit}`, {
          requirement: 'rate-limit.per-key-default-60',
          expected: expectedLimit,
          actual: limit,
          exchange: res.exchange.id,
        });
      }
      const metadata = await ctx.request({ url: PATHS.metadata.R4, headers: { accept: 'application/fhir+json' } });
      ctx.observe(
        'rate-limit.headers-on-unauthenticated-metadata',
        RATE_HEADERS.filter((n) => metadata.headers[n] !== undefined),
      );
    },
  }),
  defineCheck({
    id: 'rate-limit.remaining-decrements',
    surfaces: {
      release: 'R4 and R5 in one sequence',
      resource:
        "R4 MedicationRequest (read, search, read of an unknown id: 404), R5 DocumentReference (read), R4 Encounter (read), one after the other: the window is the key's, over every authenticated request",
      keyKind: 'main, and one key of each other declared kind (clients[].keyKind: sandbox, production) of its organization, each its own sequence',
      leftOut: [
        "the second organization's key and further keys of a kind already judged: their Remaining is judged against 0..Limit on every response (invariants.rate-limit-headers-arithmetic), not step by step; each sequence costs its key six requests",
        'writes: the check runs in the read-only profile too',
      ],
    },
    title: 'X-RateLimit-Remaining stays within 0..Limit and goes down by exactly one per request of a key, whichever release, resource type and interaction',
    area,
    tags: ['early'],
    level: 'MUST',
    requirements: ['rate-limit.headers-arithmetic'],
    quote: 'X-RateLimit-Remaining | Requests left in the current window.',
    fixtures: ['medicationRequest'],
    // Its point is the key's count, not a token's scopes: one token of the key for every surface of the sequence.
    coveringTokens: true,
    async run(ctx: CheckContext) {
      // Main's key, then one key of each other declared kind of its organization (its own window and limit).
      const keys = [{ role: 'main', kind: ctx.client('main').keyKind ?? 'main' }, ...otherKindKeys(ctx)];
      const judged: KeySequence[] = [];
      for (const { role, kind } of keys) judged.push(await judgeKey(ctx, role, kind));
      ctx.observe('surfaces', Object.fromEntries(judged.map((k) => [`${k.kind} (${k.role})`, k.surfaces])));
      let failed = false;
      for (const k of judged) {
        attachAll(ctx, k.hits);
        const key = `key ${k.role} (${k.kind})`;
        const missing = k.hits.find((h) => h.headers.remaining === undefined);
        if (missing) {
          failed = true;
          ctx.check(false, `X-RateLimit-Remaining is missing or not an integer (${key})`, {
            requirement: 'rate-limit.headers-arithmetic',
            expected: 'integers',
            actual: k.hits.map((h) => h.res.headers['x-ratelimit-remaining'] ?? null),
            exchange: missing.res.exchange.id,
          });
          continue;
        }
        for (const h of k.hits) {
          const limit = h.headers.limit;
          if (
            !ctx.check(
              limit === undefined || h.headers.remaining! <= limit,
              `X-RateLimit-Remaining ${h.headers.remaining} exceeds X-RateLimit-Limit ${limit} (${key})`,
              {
                requirement: 'rate-limit.headers-arithmetic',
                expected: `0..${limit}`,
                actual: h.headers.remaining,
                exchange: h.res.exchange.id,
              },
            )
          )
            failed = true;
        }
        ctx.observe(
          `rate-limit.remaining-sequence.${k.role}`,
          k.hits.map((h) => h.headers.remaining),
        );
        if (k.verdict.verdict === 'fail') {
          failed = true;
          ctx.check(false, `${k.verdict.message} (${key})`, {
            requirement: 'rate-limit.headers-arithmetic',
            expected: k.verdict.expected,
            actual: k.verdict.actual,
            exchange: k.hits[k.verdict.at ?? k.hits.length - 1]!.res.exchange.id,
          });
        }
      }
      const unjudged = judged.flatMap((k) => (k.verdict.verdict === 'inconclusive' ? [`key ${k.role}: ${k.verdict.message}`] : []));
      if (!failed && unjudged.length > 0) ctx.skip(`inconclusive on this run: ${unjudged.join('; ')}; run again once the key has been idle for a window`);
    },
  }),
  defineCheck({
    id: 'rate-limit.reset-unix-seconds',
    title: 'X-RateLimit-Reset is a unix timestamp in seconds, not in the past, at most one window ahead',
    area,
    tags: ['early'],
    level: 'MUST',
    requirements: ['rate-limit.reset-header'],
    quote: 'X-RateLimit-Reset | Unix timestamp (UTC) at which the window resets.',
    fixtures: ['medicationRequest'],
    async run(ctx: CheckContext) {
      const h = await hit(ctx, probeFor(ctx, 'main'));
      const raw = h.res.headers['x-ratelimit-reset'];
      const reset = h.headers.reset;
      if (reset === undefined)
        ctx.fail('X-RateLimit-Reset is missing or not an integer number of seconds', {
          requirement: 'rate-limit.reset-header',
          expected: 'unix seconds',
          actual: raw ?? null,
          exchange: h.res.exchange.id,
        });
      const { nowS, slackS } = serverClock(h.res);
      const lo = nowS - slackS;
      const hi = nowS + ctx.limits.windowSec + slackS;
      ctx.check(
        reset >= lo && reset <= hi,
        `X-RateLimit-Reset ${reset} is not a unix time in seconds within one window of now${reset > hi * 100 ? ' (milliseconds?)' : ''}`,
        {
          requirement: 'rate-limit.reset-header',
          expected: `${lo}..${hi}`,
          actual: reset,
          exchange: h.res.exchange.id,
        },
      );
      ctx.observe('rate-limit.reset-seconds-ahead', reset - nowS);
    },
  }),
];

/**
 * The longest rate-limit.remaining-decrements waits for requests from before the run to leave the key's
 * window before judging a second sequence: a short window's (the embedded reference's 5 s, the fault
 * runs' 12 s); beyond it (a whole minute at the spec's limits, a gate run just after another) it skips.
 */
const REJUDGE_WAIT_MAX_MS = 15_000;

/** A probe of the sequence, named for the report. */
type SurfaceProbe = Probe & { label: string };

/**
 * What the sequence sends, in turn: the probe (an R4 MedicationRequest read), then each other
 * surface the target publishes and the config has a fixture for (an R5 DocumentReference read, an
 * R4 MedicationRequest search, an R4 Encounter read), and a read of an id nobody has (404). The
 * key's window counts every authenticated request: a count kept per release, resource type or
 * interaction (a gateway's counter per route) shows in the steps between two of them.
 */
function sequenceSurfaces(ctx: CheckContext, probe: Probe): SurfaceProbe[] {
  const out: SurfaceProbe[] = [{ ...probe, label: 'R4 MedicationRequest read' }];
  // A scope the key's client is not declared to hold (clients[].scopes) is not asked for.
  const declared = ctx.client(probe.role).scopes;
  const may = (scope: string) => declared === undefined || declared.includes(scope);
  const documentRead = ctx.findOperation('DocumentReference', 'read', 'R5');
  if (documentRead && ctx.hasFixture('documentReference') && may('system/DocumentReference.rs'))
    out.push({
      ...probe,
      url: ctx.path(documentRead.path, { id: ctx.fixture('documentReference') }),
      scopes: ['system/DocumentReference.rs'],
      label: 'R5 DocumentReference read',
    });
  const search = ctx.findOperation('MedicationRequest', 'search-type', 'R4');
  if (search && ctx.hasFixture('patient'))
    out.push({ ...probe, url: `${search.path}?patient=${encodeURIComponent(ctx.fixture('patient'))}&_count=1`, label: 'R4 MedicationRequest search' });
  const encounterRead = ctx.findOperation('Encounter', 'read', 'R4');
  if (encounterRead && ctx.hasFixture('encounter') && may(ROTATION_SCOPES[0]!))
    out.push({ ...probe, url: ctx.path(encounterRead.path, { id: ctx.fixture('encounter') }), scopes: ROTATION_SCOPES, label: 'R4 Encounter read' });
  out.push({
    ...probe,
    url: ctx.path(pathOf(ctx, 'R4', 'MedicationRequest', 'read'), { id: randomUUID() }),
    label: 'R4 MedicationRequest read of an unknown id',
  });
  return out;
}

/**
 * Six requests of the key, one after the other (each answer before the next leaves: their order at
 * the target is known), over `surfaces` in turn.
 */
async function remainingSequence(ctx: CheckContext, probe: Probe, surfaces: SurfaceProbe[]): Promise<Hit[]> {
  let first = await hit(ctx, probe);
  if ((first.headers.remaining ?? Infinity) < 7) {
    await wait(ctx, waitUntil(first, probe) - Date.now(), 'rate-limit: the key has too few requests left for this check');
    first = await hit(ctx, probe);
  }
  const hits = [first];
  for (let i = 1; i < 6; i++) hits.push(await hit(ctx, surfaces[i % surfaces.length]!));
  return hits;
}

/** One key's sequence and its verdict. */
interface KeySequence {
  role: string;
  kind: string;
  surfaces: string[];
  hits: Hit[];
  verdict: ReturnType<typeof judgeSequence>;
}

/**
 * The key's sequence judged, once more from a quiet key when the first was inconclusive (requests
 * from before the run, an earlier run's or discovery's, may have been leaving the window): once they
 * and the run's own requests of the key have all left (nothing the run knows could leave then to
 * excuse a step), a second sequence is judged strictly, when that wait is at most
 * REJUDGE_WAIT_MAX_MS; else the first stays inconclusive. A Remaining missing or above the limit
 * is judged by the caller, whatever the steps.
 */
async function judgeKey(ctx: CheckContext, role: string, kind: string): Promise<KeySequence> {
  const probe = probeFor(ctx, role);
  const surfaces = sequenceSurfaces(ctx, probe);
  for (const p of surfaces) await ctx.token(p.scopes ?? PROBE_SCOPES, role);
  let hits = await remainingSequence(ctx, probe, surfaces);
  let verdict = judgeSequence(ctx, probe, hits, true);
  const sound = hits.every((h) => h.headers.remaining !== undefined && (h.headers.limit === undefined || h.headers.remaining <= h.headers.limit));
  if (verdict.verdict === 'inconclusive' && sound) {
    const leftBy = quietAt(ctx, probe, Math.max(ctx.run.startedAt, ...hits.map((h) => h.receivedAt)));
    if (leftBy - Date.now() <= REJUDGE_WAIT_MAX_MS) {
      ctx.observe(`rate-limit.remaining-sequence-before-rejudge.${role}`, { values: hits.map((h) => h.headers.remaining), why: verdict.message });
      await wait(ctx, leftBy - Date.now(), "rate-limit: letting requests from before the run leave the key's window");
      hits = await remainingSequence(ctx, probe, surfaces);
      verdict = judgeSequence(ctx, probe, hits, false);
    }
  }
  return { role, kind, surfaces: surfaces.map((p) => p.label), hits, verdict };
}

/**
 * The sequence judged against the run's other requests of the key; with `allowEarlier`, also against
 * requests the key's window held from before the run (their count from the first hit's Remaining).
 */
function judgeSequence(ctx: CheckContext, probe: Probe, hits: Hit[], allowEarlier: boolean) {
  // The run's other requests of the key: one could leave the window (or, sent meanwhile, be counted) between two of these.
  const others = othersThan(keyTraffic(ctx, probe.role) ?? [], hits);
  // The smaller of the published and the declared ceiling: the fewest requests the run cannot account for.
  const limit = allowEarlier ? Math.min(hits[0]!.headers.limit ?? probe.limit, probe.limit) : undefined;
  return judgeRemainingSteps({ windowMs: probe.windowMs, hits: hits.map(timed), others, limit, unseenBefore: ctx.run.startedAt });
}

/** The checks of the exhaustion episodes: late in the run, so they stall nothing else. */
export const exhaustionChecks: CheckDefinition[] = [
  defineCheck({
    id: 'rate-limit.excess-gives-429',
    surfaces: {
      release: 'R4',
      resource: 'MedicationRequest (read of a fixture)',
      keyKind: "one sandbox key driven to its limit: the second organization's (else extra, else main)",
      leftOut: [
        "the production key's exhaustion: its limit (clients[].rateLimitPerMinute, default 60) plus a tenth more requests (66 at the default, about 9 % of a certification run's 712) on a key of the main organization, which shares the organization ceiling (value not shown) with main, so it would run with main quiet: about one more window (60 s, 14 % of the 426 s certification run, past the 1.05 bound). Its X-RateLimit-Limit is judged by rate-limit.headers-on-authenticated-responses, its headers on every response by invariants.rate-limit-*",
      ],
    },
    title: 'a key is served up to its limit within one window, and the excess gives 429 HPB-00105, issue code throttled, with Retry-After in seconds',
    area,
    level: 'MUST',
    requirements: ['rate-limit.excess-429', 'rate-limit.per-key-default-60', 'catalog.hpb-00105', 'rate-limit.retry-after', 'errors.throttled-code'],
    quote: 'Every authenticated request. Excess gives 429 `HPB-00105`.',
    ...EXHAUSTS,
    waitWindows: 1,
    async run(ctx: CheckContext) {
      const s = await excessScenario(ctx);
      attachAll(ctx, [...s.spaced, ...s.burst.hits.slice(-3), s.earlyRetry, s.afterWait]);
      ctx.observe('rate-limit.excess-bursts', s.attempts);
      if (s.verdict.verdict === 'pass' && s.verdict.note) ctx.observe('rate-limit.excess-not-judged-early', s.verdict.note);
      settle(ctx, s.verdict, s.attempts, s.burst.refused?.res.exchange.id ?? s.burst.hits.at(-1)?.res.exchange.id);
      const refused = s.burst.refused!;
      ctx.observe('rate-limit.accepted-before-429', s.verdict.figures.served);
      expectError(refused.res, { status: 429, code: 'HPB-00105', requirement: 'catalog.hpb-00105' });
      const issueCode = firstIssue(refused.res)?.code;
      ctx.check(issueCode === 'throttled', `issue[0].code of the 429 is ${String(issueCode)}, not throttled`, {
        requirement: 'errors.throttled-code',
        expected: 'throttled',
        actual: issueCode,
        exchange: refused.res.exchange.id,
      });
      const raw = refused.res.headers['retry-after'];
      const ra = judgeRetryAfterValue(raw, ctx.limits.windowSec, CLOCK_SLACK_S);
      ctx.check(ra.ok, ra.ok ? '' : ra.message, {
        requirement: 'rate-limit.retry-after',
        expected: `whole seconds, 1..${ctx.limits.windowSec}`,
        actual: raw ?? null,
        exchange: refused.res.exchange.id,
      });
    },
  }),
  defineCheck({
    id: 'rate-limit.early-retry-refused-and-extends-reset',
    surfaces: {
      release: 'R4',
      resource: 'MedicationRequest (read of a fixture)',
      keyKind: "one sandbox key driven to its limit: the second organization's (else extra, else main)",
      channel: 'the per-key window',
      leftOut: ["the token endpoint's 429: issuance-limit.early-retry-429 and issuance-limit.early-retry-extends-reset"],
    },
    title: 'a retry before Retry-After elapses gets another 429 and a later reset',
    area,
    level: 'MUST',
    requirements: ['rate-limit.early-retry-429', 'rate-limit.early-retry-extends-reset'],
    quote: 'On 429, wait the number of seconds in `Retry-After`; retrying sooner gives another 429 and extends the reset time.',
    ...EXHAUSTS,
    async run(ctx: CheckContext) {
      const s = await excessScenario(ctx);
      const refused = s.burst.refused;
      const retry = s.earlyRetry;
      if (!refused || !retry) ctx.skip('the key was not driven to 429 (see rate-limit.excess-gives-429)');
      attachAll(ctx, [...s.spaced, refused, retry]);
      // Judge only a retry whose answer came back clearly before the wait could have ended: a
      // Retry-After rounded up to whole seconds may end up to a second before it says, and on a
      // loaded machine a retry sent "early" can reach the target after the wait is over.
      if (retry.res.status !== 429 && !clearlyBeforeWait(refused.receivedAt, (refused.headers.retryAfter ?? 0) * 1000, retry.receivedAt))
        ctx.skip(
          `inconclusive on this run: the early retry was answered ${retry.res.status} ${retry.receivedAt - refused.receivedAt} ms after a 429 that said Retry-After ${refused.headers.retryAfter ?? '(none)'}, when a wait rounded up to whole seconds may have ended`,
        );
      if (retry.res.status !== 429 && retry.res.status < 500)
        ctx.fail(
          `a retry sent ${retry.sentAt - refused.receivedAt} ms after a 429 that said Retry-After ${refused.headers.retryAfter ?? '(none)'} s was answered ${retry.res.status} ${retry.receivedAt - refused.receivedAt} ms after it, not 429`,
          { requirement: 'rate-limit.early-retry-429', expected: 429, actual: retry.res.status, exchange: retry.res.exchange.id },
        );
      expectError(retry.res, { status: 429, code: 'HPB-00105', requirement: 'rate-limit.early-retry-429' });
      const before = refused.headers;
      const after = retry.headers;
      const { reset: resetBefore, retryAfter: waitBefore } = before;
      const { reset: resetAfter, retryAfter: waitAfter } = after;
      const bothWaits = waitBefore !== undefined && waitAfter !== undefined;
      // A reset kept as "when the window's newest request leaves" moves by the time between the
      // 429 and the retry: under a second when Retry-After was 1 s, which whole seconds may not
      // show. Then the Retry-After wait judges the extension instead.
      const subSecond = retry.sentAt - refused.receivedAt < 1000;
      if (resetBefore !== undefined && resetAfter !== undefined && (resetAfter > resetBefore || !subSecond || !bothWaits)) {
        const firstInWindow = refused.receivedAt < s.spaced[0]!.sentAt + s.probe.windowMs;
        if (resetAfter <= resetBefore && !firstInWindow)
          ctx.skip(
            `the key could not be filled within one window (${refused.receivedAt - s.spaced[0]!.sentAt} ms), so a moved reset cannot show in whole seconds`,
          );
        ctx.check(resetAfter > resetBefore, `X-RateLimit-Reset did not move later after an early retry (${resetBefore} then ${resetAfter})`, {
          requirement: 'rate-limit.early-retry-extends-reset',
          expected: `> ${resetBefore}`,
          actual: resetAfter,
          exchange: retry.res.exchange.id,
        });
      } else if (waitBefore !== undefined && waitAfter !== undefined) {
        // Whole seconds round up: only a gain of more than one second shows an extension.
        const gainMs = retry.receivedAt + waitAfter * 1000 - (refused.receivedAt + waitBefore * 1000);
        const resets = resetBefore !== undefined && resetAfter !== undefined;
        ctx.check(
          gainMs > 1000,
          `the wait did not move later after an early retry (Retry-After ${waitBefore} s, then ${waitAfter} s ${retry.receivedAt - refused.receivedAt} ms later${resets ? `; X-RateLimit-Reset ${resetBefore} then ${resetAfter}` : ''})`,
          {
            requirement: 'rate-limit.early-retry-extends-reset',
            expected: 'a later reset',
            actual: { before: waitBefore, after: waitAfter, ...(resets ? { resetBefore, resetAfter } : {}) },
            exchange: retry.res.exchange.id,
          },
        );
      } else {
        ctx.fail('neither X-RateLimit-Reset nor Retry-After is on both 429 responses', {
          requirement: 'rate-limit.early-retry-extends-reset',
          expected: 'X-RateLimit-Reset or Retry-After',
          actual: { before, after },
          exchange: retry.res.exchange.id,
        });
      }
    },
  }),
  defineCheck({
    id: 'rate-limit.served-after-retry-after',
    title: 'once Retry-After has elapsed, the throttled key is served again (a Retry-After shorter than the real wait fails)',
    area,
    level: 'MUST',
    requirements: ['rate-limit.sliding-window', 'rate-limit.retry-after'],
    quote: 'Retry-After | Sent with 429; seconds to wait.',
    ...EXHAUSTS,
    async run(ctx: CheckContext) {
      const s = await excessScenario(ctx);
      if (!s.afterWait || !s.waitedFor) ctx.skip('the key was not driven to 429 (see rate-limit.excess-gives-429)');
      attachAll(ctx, [s.burst.refused, s.earlyRetry, s.waitedFor, s.afterWait]);
      const after = s.afterWait;
      const v = judgeRetryAfterWait({ refused: timed(s.waitedFor), retryAfterS: s.waitedFor.headers.retryAfter, after: timed(after) });
      ctx.observe('rate-limit.waited-ms', s.waitedMs);
      if (v.verdict === 'inconclusive' && s.waitedFor.headers.retryAfter === undefined) {
        // No Retry-After (judged by rate-limit.excess-gives-429): the wait followed X-RateLimit-Reset, else three windows.
        ctx.check(
          after.res.status !== 429 || s.waitedMs! < s.probe.windowMs,
          `still 429 ${s.waitedMs} ms after the last 429 (no Retry-After), more than one ${ctx.limits.windowSec} s window`,
          {
            requirement: 'rate-limit.sliding-window',
            expected: 'served (not 429)',
            actual: after.res.status,
            exchange: after.res.exchange.id,
          },
        );
        return;
      }
      settle(ctx, v, [], after.res.exchange.id);
    },
  }),
  defineCheck({
    id: 'rate-limit.capacity-returns-as-requests-leave-window',
    title: 'the per-key window slides: a key is throttled exactly at its ceiling, and capacity returns as requests leave the window, not all at once',
    area,
    level: 'MUST',
    requirements: ['rate-limit.sliding-window', 'rate-limit.per-key-default-60', 'rate-limit.excess-429'],
    quote: 'default 60 requests per minute; 1-minute sliding window',
    ...EXHAUSTS,
    waitWindows: 1.5,
    async run(ctx: CheckContext) {
      const s = await slidingScenario(ctx);
      if (s.onRefills) {
        // Judged on the excess episode: its burst against the ceiling, its throttled operations' refills for the slide.
        const r = s.onRefills;
        const e = await excessScenario(ctx);
        attachAll(ctx, [e.burst.hits[0], e.burst.refused, r.after]);
        ctx.observe(
          'rate-limit.sliding-judged-on',
          `${r.judged} refill(s) of the throttled operations (rate-limit.operations-429), ${r.passed} consistent with a sliding window; no requests of its own`,
        );
        settle(ctx, s.verdict, s.attempts, e.burst.refused?.res.exchange.id);
        ctx.observe('rate-limit.second-half-in-window', r.slide.figures.inWindow);
        settle(ctx, r.slide, [], r.after.res.exchange.id);
        return;
      }
      attachAll(ctx, [s.first[0], s.first.at(-1), s.second.hits[0], s.second.refused, s.after]);
      ctx.observe('rate-limit.sliding-tries', s.attempts);
      settle(ctx, s.verdict, s.attempts, s.second.refused?.res.exchange.id ?? s.first.at(-1)?.res.exchange.id);
      if (!s.slide) {
        const refusedEarly = s.first.find((h) => h.res.status >= 400);
        ctx.skip(
          refusedEarly
            ? `the key was refused within the first half of its limit, and its earlier traffic is unknown: ${s.verdict.verdict === 'pass' ? (s.verdict.note ?? '') : ''}`
            : 'the second half met no 429 to wait out',
        );
      }
      ctx.observe('rate-limit.second-half-in-window', s.slide.figures.inWindow);
      settle(ctx, s.slide, s.attempts, s.after?.res.exchange.id);
    },
  }),
  defineCheck({
    id: 'rate-limit.organization-ceiling-while-key-throttled',
    title: 'records whether another key of the organization is served while one key is throttled',
    area,
    level: 'observation',
    requirements: ['rate-limit.per-org-shared'],
    quote: 'shared by all keys of the organization; 1-minute sliding window; value of the ceiling: not shown',
    ...EXHAUSTS,
    clients: ['extra'],
    async run(ctx: CheckContext) {
      const s = await excessScenario(ctx);
      if (!s.otherKey && !organizationSiblings(ctx, s.probe.role).length)
        ctx.skip(
          `the episodes drove the ${s.probe.role} key (another organization's, so they ran beside the paced checks), and the config has no other key of its organization`,
        );
      if (!s.otherKey) ctx.skip('the key was not driven to 429 (see rate-limit.excess-gives-429)');
      ctx.attach(s.otherKey.res.exchange);
      ctx.observe(
        'rate-limit.other-key-status-while-throttled',
        s.otherKey.res.status,
        "the organization ceiling is not shown; a 429 here means it is at most the throttled key's limit",
      );
    },
  }),
  operationsCheck,
  defineCheck({
    id: 'rate-limit.per-key-across-tokens',
    title:
      "a key's ceiling holds when it alternates two access tokens: the excess burst, every other request with another token of the key, gets its 429 within the limit",
    area,
    level: 'MUST',
    requirements: ['rate-limit.per-key-default-60', 'rate-limit.excess-429'],
    quote: 'Per-key request rate | configurable per key; default 60 requests per minute; 1-minute sliding window',
    ...EXHAUSTS,
    // Judges the excess episode's burst (counted as the episode's requests): none of its own.
    requests: 0,
    async run(ctx: CheckContext) {
      // The excess episode's own burst: no request of its own.
      const s = await excessScenario(ctx);
      const rotated = s.burst.rotated ?? 0;
      ctx.observe('rate-limit.burst-tokens', { requests: s.burst.hits.length, withSecondToken: rotated });
      if (rotated === 0)
        ctx.skip(
          'the burst used one token: the target publishes no R4 Encounter read, or the key has no fixture Encounter (fixtures encounter / otherOrgEncounter)',
        );
      if (s.verdict.verdict === 'fail' && s.verdict.rule === 'late')
        ctx.fail(
          `every other request of the burst went with another access token of the ${s.probe.role} key, and the key's ceiling did not hold: ${s.verdict.message}`,
          {
            requirement: s.verdict.requirement,
            expected: s.verdict.expected,
            actual: s.verdict.actual,
            exchange: s.burst.hits.at(-1)?.res.exchange.id,
          },
        );
      settle(ctx, s.verdict, s.attempts, s.burst.refused?.res.exchange.id);
    },
  }),
];

export const checks: CheckDefinition[] = [...headerChecks, ...exhaustionChecks];

export default checks;
