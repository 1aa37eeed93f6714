/**
 * Faults caught by the rate-limit suite. Header faults rewrite responses; the
 * per-key window faults replace the key's sliding window (`keyWindowLog`,
 * used by the HTTP core) with one that breaks one rule.
 */
import { SlidingWindowLog, type RateDecision } from '../rate-limit.js';
import type { FaultDef, FaultResponse } from './types.js';

function header(res: FaultResponse, name: string): string | undefined {
  const key = Object.keys(res.headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : res.headers[key];
}

/** Rewrites (or with `undefined`, removes) headers by lower-case name. */
function withHeaders(res: FaultResponse, changes: Record<string, string | undefined>): FaultResponse {
  const headers = Object.fromEntries(Object.entries(res.headers).filter(([k]) => !(k.toLowerCase() in changes)));
  for (const [k, v] of Object.entries(changes)) if (v !== undefined) headers[k] = v;
  return { ...res, headers };
}

const isThrottled = (res: FaultResponse) => res.status === 429;

/** Faults that swap the per-key sliding window for a faulty one. */
const WINDOW_FAULTS = {
  'rate-limit-not-enforced': 'not-enforced',
  'early-retry-not-extended': 'no-extend',
  'rate-limit-fixed-window': 'fixed',
  'rate-limit-window-never-slides': 'stuck',
} as const;
type WindowFault = (typeof WINDOW_FAULTS)[keyof typeof WINDOW_FAULTS];

/**
 * A per-key window with one planted violation:
 * - `not-enforced`: counts and reports, never refuses;
 * - `no-extend`: refused requests are not recorded, so an early retry leaves the reset where it was;
 * - `fixed`: a fixed window from the first request, all capacity returns at once when it ends;
 * - `stuck`: requests never leave the window.
 */
class FaultyKeyWindow extends SlidingWindowLog {
  private readonly recent = new Map<string, number[]>();
  private readonly fixedWindows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly spanMs: number,
    private readonly fault: WindowFault,
  ) {
    super(spanMs);
  }

  override hit(key: string, limit: number, now: number): RateDecision {
    if (this.fault === 'fixed') return this.fixedHit(key, limit, now);
    let log = this.recent.get(key);
    if (!log) this.recent.set(key, (log = []));
    if (this.fault !== 'stuck') while (log.length > 0 && log[0]! + this.spanMs <= now) log.shift();
    const allowed = this.fault === 'not-enforced' || log.length < limit;
    if (allowed || this.fault !== 'no-extend') {
      log.push(now);
      if (log.length > limit) log.shift();
    }
    return { allowed, limit, remaining: Math.max(0, limit - log.length), resetMs: log[0]! + this.spanMs };
  }

  private fixedHit(key: string, limit: number, now: number): RateDecision {
    let w = this.fixedWindows.get(key);
    if (!w || now >= w.start + this.spanMs) this.fixedWindows.set(key, (w = { start: now, count: 0 }));
    const allowed = w.count < limit;
    if (allowed) w.count++;
    return { allowed, limit, remaining: limit - w.count, resetMs: w.start + this.spanMs };
  }
}

/** The per-key window of the HTTP core: faulty when one of the window faults is planted. */
export function keyWindowLog(faults: ReadonlySet<string>, windowMs: number): SlidingWindowLog {
  const name = (Object.keys(WINDOW_FAULTS) as Array<keyof typeof WINDOW_FAULTS>).find((f) => faults.has(f));
  return name ? new FaultyKeyWindow(windowMs, WINDOW_FAULTS[name]) : new SlidingWindowLog(windowMs);
}

export const faults: FaultDef[] = [
  {
    name: 'rate-limit-headers-missing',
    area: 'rate-limit',
    violates: ['rate-limit.headers-present'],
    symptom: 'Responses carry no X-RateLimit-Limit, X-RateLimit-Remaining or X-RateLimit-Reset.',
    transformResponse: (res) => withHeaders(res, { 'x-ratelimit-limit': undefined, 'x-ratelimit-remaining': undefined, 'x-ratelimit-reset': undefined }),
  },
  {
    name: 'rate-limit-limit-not-key-ceiling',
    area: 'rate-limit',
    violates: ['rate-limit.per-key-default-60', 'rate-limit.limit-header'],
    symptom: 'X-RateLimit-Limit reports twice the key\'s ceiling.',
    transformResponse: (res) => {
      const limit = Number(header(res, 'x-ratelimit-limit'));
      return Number.isInteger(limit) && limit > 0 ? withHeaders(res, { 'x-ratelimit-limit': String(limit * 2) }) : res;
    },
  },
  {
    name: 'rate-limit-remaining-not-decremented',
    area: 'rate-limit',
    violates: ['rate-limit.headers-arithmetic'],
    symptom: 'X-RateLimit-Remaining always equals X-RateLimit-Limit.',
    transformResponse: (res) => {
      const limit = header(res, 'x-ratelimit-limit');
      return limit === undefined ? res : withHeaders(res, { 'x-ratelimit-remaining': limit });
    },
  },
  {
    name: 'rate-limit-reset-in-milliseconds',
    area: 'rate-limit',
    violates: ['rate-limit.reset-header'],
    symptom: 'X-RateLimit-Reset is a unix timestamp in milliseconds.',
    transformResponse: (res) => {
      const reset = header(res, 'x-ratelimit-reset');
      return reset === undefined ? res : withHeaders(res, { 'x-ratelimit-reset': `${reset}000` });
    },
  },
  {
    name: 'retry-after-missing',
    area: 'rate-limit',
    violates: ['rate-limit.retry-after', 'catalog.hpb-00105'],
    symptom: '429 responses carry no Retry-After header.',
    transformResponse: (res) => (isThrottled(res) ? withHeaders(res, { 'retry-after': undefined }) : res),
  },
  {
    name: 'throttled-issue-code-wrong',
    area: 'rate-limit',
    violates: ['errors.throttled-code'],
    symptom: '429 HPB-00105 carries issue code processing instead of throttled.',
    transformResponse: (res) => {
      const body = res.body as { issue?: Array<Record<string, unknown>> } | undefined;
      if (!isThrottled(res) || !Array.isArray(body?.issue) || !body.issue[0]) return res;
      return { ...res, body: { ...body, issue: [{ ...body.issue[0], code: 'processing' }, ...body.issue.slice(1)] } };
    },
  },
  {
    name: 'rate-limit-not-enforced',
    area: 'rate-limit',
    violates: ['rate-limit.excess-429'],
    symptom: 'A key is never refused: requests beyond its ceiling are served (headers still count down to 0).',
  },
  {
    name: 'early-retry-not-extended',
    area: 'rate-limit',
    violates: ['rate-limit.early-retry-extends-reset'],
    symptom: 'A retry before Retry-After elapses is refused but leaves X-RateLimit-Reset where it was.',
  },
  {
    name: 'rate-limit-fixed-window',
    area: 'rate-limit',
    violates: ['rate-limit.sliding-window'],
    symptom: 'The per-key window is fixed (it starts at the first request): all capacity returns at once when it ends.',
  },
  {
    name: 'rate-limit-window-never-slides',
    area: 'rate-limit',
    violates: ['rate-limit.sliding-window'],
    symptom: 'Requests never leave a key\'s window: once throttled, the key stays throttled whatever Retry-After said.',
  },
];
