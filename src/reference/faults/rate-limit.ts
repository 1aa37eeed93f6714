/**
 * Faults caught by the rate-limit suite. Header faults rewrite responses; the
 * per-key window faults replace the key's sliding window (`keyWindowLog`,
 * used by the HTTP core) with one that breaks one rule.
 */
import { SlidingWindowLog, type RateDecision, type SlidingWindowOptions } from '../rate-limit.js';
import { OPERATIONS, type OperationDef } from '../../service/api.js';
import { errorResponse, kebab, outcomeCode, recoded, SHORT } from './edit.js';
import type { FaultDef, FaultRequest, FaultResponse } from './types.js';
import { CATALOG_SYSTEM } from '../../service/catalog.js';

export function header(res: FaultResponse, name: string): string | undefined {
  const key = Object.keys(res.headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : res.headers[key];
}

/** Rewrites (or with `undefined`, removes) headers by lower-case name. */
export function withHeaders(res: FaultResponse, changes: Record<string, string | undefined>): FaultResponse {
  const headers = Object.fromEntries(Object.entries(res.headers).filter(([k]) => !(k.toLowerCase() in changes)));
  for (const [k, v] of Object.entries(changes)) if (v !== undefined) headers[k] = v;
  return { ...res, headers };
}

/** The response without X-RateLimit-Limit, -Remaining and -Reset. */
export function withoutRateLimitHeaders(res: FaultResponse): FaultResponse {
  return withHeaders(res, { 'x-ratelimit-limit': undefined, 'x-ratelimit-remaining': undefined, 'x-ratelimit-reset': undefined });
}

/** The response with X-RateLimit-Limit twice what it says (as it is when it says no positive integer). */
export function doubledLimit(res: FaultResponse): FaultResponse {
  const limit = Number(header(res, 'x-ratelimit-limit'));
  return Number.isInteger(limit) && limit > 0 ? withHeaders(res, { 'x-ratelimit-limit': String(limit * 2) }) : res;
}

const isThrottled = (res: FaultResponse) => res.status === 429;
/** A 429 of an authenticated FHIR call (not of the token endpoint). */
const isKeyThrottled = (res: FaultResponse, req: FaultRequest) => res.status === 429 && req.path !== '/auth/token';

/** Faults that swap the per-key sliding window for a faulty one. */
const WINDOW_FAULTS = {
  'rate-limit-not-enforced': 'not-enforced',
  'early-retry-not-extended': 'no-extend',
  'rate-limit-fixed-window': 'fixed',
  'rate-limit-window-never-slides': 'stuck',
  'rate-limit-throttles-early': 'early',
  'rate-limit-allows-150-percent': 'loose',
  'early-retry-served': 'forgives-early',
  'early-retry-500': 'errors-early',
} as const;
type WindowFault = (typeof WINDOW_FAULTS)[keyof typeof WINDOW_FAULTS];

/**
 * A per-key window with one planted violation:
 * - `not-enforced`: counts and reports, never refuses;
 * - `no-extend`: refused requests are not recorded, so an early retry leaves the reset where it was;
 * - `fixed`: a fixed window from the first request, all capacity returns at once when it ends;
 * - `stuck`: requests never leave the window;
 * - `early`: refuses at three quarters of the ceiling (headers still count against the full ceiling);
 * - `loose`: refuses only at one and a half times the ceiling (headers count down to 0 at the ceiling);
 * - `forgives-early`: the first request after a 429 that comes before its Retry-After is served
 *   (the reference's window otherwise: later early requests are refused and extend the reset);
 * - `errors-early`: a request a throttled key sends before its Retry-After elapses fails with 500
 *   SVC-00001 (the limiter throws) instead of 429; the window is the reference's otherwise.
 */
class FaultyKeyWindow extends SlidingWindowLog {
  private readonly recent = new Map<string, number[]>();
  private readonly fixedWindows = new Map<string, { start: number; count: number }>();
  /** forgives-early: when each key's last 429 said it could retry, and whether an early request was already served. */
  private readonly retryAt = new Map<string, { at: number; forgiven: boolean }>();

  constructor(
    private readonly spanMs: number,
    private readonly fault: WindowFault,
  ) {
    super(spanMs);
  }

  override hit(key: string, limit: number, now: number): RateDecision {
    if (this.fault === 'fixed') return this.fixedHit(key, limit, now);
    if (this.fault === 'forgives-early') {
      const r = this.retryAt.get(key);
      if (r && now < r.at && !r.forgiven) {
        r.forgiven = true;
        return { allowed: true, limit, remaining: 0, resetMs: r.at };
      }
      const d = super.hit(key, limit, now);
      if (d.allowed) this.retryAt.delete(key);
      else if (!r || now >= r.at) this.retryAt.set(key, { at: d.resetMs, forgiven: false });
      return d;
    }
    if (this.fault === 'errors-early') {
      const at = this.retryAt.get(key)?.at;
      if (at !== undefined && now < at) throw new Error('planted fault early-retry-500: the limiter fails on a request before Retry-After');
      const d = super.hit(key, limit, now);
      if (d.allowed) this.retryAt.delete(key);
      else this.retryAt.set(key, { at: d.retryAtMs ?? d.resetMs, forgiven: false });
      return d;
    }
    if (this.fault === 'early' || this.fault === 'loose') {
      // The reference's window at another ceiling; the headers keep describing the key's own.
      const ceiling = Math.max(1, Math.floor(limit * (this.fault === 'early' ? 0.75 : 1.5)));
      const d = super.hit(key, ceiling, now);
      return { ...d, limit, remaining: Math.max(0, limit - (ceiling - d.remaining)) };
    }
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
export function keyWindowLog(faults: ReadonlySet<string>, windowMs: number, options: SlidingWindowOptions = {}): SlidingWindowLog {
  const name = (Object.keys(WINDOW_FAULTS) as Array<keyof typeof WINDOW_FAULTS>).find((f) => faults.has(f));
  return name ? new FaultyKeyWindow(windowMs, WINDOW_FAULTS[name]) : new SlidingWindowLog(windowMs, options);
}

/**
 * What the per-key window counts by: the caller's key, or (fault `rate-limit-counted-per-token`)
 * each of its access tokens apart, so a key that rotates tokens multiplies its ceiling.
 */
export function keyWindowKey(faults: ReadonlySet<string>, clientId: string, authorization: string | undefined): string {
  return faults.has('rate-limit-counted-per-token') ? `${clientId} ${authorization ?? ''}` : clientId;
}

/** A 429 turned into 503 Service unavailable (SVC-00007), Retry-After kept. */
export function asServiceUnavailable(res: FaultResponse): FaultResponse {
  return {
    ...res,
    status: 503,
    body: {
      resourceType: 'OperationOutcome',
      issue: [
        {
          severity: 'error',
          code: 'transient',
          diagnostics: 'SVC-00007: Service unavailable',
          details: { coding: [{ system: CATALOG_SYSTEM, code: 'SVC-00007' }] },
        },
      ],
    },
  };
}

export const faults: FaultDef[] = [
  {
    name: 'rate-limit-limit-header-wrong-production',
    area: 'rate-limit',
    violates: ['rate-limit.limit-header', 'rate-limit.per-key-default-60'],
    symptom:
      "Responses to a production key's requests carry X-RateLimit-Limit of twice the key's ceiling (the key is still throttled at its ceiling); sandbox keys' responses carry their own ceiling.",
    checks: ['rate-limit.headers-on-authenticated-responses'],
  },
  {
    name: 'rate-limit-headers-missing',
    area: 'rate-limit',
    violates: ['rate-limit.headers-present'],
    symptom: 'Responses carry no X-RateLimit-Limit, X-RateLimit-Remaining or X-RateLimit-Reset.',
    checks: ['rate-limit.headers-on-authenticated-responses', 'invariants.rate-limit-headers-present'],
    transformResponse: withoutRateLimitHeaders,
  },
  {
    name: 'rate-limit-limit-not-key-ceiling',
    area: 'rate-limit',
    violates: ['rate-limit.per-key-default-60', 'rate-limit.limit-header'],
    symptom: "X-RateLimit-Limit reports twice the key's ceiling.",
    checks: ['rate-limit.headers-on-authenticated-responses'],
    transformResponse: doubledLimit,
  },
  {
    name: 'rate-limit-remaining-not-decremented',
    area: 'rate-limit',
    violates: ['rate-limit.headers-arithmetic'],
    symptom: 'X-RateLimit-Remaining always equals X-RateLimit-Limit.',
    checks: ['rate-limit.remaining-decrements'],
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
    checks: ['rate-limit.reset-unix-seconds', 'invariants.rate-limit-headers-arithmetic'],
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
    checks: ['rate-limit.excess-gives-429', 'invariants.retry-after-on-429'],
    transformResponse: (res) => (isThrottled(res) ? withHeaders(res, { 'retry-after': undefined }) : res),
  },
  {
    name: 'throttled-issue-code-wrong',
    area: 'rate-limit',
    violates: ['errors.throttled-code'],
    symptom: '429 HPB-00105 carries issue code processing instead of throttled.',
    checks: ['rate-limit.excess-gives-429', 'invariants.throttled-code'],
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
    checks: ['rate-limit.excess-gives-429'],
  },
  {
    name: 'early-retry-not-extended',
    area: 'rate-limit',
    violates: ['rate-limit.early-retry-extends-reset'],
    symptom: 'A retry before Retry-After elapses is refused but leaves X-RateLimit-Reset where it was.',
    checks: ['rate-limit.early-retry-refused-and-extends-reset'],
  },
  {
    name: 'early-retry-served',
    area: 'rate-limit',
    violates: ['rate-limit.early-retry-429'],
    symptom: 'The first request a throttled key sends before its Retry-After elapses is served instead of refused (later early ones are refused).',
    checks: ['rate-limit.early-retry-refused-and-extends-reset'],
  },
  {
    name: 'early-retry-500',
    area: 'rate-limit',
    violates: ['rate-limit.early-retry-429'],
    symptom: 'A request a throttled key sends before its Retry-After elapses fails with 500 SVC-00001 instead of 429 (the limiter throws).',
    checks: ['rate-limit.early-retry-refused-and-extends-reset'],
  },
  {
    name: 'rate-limit-fixed-window',
    area: 'rate-limit',
    violates: ['rate-limit.sliding-window'],
    symptom: 'The per-key window is fixed (it starts at the first request): all capacity returns at once when it ends.',
    checks: ['rate-limit.capacity-returns-as-requests-leave-window'],
  },
  {
    name: 'rate-limit-window-never-slides',
    area: 'rate-limit',
    violates: ['rate-limit.sliding-window'],
    symptom: "Requests never leave a key's window: once throttled, the key stays throttled whatever Retry-After said.",
    checks: ['rate-limit.served-after-retry-after', 'rate-limit.capacity-returns-as-requests-leave-window'],
  },
  {
    name: 'rate-limit-throttles-early',
    area: 'rate-limit',
    violates: ['rate-limit.per-key-default-60'],
    symptom: 'A key is refused at three quarters of its ceiling (45 of 60), while X-RateLimit-Limit still says 60.',
    checks: ['rate-limit.excess-gives-429', 'rate-limit.capacity-returns-as-requests-leave-window'],
  },
  {
    name: 'rate-limit-allows-150-percent',
    area: 'rate-limit',
    violates: ['rate-limit.excess-429'],
    symptom: 'A key is refused only at one and a half times its ceiling (90 of 60); the headers count down to 0 at 60.',
    checks: ['rate-limit.excess-gives-429'],
  },
  {
    name: 'rate-limit-remaining-decrements-by-two',
    area: 'rate-limit',
    violates: ['rate-limit.headers-arithmetic'],
    symptom: 'X-RateLimit-Remaining falls by two per request of a key.',
    checks: ['rate-limit.remaining-decrements'],
    transformResponse: (res, req) => {
      const limit = Number(header(res, 'x-ratelimit-limit'));
      const remaining = Number(header(res, 'x-ratelimit-remaining'));
      if (req.path === '/auth/token' || !Number.isInteger(limit) || !Number.isInteger(remaining)) return res;
      return withHeaders(res, { 'x-ratelimit-remaining': String(Math.max(0, 2 * remaining - limit)) });
    },
  },
  {
    name: 'rate-limit-remaining-stuck-below-limit',
    area: 'rate-limit',
    violates: ['rate-limit.headers-arithmetic'],
    symptom:
      'X-RateLimit-Remaining of every key response is the same number, a tenth of the limit below it: the window seems to hold requests the suite did not send, and it never counts down.',
    checks: ['rate-limit.remaining-decrements'],
    transformResponse: (res, req) => {
      const limit = Number(header(res, 'x-ratelimit-limit'));
      if (req.path === '/auth/token' || !Number.isInteger(limit) || header(res, 'x-ratelimit-remaining') === undefined) return res;
      return withHeaders(res, { 'x-ratelimit-remaining': String(limit - Math.ceil(limit / 10)) });
    },
  },
  {
    name: 'rate-limit-remaining-stuck-production',
    area: 'rate-limit',
    violates: ['rate-limit.headers-arithmetic'],
    symptom: "A production key's X-RateLimit-Remaining always equals its limit (a sandbox key's counts down as it should).",
    checks: ['rate-limit.remaining-decrements'],
  },
  {
    name: 'rate-limit-remaining-per-surface',
    area: 'rate-limit',
    violates: ['rate-limit.headers-arithmetic'],
    symptom:
      "X-RateLimit-Remaining counts only the key's requests of the same release and resource type (a gateway's counter per route); the key's limit is still enforced over all its requests.",
    checks: ['rate-limit.remaining-decrements'],
  },
  {
    name: 'rate-limit-retry-after-too-short',
    area: 'rate-limit',
    violates: ['rate-limit.retry-after'],
    symptom: "A key's 429 says Retry-After half the real wait: a retry once it elapses is refused again.",
    checks: ['rate-limit.served-after-retry-after'],
    transformResponse: (res, req) => {
      const seconds = Number(header(res, 'retry-after'));
      return isKeyThrottled(res, req) && Number.isInteger(seconds) ? withHeaders(res, { 'retry-after': String(Math.max(1, Math.floor(seconds / 2))) }) : res;
    },
  },
  {
    name: 'rate-limit-retry-after-zero',
    area: 'rate-limit',
    violates: ['rate-limit.retry-after'],
    symptom: "A key's 429 says Retry-After: 0.",
    checks: ['rate-limit.excess-gives-429'],
    transformResponse: (res, req) => (isKeyThrottled(res, req) ? withHeaders(res, { 'retry-after': '0' }) : res),
  },
  {
    name: 'rate-limit-writes-not-throttled',
    area: 'rate-limit',
    violates: ['medication-request.create-429', 'medication-request.update-429', 'encounter.create-429', 'encounter.update-429'],
    symptom: 'Creates and updates of a key over its limit are served: they count against the key, but the limiter never refuses a write.',
    checks: ['rate-limit.operations-429'],
  },
  {
    name: 'rate-limit-r5-not-throttled',
    area: 'rate-limit',
    violates: ['document-reference.read-429', 'document-reference.search-429', 'document-reference.create-429', 'document-reference.update-429'],
    symptom:
      'The R5 surface escapes the per-key limit: its requests count against the key, but a key over its limit is still served there (the R4 operations are refused).',
    checks: ['rate-limit.operations-429'],
  },
  {
    name: 'rate-limit-r5-throttled-503',
    area: 'rate-limit',
    violates: ['document-reference.read-429', 'document-reference.search-429', 'document-reference.create-429', 'document-reference.update-429'],
    symptom: 'An R5 request of a key over its limit gets 503 SVC-00007 (with Retry-After) instead of 429 HPB-00105; the R4 surface answers 429.',
    checks: ['rate-limit.operations-429'],
    transformResponse: (res, req) => (isKeyThrottled(res, req) && req.op?.release === 'R5' ? asServiceUnavailable(res) : res),
  },
  {
    // One R4 row only, and a 500 rather than the 503 a busy server might send: the least obvious
    // wrong answer to one throttled operation while every other row answers 429 HPB-00105.
    name: 'rate-limit-encounter-update-throttled-500',
    area: 'rate-limit',
    violates: ['encounter.update-429'],
    symptom: 'PUT /fhir/R4/Encounter/{id} of a key over its limit gets 500 SVC-00001 instead of 429 HPB-00105; every other operation answers 429.',
    checks: ['rate-limit.operations-429'],
    transformResponse: (res, req) => (isKeyThrottled(res, req) && req.op?.operationId === 'Encounter.update' ? errorResponse(res, 500, 'SVC-00001') : res),
  },
  {
    name: 'rate-limit-exhausted-503',
    area: 'rate-limit',
    violates: ['rate-limit.excess-429', 'catalog.hpb-00105'],
    symptom: 'A key over its limit gets 503 SVC-00007 (with Retry-After) instead of 429 HPB-00105.',
    checks: ['rate-limit.excess-gives-429'],
    transformResponse: (res, req) => (isKeyThrottled(res, req) ? asServiceUnavailable(res) : res),
  },
  {
    name: 'encounter-throttled-wrong-code',
    area: 'rate-limit',
    violates: ['encounter.read-429', 'encounter.search-429', 'encounter.create-429', 'encounter.update-429'],
    checks: ['rate-limit.operations-429'],
    symptom: 'Encounter requests over the key limit are refused with 429 HPB-00121 (sandbox volume cap) instead of HPB-00105.',
    transformResponse: (res, req) =>
      req.op?.resource === 'Encounter' && res.status === 429 && outcomeCode(res.body) === 'HPB-00105' ? { ...res, body: recoded(res.body, 'HPB-00121') } : res,
  },
  {
    name: 'rate-limit-counted-per-token',
    area: 'rate-limit',
    violates: ['rate-limit.per-key-default-60', 'rate-limit.excess-429'],
    symptom: 'The per-key limit counts each access token apart: a key that alternates two tokens is served twice its ceiling in one window.',
    checks: ['rate-limit.per-key-across-tokens'],
  },
];

/*
 * One fault per R4 MedicationRequest and Encounter operation, and one for the R5 DocumentReference
 * read (the R5 operations mirror them; the check judges every operation's code alike, and
 * rate-limit-r5-not-throttled and rate-limit-r5-throttled-503 prove all four R5 operations are sent
 * and judged, whatever the status of the wrong answer; more faults here
 * are more window runs in the test shards): while the key is
 * over its limit, that operation's 429 loses its catalog code (no `details`,
 * plain-text diagnostics), breaking the "429 `HPB-00105`" cell of its row of
 * the endpoint table. Caught by `rate-limit.operations-429`.
 */
/** The 429 body with its catalog code removed: issue code and a plain diagnostics text only. */
function withoutCatalogCode(res: FaultResponse): FaultResponse {
  const body = res.body as { issue?: Array<Record<string, unknown>> } | undefined;
  const issue = body?.issue?.[0];
  if (!issue) return res;
  const { details: _details, ...rest } = issue;
  const diagnostics = typeof rest.diagnostics === 'string' ? rest.diagnostics.replace(/^[A-Z]{3}-\d{5}: /, '') : 'Too many requests';
  return { ...res, body: { ...body, issue: [{ ...rest, diagnostics }, ...body.issue!.slice(1)] } };
}

export const throttledWithoutCode = (op: OperationDef) => `throttled-without-code-${kebab(op.operationId)}`;

faults.push(
  ...OPERATIONS.filter(
    (op) =>
      op.interaction !== 'operation' &&
      ((op.release === 'R4' && (op.resource === 'MedicationRequest' || op.resource === 'Encounter')) ||
        (op.release === 'R5' && op.resource === 'DocumentReference' && op.interaction === 'read')),
  ).map(
    (op): FaultDef => ({
      name: throttledWithoutCode(op),
      area: 'rate-limit',
      violates: [`${kebab(op.resource)}.${SHORT[op.interaction]}-429`],
      symptom: `${op.method} ${op.path} over the key's limit answers 429 without the catalog code HPB-00105.`,
      checks: ['rate-limit.operations-429'],
      transformResponse: (res, req) => (req.op?.operationId === op.operationId && res.status === 429 ? withoutCatalogCode(res) : res),
    }),
  ),
);
