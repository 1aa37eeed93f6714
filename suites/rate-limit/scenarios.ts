/**
 * The two exhaustion scenarios of the suite. Each drives one key to its limit
 * and ends with the key served again.
 *
 * - Excess (shared by several checks, run once per run): two requests, a gap
 *   of over a second, a burst until 429, an early retry, and a request once
 *   the early retry's Retry-After has elapsed. In a sliding window that counts
 *   refused requests, the first 429 displaces the oldest request and the early
 *   retry the second: the gap makes the reset move by whole seconds, so
 *   X-RateLimit-Reset can show it.
 * - Sliding: half the limit, half a window later the rest until 429, then a
 *   request once the first half has left the window.
 */
import type { CheckContext } from '../../src/engine/context.js';
import { SEND_MARGIN_MS, burstBound, burstUntil429, hit, probeFor, quietKey, recover, throttleRole, wait, waitUntil, type Burst, type Hit, type Probe } from './support.js';

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
  /** The request sent once the early retry's Retry-After had elapsed. */
  afterWait?: Hit;
  /** How long the scenario waited after the early retry, ms. */
  waitedMs?: number;
}

/** The gap before the burst: over one second, so a reset moved across it changes X-RateLimit-Reset. */
export const GAP_MS = 1200;

/** The excess scenario, run once per run; later checks reuse its result. */
export function excessScenario(ctx: CheckContext): Promise<ExcessScenario> {
  let p = ctx.shared.get(EXCESS_KEY) as Promise<ExcessScenario> | undefined;
  if (!p) {
    p = runExcess(ctx);
    ctx.shared.set(EXCESS_KEY, p);
  }
  return p;
}

async function runExcess(ctx: CheckContext): Promise<ExcessScenario> {
  const probe = probeFor(ctx, throttleRole(ctx));
  const first = await quietKey(ctx, probe);
  const second = await hit(ctx, probe);
  await ctx.sleep(GAP_MS);
  const burst = await burstUntil429(ctx, probe, burstBound(probe) - 2);
  const scenario: ExcessScenario = { probe, spaced: [first, second], burst };
  const refused = burst.refused;
  if (!refused) return scenario;

  const retryAfterMs = (refused.headers.retryAfter ?? 2) * 1000;
  await ctx.sleep(Math.min(1500, retryAfterMs / 2));
  scenario.earlyRetry = await hit(ctx, probe);
  if (probe.role !== 'main') scenario.otherKey = await hit(ctx, probeFor(ctx, 'main'));

  const last = scenario.earlyRetry.res.status === 429 ? scenario.earlyRetry : refused;
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

export async function slidingScenario(ctx: CheckContext): Promise<SlidingScenario> {
  const margin = SEND_MARGIN_MS;
  const probe = probeFor(ctx, throttleRole(ctx));
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
