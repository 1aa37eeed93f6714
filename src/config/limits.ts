/** The spec's limits ("Limits" and "Authentication" sections) and the deviations a config declares from them. */

export interface Limits {
  /** Access token lifetime, seconds. */
  tokenLifetimeSec: number;
  /** Length of the rate-limit and token-issuance windows, seconds. */
  windowSec: number;
  /** Token requests allowed per window per source IP. */
  tokenIssuancePerMinute: number;
}

/** Spec: "An access token lives 5 minutes"; "1-minute" windows; "20 requests per minute per source IP". */
export const SPEC_LIMITS: Readonly<Limits> = Object.freeze({
  tokenLifetimeSec: 300,
  windowSec: 60,
  tokenIssuancePerMinute: 20,
});

/** Spec: per-key request rate "default 60 requests per minute". */
export const SPEC_DEFAULT_KEY_RATE_PER_MINUTE = 60;

const DESCRIBE: Record<keyof Limits, (value: number, spec: number) => string> = {
  tokenLifetimeSec: (v, s) => `token lifetime ${v} s (spec: ${s} s)`,
  windowSec: (v, s) => `rate-limit window ${v} s (spec: ${s} s)`,
  tokenIssuancePerMinute: (v, s) => `token issuance ${v} per window (spec: ${s} per minute)`,
};

/** Merges declared limits over the spec's defaults. */
export function effectiveLimits(declared: Partial<Limits> = {}): Limits {
  return { ...SPEC_LIMITS, ...declared };
}

/** One readable line per limit that differs from the spec's default, with the field it comes from. */
export function limitDeviations(limits: Limits): { field: keyof Limits; line: string }[] {
  return (Object.keys(SPEC_LIMITS) as (keyof Limits)[])
    .filter((field) => limits[field] !== SPEC_LIMITS[field])
    .map((field) => ({ field, line: DESCRIBE[field](limits[field], SPEC_LIMITS[field]) }));
}
