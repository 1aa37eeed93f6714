/**
 * Faults caught by the issuance-limit suite: the token endpoint's 429 missing or
 * malformed, its limit too loose, or a 503 in place of the 429. The limit faults
 * replace the endpoint's fixed-window counter (`issuanceCounter`, used by the HTTP core).
 */
import { FixedWindowCounter, type RateDecision } from '../rate-limit.js';
import { asServiceUnavailable } from './rate-limit.js';
import type { FaultDef, FaultResponse, FaultRequest } from './types.js';

/**
 * The key the token issuance limit counts by: the socket's address, or (fault
 * `issuance-limit-keyed-by-forwarded-for`) the client-written forwarding headers when present.
 */
export function issuanceKey(faults: ReadonlySet<string>, ip: string, headers: Record<string, string | string[] | undefined>): string {
  if (!faults.has('issuance-limit-keyed-by-forwarded-for')) return ip;
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.split(',')[0]?.trim();
  const forwardedFor = /for="?\[?([^;,"\]]+)/i.exec(first(headers.forwarded) ?? '')?.[1];
  return first(headers['x-forwarded-for']) || first(headers['x-real-ip']) || forwardedFor || ip;
}

/** A counter that issues `factor` times the limit per window while its headers describe the limit. */
class LooseCounter extends FixedWindowCounter {
  /** Tokens issued per window beyond the limit shown. */
  private readonly extra: number;

  constructor(
    windowMs: number,
    private readonly shown: number,
    align: 'clock' | 'first-request',
    factor: number,
  ) {
    super(windowMs, Math.ceil(factor * shown), align);
    this.extra = Math.ceil(factor * shown) - shown;
  }

  override hit(key: string, now: number): RateDecision {
    const d = super.hit(key, now);
    return { ...d, limit: this.shown, remaining: Math.max(0, d.remaining - this.extra) };
  }
}

/** A counter that refuses at three quarters of the limit per window while X-RateLimit-Limit shows the limit. */
class EarlyCounter extends FixedWindowCounter {
  constructor(
    windowMs: number,
    private readonly shown: number,
    align: 'clock' | 'first-request',
  ) {
    super(windowMs, Math.ceil((3 * shown) / 4), align);
  }

  override hit(key: string, now: number): RateDecision {
    return { ...super.hit(key, now), limit: this.shown };
  }
}

/** A counter whose refusals never move the window's end: an early retry leaves the reset where it was. */
class UnextendedCounter extends FixedWindowCounter {
  protected override extendedEnd(endMs: number): number {
    return endMs;
  }
}

/**
 * A counter that, after a refusal, mishandles the next request sent before the refusal's reset:
 * `served` issues it a token (the refusal freed the slot it was refused for), `error` throws (the
 * server answers 500). Later requests meet the reference's counter.
 */
class EarlyRetryCounter extends FixedWindowCounter {
  /** Per key: the reset the last refusal announced, and whether a request before it was already let through. */
  private readonly refusedUntil = new Map<string, { at: number; handled: boolean }>();

  constructor(
    windowMs: number,
    limit: number,
    align: 'clock' | 'first-request',
    private readonly fault: 'served' | 'error',
  ) {
    super(windowMs, limit, align);
  }

  override hit(key: string, now: number): RateDecision {
    const r = this.refusedUntil.get(key);
    if (r && now < r.at && !r.handled) {
      r.handled = true;
      if (this.fault === 'error') throw new Error('planted fault issuance-early-retry-500: the issuance counter fails on a request before Retry-After');
      return { allowed: true, limit: this.limit, remaining: 0, resetMs: r.at };
    }
    const d = super.hit(key, now);
    if (!d.allowed && (!r || now >= r.at)) this.refusedUntil.set(key, { at: d.resetMs, handled: false });
    return d;
  }
}

/** The token endpoint's counter: faulty when one of the issuance counter faults is planted. */
export function issuanceCounter(
  faults: ReadonlySet<string>,
  windowMs: number,
  limit: number,
  align: 'clock' | 'first-request',
  premature: 'restart' | 'plus-second' | 'same-client' = 'restart',
): FixedWindowCounter {
  if (faults.has('issuance-limit-doubled')) return new LooseCounter(windowMs, limit, align, 2);
  if (faults.has('issuance-limit-150-percent')) return new LooseCounter(windowMs, limit, align, 1.5);
  if (faults.has('issuance-limit-throttles-early')) return new EarlyCounter(windowMs, limit, align);
  if (faults.has('issuance-early-retry-not-extended')) return new UnextendedCounter(windowMs, limit, align);
  if (faults.has('issuance-early-retry-served')) return new EarlyRetryCounter(windowMs, limit, align, 'served');
  if (faults.has('issuance-early-retry-500')) return new EarlyRetryCounter(windowMs, limit, align, 'error');
  return new FixedWindowCounter(windowMs, limit, align, premature);
}

function isIssuance429(res: FaultResponse, req: FaultRequest): boolean {
  return req.path === '/auth/token' && res.status === 429;
}

/** Rewrites issue[0] of an OperationOutcome body. */
function rewriteIssue(body: unknown, change: (issue: Record<string, unknown>) => Record<string, unknown>): unknown {
  const outcome = body as { issue?: Record<string, unknown>[] } | undefined;
  if (!outcome?.issue?.[0]) return body;
  return { ...outcome, issue: [change(outcome.issue[0]), ...outcome.issue.slice(1)] };
}

export const faults: FaultDef[] = [
  {
    name: 'issuance-limit-not-enforced',
    area: 'issuance-limit',
    violates: ['issuance-limit.twenty-per-minute', 'issuance-limit.excess-429'],
    symptom: 'POST /auth/token issues tokens without limit (headers still count).',
    checks: ['issuance-limit.excess-429'],
  },
  {
    name: 'issuance-limit-wrong-code',
    area: 'issuance-limit',
    violates: ['issuance-limit.excess-429'],
    symptom: "The token endpoint's 429 carries HPB-00121 (sandbox volume cap) instead of HPB-00105.",
    checks: ['issuance-limit.excess-429'],
    transformResponse: (res, req) =>
      !isIssuance429(res, req)
        ? res
        : {
            ...res,
            body: rewriteIssue(res.body, (issue) => ({
              ...issue,
              diagnostics: String(issue.diagnostics).replace('HPB-00105', 'HPB-00121'),
              details: { coding: [{ system: (issue.details as { coding: { system: string }[] }).coding[0]!.system, code: 'HPB-00121' }] },
            })),
          },
  },
  {
    name: 'issuance-limit-not-throttled',
    area: 'issuance-limit',
    violates: ['errors.throttled-code'],
    symptom: "The token endpoint's 429 has issue code too-costly instead of throttled.",
    checks: ['issuance-limit.excess-429'],
    transformResponse: (res, req) => (!isIssuance429(res, req) ? res : { ...res, body: rewriteIssue(res.body, (issue) => ({ ...issue, code: 'too-costly' })) }),
  },
  {
    name: 'issuance-limit-no-retry-after',
    area: 'issuance-limit',
    violates: ['rate-limit.retry-after', 'catalog.hpb-00105'],
    symptom: "The token endpoint's 429 has no Retry-After header.",
    checks: ['issuance-limit.excess-429'],
    transformResponse: (res, req) =>
      !isIssuance429(res, req) ? res : { ...res, headers: Object.fromEntries(Object.entries(res.headers).filter(([k]) => k.toLowerCase() !== 'retry-after')) },
  },
  {
    name: 'issuance-retry-after-too-short',
    area: 'issuance-limit',
    violates: ['catalog.hpb-00105', 'issuance-limit.fixed-window'],
    symptom: "The token endpoint's 429 says Retry-After: 0 although the window lasts longer; a request after that wait is refused again.",
    checks: ['issuance-limit.excess-429', 'issuance-limit.window-recovers'],
    transformResponse: (res, req) => (!isIssuance429(res, req) ? res : { ...res, headers: { ...res.headers, 'Retry-After': '0' } }),
  },
  {
    name: 'issuance-limit-exhausted-503',
    area: 'issuance-limit',
    violates: ['issuance-limit.excess-429'],
    symptom: 'An exhausted token endpoint answers 503 SVC-00007 (with Retry-After) instead of 429 HPB-00105.',
    checks: ['issuance-limit.excess-429'],
    transformResponse: (res, req) => (isIssuance429(res, req) ? asServiceUnavailable(res) : res),
  },
  {
    name: 'issuance-limit-doubled',
    area: 'issuance-limit',
    violates: ['issuance-limit.twenty-per-minute'],
    symptom: 'The token endpoint issues twice its limit per window (40 a minute); its headers still count down from 20.',
    checks: ['issuance-limit.at-most-limit-per-window'],
  },
  {
    name: 'issuance-limit-150-percent',
    area: 'issuance-limit',
    violates: ['issuance-limit.twenty-per-minute'],
    symptom: 'The token endpoint issues one and a half times its limit per window (30 a minute); its headers still count down from 20.',
    checks: ['issuance-limit.at-most-limit-per-window'],
  },
  {
    name: 'issuance-limit-throttles-early',
    area: 'issuance-limit',
    violates: ['issuance-limit.twenty-per-minute'],
    symptom: 'The token endpoint refuses at three quarters of its limit per window (15 of 20 a minute) while X-RateLimit-Limit still says 20.',
    checks: ['issuance-limit.at-most-limit-per-window'],
  },
  {
    name: 'issuance-limit-keyed-by-forwarded-for',
    area: 'issuance-limit',
    violates: ['issuance-limit.twenty-per-minute', 'issuance-limit.excess-429'],
    symptom:
      "The token issuance limit counts per the request's X-Forwarded-For (else X-Real-IP, else Forwarded's for=), headers the client writes: requests with changing values never meet the limit.",
    checks: ['issuance-limit.forwarding-headers-not-trusted'],
  },
  {
    name: 'issuance-early-retry-served',
    area: 'issuance-limit',
    violates: ['rate-limit.early-retry-429'],
    symptom:
      "After the token endpoint's 429, the next token request sent before its Retry-After elapses is issued a token (the refusal freed the slot); later ones are refused.",
    checks: ['issuance-limit.early-retry-429'],
  },
  {
    name: 'issuance-early-retry-not-extended',
    area: 'issuance-limit',
    violates: ['rate-limit.early-retry-extends-reset'],
    symptom: "A token request sent before the issuance 429's Retry-After elapses gets another 429, but the reset stays where it was (a plain fixed window).",
    checks: ['issuance-limit.early-retry-extends-reset'],
  },
  {
    name: 'issuance-early-retry-500',
    area: 'issuance-limit',
    violates: ['rate-limit.early-retry-429'],
    symptom: "A token request sent before the issuance 429's Retry-After elapses fails with 500 SVC-00001 (the counter throws) instead of another 429.",
    checks: ['issuance-limit.early-retry-429'],
  },
];
