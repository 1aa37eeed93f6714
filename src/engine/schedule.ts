/**
 * Pacing figures of a run: how long a run with this much traffic must take at
 * the limits in force (its lower bound), and how close the run came to it.
 *
 * Lower bound = max(
 *   token lifetime (the expiry probe's token must be seen expired),
 *   the time paced requests take at (per-key rate x usable keys) + the waits the limit checks
 *     require that cannot overlap the paced requests,
 *   the waits of the checks whose work ran beside the paced requests (on another organization's key),
 *   the time token requests take at the issuance limit,
 * ).
 * - The time N requests take at R per window: a window's worth may leave at once, and each
 *   further R only once a window has passed, so the last leaves after floor((N - 1) / R)
 *   windows (`sendingWindows`). The issue's "requests / allowed rate" is about one window
 *   more: a run that uses its first window fully finishes below it.
 * - Paced requests: authenticated requests sent through client-side pacing (the
 *   deliberately unpaced probes of the exhaustion checks are their own cost, counted
 *   as their waits instead).
 * - Usable keys: one, unless the config declares the organization's ceiling (the spec
 *   does not show it): then the keys paced requests spread over, at the sum of their
 *   ceilings capped by the organization's (src/engine/runtime.ts, spreadKey).
 * - Required waits: each check declares the windows it must wait out at least
 *   (`CheckDefinition.waitWindows`: the sliding-window scenario 1.5, the excess and
 *   issuance episodes 1 each); the episodes run side by side on independent limits, so
 *   the run's required wait is the largest declared by a check that ran. The waits of a check
 *   whose work started early (CheckDefinition.startEarly: the key episodes on another
 *   organization's key) overlap the paced requests: they are a term of their own, not added to
 *   the pacing (the issue's formula adds every wait; `boundAllSerialS` keeps that figure).
 */

/** Cumulative traffic of a run, as the worker's runtime counts it. */
export interface RunStats {
  /** HTTP requests sent (every attempt). */
  requests: number;
  /** 429s to requests not marked as provoking one. */
  unplanned429: number;
  /** Authenticated requests that went through client-side pacing, per client role. */
  pacedByClient: Record<string, number>;
  /** Requests to the token endpoint. */
  tokenRequests: number;
  /** Requests re-sent with a re-issued token after an expired-token answer to a token the suite held valid. */
  tokenReissues?: number;
  /**
   * The limits in force. `pacedPerWindow`/`usableKeys`: with a declared organization ceiling,
   * the rate paced requests may go at over the keys they spread over.
   */
  limits: {
    perKeyPerWindow: number;
    windowSec: number;
    tokenLifetimeSec: number;
    tokenIssuancePerWindow: number;
    pacedPerWindow?: number;
    usableKeys?: number;
  };
}

export interface PacingFigures {
  wallS: number;
  boundS: number;
  ratio: number;
  requests: number;
  pacedRequests: number;
  unplanned429: number;
  usableKeys: number;
  requiredWaitsS: number;
  /** Required waits of checks whose work ran beside the paced requests (not added to the pacing term). */
  overlappedWaitsS: number;
  /** The bound with every required wait added to the pacing term (as if no wait overlapped a paced request). */
  boundAllSerialS: number;
  /** Which term of the bound decided it. */
  boundBy: 'token lifetime' | 'request pacing' | 'token issuance' | 'overlapped waits';
}

export const USABLE_KEYS = 1;

/** Seconds of required waits: the largest `waitWindows` of the checks that ran, in windows. */
export function requiredWaitsSec(windowSec: number, waitWindows: readonly number[]): number {
  return Math.max(0, ...waitWindows) * windowSec;
}

/** Windows before the last of `n` requests can leave at `perWindow` a window (a sliding or a fixed window). */
export function sendingWindows(n: number, perWindow: number): number {
  return n > 0 ? Math.floor((n - 1) / Math.max(1, perWindow)) : 0;
}

export function pacingFigures(stats: RunStats, wallMs: number, waitWindows: readonly number[], overlappedWaitWindows: readonly number[] = []): PacingFigures {
  const { perKeyPerWindow, windowSec, tokenLifetimeSec, tokenIssuancePerWindow } = stats.limits;
  const paced = Object.values(stats.pacedByClient).reduce((a, b) => a + b, 0);
  const waits = requiredWaitsSec(windowSec, waitWindows);
  const overlapped = overlappedWaitWindows.length ? requiredWaitsSec(windowSec, overlappedWaitWindows) : 0;
  const pacing = sendingWindows(paced, stats.limits.pacedPerWindow ?? perKeyPerWindow * USABLE_KEYS) * windowSec;
  const terms: Array<[PacingFigures['boundBy'], number]> = [
    ['token lifetime', tokenLifetimeSec],
    ['request pacing', pacing + waits],
    ['overlapped waits', overlapped],
    ['token issuance', sendingWindows(stats.tokenRequests, tokenIssuancePerWindow) * windowSec],
  ];
  const [boundBy, boundS] = terms.reduce((a, b) => (b[1] > a[1] ? b : a));
  const allSerial = Math.max(
    ...terms.filter(([t]) => t !== 'overlapped waits' && t !== 'request pacing').map(([, v]) => v),
    pacing + requiredWaitsSec(windowSec, [...waitWindows, ...overlappedWaitWindows]),
  );
  const wallS = wallMs / 1000;
  return {
    wallS: round(wallS, 1),
    boundS: round(boundS, 1),
    ratio: round(wallS / boundS, 3),
    requests: stats.requests,
    pacedRequests: paced,
    unplanned429: stats.unplanned429,
    usableKeys: stats.limits.usableKeys ?? USABLE_KEYS,
    requiredWaitsS: waits,
    overlappedWaitsS: overlapped,
    boundAllSerialS: round(allSerial, 1),
    boundBy,
  };
}

/** The stderr line printed at the end of a certification run. */
export function renderPacing(f: PacingFigures): string {
  return (
    `pacing: ${f.wallS} s for ${f.requests} requests (${f.pacedRequests} paced, ${f.unplanned429} unplanned 429); ` +
    `lower bound ${f.boundS} s (${f.boundBy}; ${f.usableKeys} usable key, ${f.requiredWaitsS} s of required waits` +
    `${f.overlappedWaitsS ? `, ${f.overlappedWaitsS} s more beside the paced requests; ${f.boundAllSerialS} s with every wait added` : ''}); ratio ${f.ratio}`
  );
}

function round(v: number, digits: number): number {
  const k = 10 ** digits;
  return Math.round(v * k) / k;
}

/** Key in the run's shared state of the ids of the checks this run executes (a Set; set by the executor). */
export const PLANNED_KEY = 'schedule.planned';

/** Whether this run executes check `id` (true when the run did not say: a check run on its own). */
export function planned(shared: Map<string, unknown>, id: string): boolean {
  const ids = shared.get(PLANNED_KEY) as ReadonlySet<string> | undefined;
  return ids === undefined || ids.has(id);
}

/** Key in the run's shared state of the function that detaches work from the current check. */
export const DETACH_KEY = 'schedule.detach';

type Detach = <T>(fn: () => Promise<T>) => Promise<T>;

/**
 * Starts `fn` once per run under `key` and returns its promise to every caller. It runs
 * detached from the check that happened to start it (its exchanges belong to no check;
 * the checks that use its results attach them), so several episodes can run side by
 * side and their waits overlap. A failure reaches each check that awaits it.
 */
export function episode<T>(shared: Map<string, unknown>, key: string, fn: () => Promise<T>): Promise<T> {
  let p = shared.get(key) as Promise<T> | undefined;
  if (!p) {
    const detach = shared.get(DETACH_KEY) as Detach | undefined;
    p = detach ? detach(fn) : fn();
    p.catch(() => undefined); // awaited later by the checks; not an unhandled rejection meanwhile
    shared.set(key, p);
  }
  return p;
}
