/** Contract of the auth layer (implemented in src/auth/). */
import type { HttpResponse } from '../http/types.js';

export interface AssertionOverrides {
  iss?: string;
  sub?: string;
  aud?: string;
  /** Seconds since epoch. */
  exp?: number;
  iat?: number;
  jti?: string;
  /** Claims to leave out entirely (applied after the overrides above). */
  omit?: ('iss' | 'sub' | 'aud' | 'exp' | 'iat' | 'jti')[];
  /** Header overrides, e.g. `{ alg: 'none' }` or `{ kid: 'unknown' }`. */
  header?: Record<string, unknown>;
  /** Sign with this key instead of the client's (a foreign key). */
  signWith?: 'client' | 'foreign' | 'none' | 'hs256-public-key';
  /** Corrupt the signature bytes after signing. */
  corruptSignature?: boolean;
}

export interface TokenRequestOptions {
  /** Requested scopes; omitted from the form when undefined. */
  scopes?: string[];
  assertion?: AssertionOverrides;
  /** Form field overrides; a value of null removes the field. */
  form?: Record<string, string | null>;
  /** Send a non-form body instead. */
  rawBody?: { contentType: string; body: string };
  /**
   * Runs once the request has its issuance slot and its signed assertion, right before it is
   * sent: a change the request depends on (the client key set cut) lasts no longer than the request.
   */
  beforeSend?: () => Promise<void>;
  /** Marks the request as deliberately provoking a 429. */
  expect429?: boolean;
  /** Extra request headers (the issuance burst's forwarding headers). */
  headers?: Record<string, string>;
  /** Skip issuance pacing (only the issuance-limit check). */
  pace?: boolean;
  /** Per-request timeout, ms (default: the run's request timeout); the run's preflight uses a shorter one. */
  timeoutMs?: number;
}

export interface TokenBrokerApi {
  /**
   * A cached access token for this client role and scope set (issued when absent or near expiry).
   * `validForMs`: the cached token must stay usable that long, else a new one is issued.
   */
  token(role: string, scopes: string[], opts?: { validForMs?: number }): Promise<string>;
  /** A new token, never cached (the expiry probe). */
  freshToken(role: string, scopes: string[]): Promise<string>;
  /**
   * Renews each role's covering token (all its declared scopes) held but not usable `horizonMs` more;
   * answers how many were renewed.
   */
  renewCovering(horizonMs: number): Promise<number>;
  /** A raw token request, for auth checks. Counts against the issuance limit. */
  request(role: string, opts?: TokenRequestOptions): Promise<HttpResponse>;
  /**
   * Runs `fn` with the token endpoint to itself: once no other token request is in flight, and
   * every other token request waits until it ends (`fn` sends its own through `request`).
   */
  alone<T>(fn: (request: (role: string, opts?: TokenRequestOptions) => Promise<HttpResponse>) => Promise<T>): Promise<T>;
  /** A signed client assertion (never logged). */
  assertion(role: string, overrides?: AssertionOverrides): Promise<string>;
  /** Token requests sent so far. */
  readonly issued: number;
}
