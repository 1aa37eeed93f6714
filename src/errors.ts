/**
 * Errors with a `code` from a closed union (jose style). Inside a check, the
 * outcome follows from the error type: CheckFailure -> fail, SkipSignal -> skip,
 * anything else (ConformanceError included) -> error.
 */
import type { Exchange } from './http/types.js';

export type ErrorCode =
  | 'ERR_CONFIG_INVALID'
  | 'ERR_USAGE'
  | 'ERR_TARGET_UNREACHABLE'
  | 'ERR_DNS'
  | 'ERR_TLS'
  | 'ERR_TIMEOUT'
  | 'ERR_DEADLINE'
  | 'ERR_INTERRUPTED'
  | 'ERR_BODY_TOO_LARGE'
  | 'ERR_PROTOCOL'
  | 'ERR_DISCOVERY'
  | 'ERR_TOKEN'
  | 'ERR_KEY'
  | 'ERR_REPORT'
  | 'ERR_INTERNAL'
  /** A proxy (HTTPS_PROXY, HTTP_PROXY) refused the tunnel (407: its credentials) or cannot be reached. */
  | 'ERR_PROXY';

export class ConformanceError extends Error {
  readonly code: ErrorCode;
  /**
   * The exchange the error happened on (a request that timed out, a connection cut mid-body), as
   * recorded and redacted by the HTTP client: the evidence of the check that ends in this error.
   */
  exchange?: Exchange;
  /** For ERR_CONFIG_INVALID: the JSON path of the offending field, e.g. `clients[1].alg`. */
  readonly field?: string;
  /** What the user should do about it. */
  readonly fix?: string;
  constructor(code: ErrorCode, message: string, opts: { field?: string; fix?: string; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ConformanceError';
    this.code = code;
    this.field = opts.field;
    this.fix = opts.fix;
  }
}

/** An assertion about the target failed: outcome `fail`. */
export class CheckFailure extends Error {
  constructor(
    message: string,
    readonly details: { requirement?: string; expected?: unknown; actual?: unknown; exchange?: string } = {},
  ) {
    super(message);
    this.name = 'CheckFailure';
  }
}

/**
 * The target answered with a choice the spec leaves open, so the rule the check judges did not
 * come into play (e.g. a token issued for a request the spec does not say to refuse): outcome
 * `observation`, whatever the check's level; its observations say what the target did.
 */
export class OpenChoiceSignal extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'OpenChoiceSignal';
  }
}

/** The check cannot run (missing fixture, excluded by profile, ...): outcome `skip`. */
export class SkipSignal extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'SkipSignal';
  }
}

export function isConformanceError(e: unknown): e is ConformanceError {
  return e instanceof ConformanceError;
}

/** One readable line for any thrown value (no stack). */
export function describeError(e: unknown): string {
  if (e instanceof ConformanceError) return `${e.code}: ${e.message}${e.field ? ` (field ${e.field})` : ''}`;
  if (e instanceof Error) return `${e.name === 'Error' ? '' : `${e.name}: `}${e.message}`.split('\n')[0]!;
  return String(e).split('\n')[0]!;
}
