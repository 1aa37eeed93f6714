/**
 * The exhaustion episodes of the suite, started together once per run so that
 * their waits overlap (each runs detached from the check that starts it; the
 * checks attach the exchanges their verdicts rest on):
 *
 * - Excess, on the throttle key (`extra` when configured): two requests, a gap
 *   of over a second, a burst until 429, an early retry, a request of `main`
 *   (another key of the organization), every R4 MedicationRequest and Encounter
 *   operation while the key is refused, and a request once the last 429's
 *   Retry-After has elapsed. In a sliding window that counts refused requests,
 *   the first 429 displaces the oldest request and the early retry the second:
 *   the gap makes the reset move by whole seconds, so X-RateLimit-Reset can show it.
 * - Sliding, on the `second-org` key when configured (another organization, so
 *   it never meets the first one's shared ceiling; else on the throttle key,
 *   after the excess episode): half the limit, half a window later the rest
 *   until 429, then a request once the first half has left the window.
 * - The token issuance episode of the issuance-limit suite, once every token the
 *   two episodes use has been issued (issuance is refused for a window after it).
 *
 * Each episode ends with its key served again.
 */
import type { CheckContext } from '../../src/engine/context.js';
import { episode } from '../../src/engine/schedule.js';
import { excludedBy } from '../../src/engine/check.js';
import { checks as issuanceChecks, issuanceEpisode, issuanceRecovery } from '../issuance-limit/checks.js';
import { operationTokens, sendThrottled, type ThrottledAnswer } from './operations.js';
import { PROBE_SCOPES, SEND_MARGIN_MS, burstBound, burstUntil429, hit, probeFor, quietKey, recover, throttleRole, wait, waitUntil, type Burst, type Hit, type Probe } from './support.js';

const EXCESS_KEY = 'rate-limit.excess-scenario';

export interface ExcessScenario {
  probe: Probe;
  /** The two requests before the gap. */
  spaced: Hit[];
  burst: Burst;
  /** A retry sent before the first 429's Retry-After elapsed. */
  earlyRetry?: Hit;
  /** A request of `main` (another key of the organization) while the throttled key is refused. */
  otherKey?: Hit;
  /** Every R4 MedicationRequest and Encounter operation, sent while the key is refused. */
  operations?: ThrottledAnswer[];
  /** The request sent once the early retry's Retry-After had elapsed. */
  afterWait?: Hit;
  /** How long the scenario waited after the early retry, ms. */
  waitedMs?: number;
}

/** The gap before the burst: over one second, so a reset moved across it changes X-RateLimit-Reset. */
export const GAP_MS = 1200;

const TOKENS_KEY = 'rate-limit.tokens';
const SLIDING_KEY = 'rate-limit.sliding-scenario';

/** The excess scenario, run once per run (with the other episodes); later checks reuse its result. */
export function excessScenario(ctx: CheckContext): Promise<ExcessScenario> {
  startEpisodes(ctx);
  return ctx.shared.get(EXCESS_KEY) as Promise<ExcessScenario>;
}

/** The sliding-window scenario, run once per run (with the other episodes). */
export function slidingScenario(ctx: CheckContext): Promise<SlidingScenario> {
  startEpisodes(ctx);
  return ctx.shared.get(SLIDING_KEY) as Promise<SlidingScenario>;
}

/** The key of the sliding scenario: another organization's when configured, so it can run beside the excess one. */
export function slidingRole(ctx: CheckContext): string {
  return ctx.config.clients.some((c) => c.role === 'second-org') && ctx.hasFixture('otherOrgMedicationRequest') ? 'second-org' : throttleRole(ctx);
}

function startEpisodes(ctx: CheckContext): void {
  if (ctx.shared.has(EXCESS_KEY)) return;
  const excessProbe = probeFor(ctx, throttleRole(ctx));
  const slidingProbe = probeFor(ctx, slidingRole(ctx));
  const ready = episode(ctx.shared, TOKENS_KEY, () => episodeTokens(ctx, [excessProbe, slidingProbe]));
  const excess = episode(ctx.shared, EXCESS_KEY, async () => {
    await ready;
    return runExcess(ctx, excessProbe);
  });
  const sameKey = slidingProbe.role === excessProbe.role;
  episode(ctx.shared, SLIDING_KEY, async () => {
    await (sameKey ? excess : ready);
    return runSliding(ctx, slidingProbe);
  });
  if (issuanceRunsToo(ctx)) {
    void ready.then(() => {
      issuanceEpisode(ctx);
      issuanceRecovery(ctx);
    }, () => undefined);
  }
}

/**
 * Whether the issuance episode starts beside these: when the profile runs the issuance
 * recovery check. (A run that selected neither issuance check, with --only or
 * --requirements, then spends one burst it does not judge; never a 429 it did not plan.)
 */
function issuanceRunsToo(ctx: CheckContext): boolean {
  const recovers = issuanceChecks.find((c) => c.id === 'issuance-limit.window-recovers');
  return recovers !== undefined && !excludedBy(ctx.profile, recovers);
}

/**
 * Every token the episodes use, issued before any key or the issuance limit is
 * exhausted and valid for the episodes' length (no token request falls inside them).
 */
async function episodeTokens(ctx: CheckContext, probes: Probe[]): Promise<void> {
  const windowMs = ctx.limits.windowSec * 1000;
  const validForMs = Math.min(3 * windowMs + 30_000, 0.8 * ctx.limits.tokenLifetimeSec * 1000);
  const roles = new Set([...probes.map((p) => p.role), 'main']);
  for (const role of roles) await ctx.tokens.token(role, PROBE_SCOPES, { validForMs });
  await operationTokens(ctx, probes[0]!.role, validForMs);
}

async function runExcess(ctx: CheckContext, probe: Probe): Promise<ExcessScenario> {
  const first = await quietKey(ctx, probe);
  const second = await hit(ctx, probe);
  await ctx.sleep(GAP_MS);
  const burst = await burstUntil429(ctx, probe, burstBound(probe) - 2);
  const scenario: ExcessScenario = { probe, spaced: [first, second], burst };
  const refused = burst.refused;
  if (!refused) return scenario;

  const retryAfterMs = (refused.headers.retryAfter ?? 2) * 1000;
  await ctx.sleep(Math.min(1500, retryAfterMs / 2));
  // The one request sent before Retry-After on purpose (rate-limit.early-retry-refused-and-extends-reset).
  scenario.earlyRetry = await hit(ctx, probe, { earlyRetry: true });
  if (probe.role !== 'main') scenario.otherKey = await hit(ctx, probeFor(ctx, 'main'));
  scenario.operations = await sendThrottled(ctx, probe.role);

  const refusals = [refused, scenario.earlyRetry, ...scenario.operations.flatMap((a) => (a.hit ? [a.hit] : []))].filter((h) => h.res.status === 429);
  const last = refusals.reduce((a, b) => (waitUntil(b, probe) > waitUntil(a, probe) ? b : a));
  const until = waitUntil(last, probe);
  const started = Date.now();
  await wait(ctx, until - started, 'rate-limit: waiting the Retry-After of the last 429');
  scenario.waitedMs = Date.now() - started;
  scenario.afterWait = await hit(ctx, probe);
  await recover(ctx, probe, scenario.afterWait);
  return scenario;
}

export interface SlidingScenario {
  probe: Probe;
  first: Hit[];
  second: Burst;
  /** The request sent once the first half had left the window. */
  after?: Hit;
  /** Accepted requests of the second half certainly still inside the window when `after` arrived. */
  inWindow?: number;
}

async function runSliding(ctx: CheckContext, probe: Probe): Promise<SlidingScenario> {
  const margin = SEND_MARGIN_MS;
  const quiet = await quietKey(ctx, probe);
  const half = Math.floor(probe.limit / 2);
  const rest = await burstUntil429(ctx, probe, half - 1);
  const first = [quiet, ...rest.hits];
  const scenario: SlidingScenario = { probe, first, second: { hits: [] } };
  if (rest.refused) return scenario;

  await wait(ctx, quiet.sentAt + probe.windowMs / 2 - Date.now(), 'rate-limit: half a window between the two halves');
  scenario.second = await burstUntil429(ctx, probe, burstBound(probe) - first.length);
  if (!scenario.second.refused) return scenario;

  // The first half has left the window, and the 429's Retry-After (whole seconds) has elapsed.
  const firstDone = Math.max(...first.map((h) => h.receivedAt));
  const until = Math.max(firstDone + probe.windowMs + margin, waitUntil(scenario.second.refused, probe));
  await wait(ctx, until - Date.now(), 'rate-limit: waiting for the first half to leave the window');
  const after = await hit(ctx, probe);
  scenario.after = after;
  scenario.inWindow = scenario.second.hits.filter((h) => h.res.status !== 429 && h.sentAt > after.receivedAt - probe.windowMs + margin).length;
  await recover(ctx, probe, after);
  return scenario;
}
