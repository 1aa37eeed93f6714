/** Contract of the HTTP layer (implemented in src/http/client.ts). */
import type { Exchange, Finding } from '../engine/types.js';

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
   * Retry-After elapses). Only for the check that retries early on purpose to see the reset move.
   */
  earlyRetry?: boolean;
  timeoutMs?: number;
  /** Cap on the response body kept in memory (default from client options). */
  maxBodyBytes?: number;
  /** Send the request as application/x-www-form-urlencoded from these fields. */
  form?: Record<string, string>;
  /** Form fields / JSON paths whose values are secrets (redacted in evidence). */
  secretFields?: string[];
  /** Do not run the generic invariants on this exchange (e.g. deliberately malformed). */
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
   * The target refused `token` as expired (401 HPB-00107) though the broker held it valid:
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
  /** Called for every exchange (evidence collection). */
  onExchange?: (exchange: Exchange, findings: Finding[]) => void;
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
  /** Extra per-exchange validation (e.g. HL7 schema of FHIR bodies); its findings join the invariants'. */
  validateResponse?: (res: { path: string; status: number; json: unknown; truncated: boolean }, exchange: Exchange) => Finding[];
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
  /** Token lifecycle: renews broker tokens at send time and after a 401 HPB-00107 (see TokenRenewal). */
  tokens?: TokenRenewal;
  /**
   * Reports a 401 HPB-00107 on a token the suite held valid, re-issued and retried once: the
   * suite's token handling, not the target's fault.
   */
  onTokenReissued?: (info: { exchange: Exchange; client?: string; ageMs: number; lifetimeMs: number }) => void;
}

export interface HttpStats {
  requests: number;
  /** 429 responses to requests not marked expect429. */
  unplanned429: number;
  waitsMs: number;
  /** Requests re-sent with a re-issued token after a 401 HPB-00107 on a token held valid. */
  tokenReissues: number;
}
