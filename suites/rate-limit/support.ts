/**
 * Helpers of the rate-limit suite: reading the rate-limit headers, sending
 * probes that bypass client-side pacing, driving a key to its limit, and
 * waiting until the key is served again so later checks are not stalled.
 */
import type { ResolvedConfig } from '../../src/config/index.js';
import type { CheckContext } from '../../src/engine/index.js';
import type { HttpResponse } from '../../src/http/index.js';
import { pathOf, rateHeaders, type RateHeaders, type Timed, windowSlackMs } from '../../src/service/index.js';

/** The run log's requests of a key minus one entry per hit (src/service/limits/judge.ts). */
export { othersThan } from '../../src/service/index.js';

/** The scope of the probe request (a MedicationRequest read). */
export const PROBE_SCOPES = ['system/MedicationRequest.rs'];
/** Requests kept in flight while a burst is far from the limit. */
export const BURST_CONCURRENCY = 8;
/** In flight when a burst is re-sent because the first one was too slow to fill a window. */
export const FAST_CONCURRENCY = 32;

/** One probe: when it was sent (client clock, ms) and what came back. */
export interface Hit {
  sentAt: number;
  receivedAt: number;
  res: HttpResponse;
  headers: RateHeaders;
}

/** A hit as the judges see it. */
export function timed(h: Hit): Timed & { remaining?: number } {
  return { sentAt: h.sentAt, receivedAt: h.receivedAt, status: h.res.status, ...(h.headers.remaining !== undefined ? { remaining: h.headers.remaining } : {}) };
}

export interface Probe {
  role: string;
  url: string;
  /** The key's ceiling per window, from the config. */
  limit: number;
  windowMs: number;
  /** The scopes of its token (default PROBE_SCOPES): another scope set is another token of the same key. */
  scopes?: string[];
}

/** The scopes of the rotation probe's token: another token of the key than the probe's. */
export const ROTATION_SCOPES = ['system/Encounter.rs'];

/**
 * A second probe of the key that uses another token (a read of a fixture Encounter of the key's
 * organization, with its Encounter.rs token, which the throttled operations issue anyway): a burst
 * alternating the two proves the limit is per key, not per token. Undefined when the target
 * publishes no Encounter read or the fixture is missing.
 */
export function rotationProbe(ctx: CheckContext, probe: Probe): Probe | undefined {
  const op = ctx.findOperation('Encounter', 'read', 'R4');
  const fixture = fixtureKeyFor(probe.role, 'encounter');
  if (!op || !ctx.hasFixture(fixture)) return undefined;
  return { ...probe, url: ctx.path(op.path, { id: ctx.fixture(fixture) }), scopes: ROTATION_SCOPES };
}

/** The fixtures of the second organization the episodes need on its key (the probe, and the throttled operations). */
export const OTHER_ORG_FIXTURES = ['otherOrgMedicationRequest', 'otherOrgPatient', 'otherOrgEncounter'] as const;

/**
 * The client whose key the exhaustion episodes drive to its limit:
 * - `second-org` when the config has it and its fixtures: another organization, whose ceilings
 *   the main key's traffic never meets, so the episodes run beside the paced checks;
 * - else `extra`, another key of main's organization (the run keeps main quiet meanwhile: the
 *   organization's ceiling is not shown);
 * - else `main`.
 */
export function throttleRoleOf(config: Pick<ResolvedConfig, 'clients' | 'fixtures'>): string {
  const roles = new Set(config.clients.map((c) => c.role as string));
  if (roles.has('second-org') && OTHER_ORG_FIXTURES.every((f) => config.fixtures[f])) return 'second-org';
  return roles.has('extra') ? 'extra' : 'main';
}

export function throttleRole(ctx: CheckContext): string {
  return throttleRoleOf(ctx.config);
}

/** The fixture of `key` (a record of main's organization) for `role`'s organization. */
export function fixtureKeyFor(role: string, key: string): string {
  if (role !== 'second-org') return key;
  return (
    {
      medicationRequest: 'otherOrgMedicationRequest',
      encounter: 'otherOrgEncounter',
      patient: 'otherOrgPatient',
      documentReference: 'otherOrgDocumentReference',
    }[key] ?? key
  );
}

/** A cheap authenticated request for `role`: a read of a fixture MedicationRequest of the key's organization. */
export function probeFor(ctx: CheckContext, role: string): Probe {
  const fixture = fixtureKeyFor(role, 'medicationRequest');
  return {
    role,
    url: ctx.path(pathOf(ctx, 'R4', 'MedicationRequest', 'read'), { id: ctx.fixture(fixture) }),
    limit: ctx.client(role).rateLimitPerMinute,
    windowMs: ctx.limits.windowSec * 1000,
  };
}

/**
 * Sends one probe without pacing or retries (a 429 is returned, not waited out). Like every
 * request, it waits out an earlier 429's Retry-After on its key unless `earlyRetry` is set.
 * The token is fetched first, so the send time is the request's own.
 */
export async function hit(ctx: CheckContext, probe: Probe, opts: { earlyRetry?: boolean } = {}): Promise<Hit> {
  const scopes = probe.scopes ?? PROBE_SCOPES;
  await ctx.token(scopes, probe.role);
  const sentAt = Date.now();
  const res = await ctx.fhir({ scopes, role: probe.role, url: probe.url, pace: false, retry: 'none', expect429: true, ...opts });
  return { sentAt, receivedAt: Date.now(), res, headers: rateHeaders(res) };
}

export interface Burst {
  hits: Hit[];
  /** The first refusal (a 429, or any other non-2xx answer), when one came. */
  refused?: Hit;
  /** First send and last answer, client clock ms. */
  startedAt: number;
  endedAt: number;
  /** Most requests in flight at once. */
  concurrency: number;
  /** Requests sent with the rotation probe's token (burstUntil429's `rotate`). */
  rotated?: number;
}

/**
 * Sends probes until one is refused (429 or any other non-2xx answer), or `max`
 * have been sent. Up to `concurrency` are kept in flight while the key has room;
 * near the limit (by its X-RateLimit-Remaining) they go one at a time, so the
 * first 429 is the only refused request of the burst (`after`: the key's last answer
 * before the burst, whose Remaining it starts from). Every send and answer is timed.
 * `rotate`: every other request goes with that probe's token (another token of the same key).
 */
export async function burstUntil429(
  ctx: CheckContext,
  probe: Probe,
  max: number,
  concurrency = BURST_CONCURRENCY,
  after?: Hit,
  rotate?: Probe,
): Promise<Burst> {
  const hits: Hit[] = [];
  const startedAt = Date.now();
  // What the key had left by its last answer (a burst that follows earlier requests).
  let remaining = after?.headers.remaining ?? probe.limit;
  let widest = 0;
  let rotated = 0;
  while (hits.length < max) {
    const width = Math.max(1, Math.min(concurrency, remaining - 1, max - hits.length));
    widest = Math.max(widest, width);
    const probes = Array.from({ length: width }, (_, i) => (rotate && (hits.length + i) % 2 === 1 ? rotate : probe));
    rotated += probes.filter((p) => p !== probe).length;
    const batch = await Promise.all(probes.map((p) => hit(ctx, p)));
    hits.push(...batch);
    const refused = batch.find((h) => h.res.status >= 400);
    if (refused) return { hits, refused, startedAt, endedAt: Date.now(), concurrency: widest, ...(rotate ? { rotated } : {}) };
    const reported = batch.map((h) => h.headers.remaining).filter((r): r is number => r !== undefined);
    remaining = reported.length ? Math.min(...reported) : Math.max(1, remaining - width);
  }
  return { hits, startedAt, endedAt: Date.now(), concurrency: widest, ...(rotate ? { rotated } : {}) };
}

/** The most requests a burst sends: the key's ceiling and a tenth more (at least 10). */
export function burstBound(probe: Probe): number {
  return probe.limit + Math.max(10, Math.ceil(probe.limit / 10));
}

/**
 * The roles whose requests may count against the same organization ceiling as
 * `role`'s: every role but `second-org` (another organization) shares main's.
 */
export function organizationSiblings(ctx: CheckContext, role: string): string[] {
  const roles = [...new Set(ctx.config.clients.map((c) => c.role as string))];
  return role === 'second-org' ? [] : roles.filter((r) => r !== role && r !== 'second-org');
}

/** The run's completed requests of `role` (every check's), from the run log; undefined when the run keeps none. */
export function keyTraffic(ctx: CheckContext, role: string): Timed[] | undefined {
  const log = (ctx.run as { keyRequests?: (r: string) => readonly Timed[] } | undefined)?.keyRequests;
  return log ? log(role).map((r) => ({ ...r })) : undefined;
}

/** The key's own earlier traffic (sent before `from`) and its organization's other keys' traffic, from the run log. */
export function trafficBefore(ctx: CheckContext, role: string, from: number): { earlier?: Timed[]; orgOthers?: Timed[] } {
  const own = keyTraffic(ctx, role);
  if (!own) return {};
  return {
    earlier: own.filter((r) => r.sentAt < from),
    orgOthers: organizationSiblings(ctx, role).flatMap((r) => keyTraffic(ctx, r) ?? []),
  };
}

/**
 * When the run's requests on the key and its organization's other keys, and anything the key's window
 * held from before `since` (ms), have all left the window: at most a window and a second from now.
 */
export function quietAt(ctx: CheckContext, probe: Probe, since = 0): number {
  const roles = [probe.role, ...organizationSiblings(ctx, probe.role)];
  const last = Math.max(since, ...roles.flatMap((r) => (keyTraffic(ctx, r) ?? []).map((x) => x.receivedAt)));
  return Math.min(last + probe.windowMs + windowSlackMs(probe.windowMs) + 100, Date.now() + probe.windowMs + 1100);
}

/**
 * Starts from a quiet key: waits (at most a window and a second) until the run has
 * sent nothing on the key or its organization's other keys for one window, so every
 * request in the key's window is one the episode counts. When the key then still
 * has requests in its window by its X-RateLimit-Remaining, waits one window more.
 */
export async function quietKey(ctx: CheckContext, probe: Probe): Promise<Hit> {
  await wait(ctx, quietAt(ctx, probe) - Date.now(), "rate-limit: letting the key's and its organization's earlier requests leave the window");
  const first = await hit(ctx, probe);
  const { remaining, limit } = first.headers;
  if (first.res.status !== 429 && (remaining === undefined || limit === undefined || remaining >= limit - 1)) return first;
  await wait(ctx, probe.windowMs + 1000, 'rate-limit: letting earlier requests of the key leave the window');
  return hit(ctx, probe);
}

/** Keeps `role`'s probe token valid for `ms` more, within the token lifetime (renewed now, outside any timed request). */
export async function tokenFor(ctx: CheckContext, role: string, ms: number): Promise<void> {
  await ctx.tokens.token(role, PROBE_SCOPES, { validForMs: Math.min(ms, 0.8 * ctx.limits.tokenLifetimeSec * 1000) });
}

export async function wait(ctx: CheckContext, ms: number, reason: string): Promise<void> {
  if (ms <= 0) return;
  ctx.waiting(reason, ms);
  await ctx.sleep(ms);
}

/**
 * When a client may send again after a 429: Retry-After from its receipt, else
 * X-RateLimit-Reset; at most three windows and 30 s ahead (each retry sooner than
 * Retry-After may extend the wait: the excess episode sends several on purpose).
 */
export function waitUntil(h: Hit, probe: Probe): number {
  const bound = h.receivedAt + 3 * probe.windowMs + 30_000;
  if (h.headers.retryAfter !== undefined) return Math.min(bound, h.receivedAt + h.headers.retryAfter * 1000 + 100);
  if (h.headers.reset !== undefined) return Math.min(bound, h.headers.reset * 1000 + 100);
  return bound;
}

/** Leaves the key usable: while refused, waits as the 429 says and probes again; at most three attempts. */
export async function recover(ctx: CheckContext, probe: Probe, last: Hit): Promise<Hit> {
  let h = last;
  for (let attempt = 0; attempt < 3 && h.res.status === 429; attempt++) {
    await wait(ctx, waitUntil(h, probe) - Date.now(), 'rate-limit: waiting for the key to be served again');
    h = await hit(ctx, probe);
  }
  return h;
}
