/** Contract of the HTTP layer (implemented in src/http/client.ts). */
import type { Exchange, Finding } from '../engine/types.js';

export interface RequestOptions {
  method?: string;
  /** Absolute URL, or a path resolved against the target's base URL. */
  url: string;
  headers?: Record<string, string>;
  /** A string/Buffer is sent as is; any other value is JSON-encoded. */
  body?: unknown;
  /** Bearer token to send; recorded as `$TOKEN` in evidence and curl. */
  token?: string;
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
}

export interface HttpStats {
  requests: number;
  /** 429 responses to requests not marked expect429. */
  unplanned429: number;
  waitsMs: number;
}
