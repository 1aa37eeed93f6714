/** Contract of the HTTP layer (implemented in src/http/client.ts). */
import type { NetworkSettings } from './dispatcher.js';

/** One HTTP request/response pair, already redacted (no secrets, bodies capped). */
export interface Exchange {
  /** Unique within a run, e.g. `x-000123`. */
  id: string;
  startedAt: string;
  durationMs: number;
  /** Config role of the client whose token was used, when any. */
  client?: string;
  request: {
    method: string;
    url: string;
    headers: Record<string, string>;
    body?: string;
    bodyTruncated?: boolean;
  };
  response?: {
    status: number;
    headers: Record<string, string>;
    body?: string;
    /** Bytes received (capped reads stop counting at the cap). */
    bodyBytes: number;
    bodyTruncated?: boolean;
  };
  /** Network or protocol failure, one readable line. */
  error?: string;
  /** A shell command that reproduces the request; the token appears as `$TOKEN`. */
  curl: string;
}

/**
 * What the client knew of an exchange besides its evidence, handed to `onExchange` for the
 * run-wide rules that judge every exchange (src/service/invariants.ts subscribes to them).
 */
export interface ExchangeFacts {
  /** The request's path relative to the target's base URL (`/fhir/R4/...`); the full path for another origin. */
  path: string;
  /** The request carried a bearer token. */
  authenticated: boolean;
  /** The URL is limited per source address (HttpProtocol.perSource, HttpClient.markPerSource): the token endpoint. */
  perSource: boolean;
  /** When the answer's headers arrived, epoch ms (what X-RateLimit-Reset and the like describe). */
  answeredAt: number;
  /** The whole body parsed as JSON (not the evidence excerpt); undefined when it is not JSON. */
  json?: unknown;
  /** The whole body's text that `json` was parsed from (equal texts parse to equal values). */
  text?: string;
  /** The body was cut at the size cap. */
  truncated: boolean;
  /** The exchange got a whole answer (false: a network failure or a body that could not be read). */
  complete: boolean;
  /** The caller asked that the run-wide rules skip this exchange (`skipInvariants`). */
  skipInvariants: boolean;
}

/** Pacing hints a response's headers give (e.g. X-RateLimit-*): integers as sent, when readable. */
export interface RateLimitHints {
  /** Requests allowed per window. */
  limit?: number;
  /** Requests left in the current window. */
  remaining?: number;
  /** When the window resets, unix seconds. */
  reset?: number;
}

/**
 * What the HTTP layer needs to know of the service it talks to, injected by the caller
 * (src/service/http.ts holds the Clinical Records FHIR Service's). Without it the client
 * speaks plain HTTP: Retry-After in delta-seconds, no rate-limit headers, no per-source
 * bucket, no expired-token answer.
 */
export interface HttpProtocol {
  /** A path (relative to the base URL) limited per source address rather than per key, e.g. a token endpoint: its own pacing bucket, never held by a 429. */
  perSource?(path: string): boolean;
  /** Pacing hints from a response's headers. */
  rateLimit?(headers: Record<string, string>): RateLimitHints;
  /** How long a 429 (or a 503) asks to wait, ms; undefined when it does not say. */
  retryAfterMs?(headers: Record<string, string>): number | undefined;
  /** The answer refuses the bearer token as expired: a broker token is then re-issued and the request sent once more. */
  tokenExpired?(res: HttpResponse): boolean;
}

export interface RequestOptions {
  method?: string;
  /** Absolute URL, or a path resolved against the target's base URL. */
  url: string;
  headers?: Record<string, string>;
  /** A string/Buffer is sent as is; any other value is JSON-encoded. */
  body?: unknown;
  /**
   * Bearer token to send; recorded as `$TOKEN` in evidence and curl. A `TokenSource` is asked
   * when the request is about to leave (after pacing, before every retry), so no wait outlasts
   * the token. A string the token broker handed out is renewed the same way (see `tokens`);
   * any other string is sent as is.
   */
  token?: string | TokenSource;
  /** Config role of the client the token belongs to (per-key pacing and attribution). */
  client?: string;
  /**
   * 'spec' (default) follows the spec's retry rules (429: wait Retry-After;
   * 5xx: exponential backoff 1 s..60 s, +-10% jitter; never 401/403/404/other 4xx).
   * 'none' returns the first response: for checks that provoke a 429 or 5xx on purpose.
   */
  retry?: 'spec' | 'none';
  /** false skips client-side pacing (rate-limit checks that must exceed the limit). */
  pace?: boolean;
  /** May use the key's one request of headroom instead of waiting (a request due at a fixed time, e.g. the expiry probe). */
  urgent?: boolean;
  /** Marks this request as deliberately provoking a 429 (not counted as unplanned). */
  expect429?: boolean;
  /**
   * Sent even while its key is held by an earlier 429 (Retry rule 1: never retry before
   * Retry-After elapses). Only for the one early retry the rate-limit suite sends on purpose to
   * see the reset move (a target may extend the wait steeply on every early request).
   */
  earlyRetry?: boolean;
  timeoutMs?: number;
  /** Cap on the response body kept in memory (default from client options). */
  maxBodyBytes?: number;
  /** Send the request as application/x-www-form-urlencoded from these fields. */
  form?: Record<string, string>;
  /** Form fields / JSON paths whose values are secrets (redacted in evidence). */
  secretFields?: string[];
  /** The run-wide rules that judge every exchange skip this one (e.g. deliberately malformed); passed on in ExchangeFacts. */
  skipInvariants?: boolean;
}

/** Hands out a bearer token at the moment a request leaves. */
export type TokenSource = () => Promise<string>;

/** The token lifecycle the HTTP client relies on (implemented by the token broker). */
export interface TokenRenewal {
  /**
   * For a token the broker handed out: itself while it stays valid long enough to reach the
   * target, else a newer one for the same client and scopes. undefined for any other token
   * (sent as is: a check's deliberately expired, forged or probe token).
   */
  current(token: string): Promise<string | undefined>;
  /**
   * The target refused `token` as expired (HttpProtocol.tokenExpired) though the broker held it valid:
   * drops it and returns a newly issued one for the same client and scopes. undefined when
   * the token is not the broker's, or when re-issuing proved futile (a replacement was refused too).
   */
  replaceExpired(token: string): Promise<TokenReissue | undefined>;
}

export interface TokenReissue {
  token: string;
  /** Age of the refused token when it was refused, ms, and the lifetime it was issued with. */
  ageMs: number;
  lifetimeMs: number;
}

export interface HttpResponse {
  status: number;
  /** Lower-case header names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** Body as text (capped; see exchange.response.bodyTruncated). */
  text: string;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  json: unknown;
  /** True when the body was cut at `maxBodyBytes` (the rest was not read). */
  bodyTruncated: boolean;
  exchange: Exchange;
}

export interface HttpClientOptions {
  baseUrl: string;
  /** Per-request timeout, ms (default 15000). */
  timeoutMs?: number;
  /** Cap on kept response bodies, bytes (default 2 MiB). */
  maxBodyBytes?: number;
  /** Called for every exchange (evidence collection, and the run-wide rules that judge exchanges). */
  onExchange?: (exchange: Exchange, facts: ExchangeFacts) => void;
  /** The service's protocol (rate-limit headers, Retry-After, a per-source token endpoint, expired-token answers); plain HTTP when absent. */
  protocol?: HttpProtocol;
  /** Per-key request ceiling used for pacing when headers are absent (default 60/min). */
  defaultRatePerMinute?: number;
  /** Override per client role. */
  ratePerMinute?: Record<string, number>;
  /** Window length in seconds (default 60). */
  windowSec?: number;
  /** A declared organization ceiling per window shared by these client roles (see Pacer). */
  organization?: { ceiling: number; members: readonly string[] };
  /** Reports waits (rate-limit pacing, Retry-After, backoff) for live progress. */
  onWait?: (info: { reason: string; ms: number; client?: string }) => void;
  /** Whole-run deadline as epoch ms; requests after it fail with ERR_DEADLINE. */
  deadline?: number;
  /** AbortSignal that aborts every in-flight and future request (interrupts). */
  signal?: AbortSignal;
  /** Longest single wait for Retry-After (default 120000 ms); a longer one returns the 429 at once. */
  maxRetryWaitMs?: number;
  /** Clock, epoch ms (default Date.now); injectable for tests. */
  now?: () => number;
  /** Sleep (default timers/promises setTimeout); injectable for tests. Deadline and signal still apply. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Random source in [0, 1) for backoff jitter (default Math.random). */
  random?: () => number;
  /** Token lifecycle: renews broker tokens at send time and after an expired-token answer (see TokenRenewal, HttpProtocol.tokenExpired). */
  tokens?: TokenRenewal;
  /**
   * Reports an expired-token answer to a token the suite held valid, re-issued and retried once: the
   * suite's token handling, not the target's fault.
   */
  onTokenReissued?: (info: { exchange: Exchange; client?: string; ageMs: number; lifetimeMs: number }) => void;
  /**
   * Called before a request of a client's key (not the per-source token endpoint) is paced: a
   * promise holds it back while other work owns the key (an exhaustion episode started early).
   */
  keyGate?: (client: string) => Promise<unknown> | undefined;
  /** TLS settings (a private CA, a client certificate) and the proxy, for every request (src/http/dispatcher.ts). */
  network?: NetworkSettings;
}

export interface HttpStats {
  requests: number;
  /** 429 responses to requests not marked expect429. */
  unplanned429: number;
  waitsMs: number;
  /** Requests re-sent with a re-issued token after an expired-token answer to a token held valid. */
  tokenReissues: number;
}
