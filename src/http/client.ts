/**
 * The HTTP client every check uses (undici). Records each exchange as redacted
 * evidence and hands it on (`onExchange`, with the facts the run-wide rules judge),
 * paces per client role, follows the spec's retry rules, and turns network failures
 * into ConformanceErrors. What it knows of the service (rate-limit headers, the token
 * endpoint, expired-token answers) comes in as `protocol`. It never follows redirects,
 * never throws for a non-2xx status, and never buffers more than `maxBodyBytes` of a body.
 */
import { Readable } from 'node:stream';
import { setTimeout as sleepTimer } from 'node:timers/promises';
import { targetTimeout, timeoutCapMs } from './target-timeout.js';
import type { Dispatcher } from 'undici';
import { createDispatcher, proxyFor } from './dispatcher.js';
import { sendInProcess } from './in-process.js';
import { ConformanceError } from '../errors.js';
import { redactHeaders, redactString, registerSecret } from '../redact.js';
import { ACCEPT_ENCODING, BodyReadError, cappedBuffer, contentCodings, decodedStream, readCapped, type CappedBody } from './body.js';
import { binaryExcerpt, bodyExcerpt, curlCommand, decodeBody, isText, parseJson } from './evidence.js';
import { jsonBody, type JsonParts } from './json-body.js';
import { toConformanceError, seconds, type AbortCause } from './failures.js';
import { Pacer } from './pacer.js';
import { MAX_429_RETRIES, MAX_5XX_RETRIES, backoffDelayMs, parseRetryAfterMs, retryKind } from './retry.js';
import type { Exchange, ExchangeFacts, HttpClientOptions, HttpProtocol, HttpResponse, HttpStats, RequestOptions, TokenSource } from './types.js';

const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024;
const DEFAULT_RATE = 60;
const DEFAULT_WINDOW_SEC = 60;
const DEFAULT_MAX_RETRY_WAIT_MS = 120_000;
const USER_AGENT = 'fhir-conformance/0.1';

/** Pacing bucket of paths limited per source address, not per key (the token endpoint: HttpProtocol.perSource). */
const PER_SOURCE_BUCKET = 'per-source';
/** Pacing bucket of other requests without a client role. */
const ANONYMOUS_BUCKET = 'anonymous';

interface PreparedRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  /** A JSON body holding a long string is sent in parts (src/http/json-body.ts). */
  body?: string | Buffer | JsonParts;
  isForm: boolean;
  json?: unknown;
}

/**
 * An answer that is no ground for a verdict on its own: a 5xx that persisted through
 * the spec's retries, or a 5xx to a request sent with `retry: 'none'` (`server-error`,
 * `provoked`), an unprovoked 429 whose Retry-After the run cannot wait out
 * (`retry-after`), a body cut at the size cap (`truncated`).
 */
export interface Unjudgeable {
  kind: 'server-error' | 'retry-after' | 'truncated';
  status: number;
  /** Answers received for the request (1 + retries). */
  attempts: number;
  reason: string;
  /**
   * A 5xx to a request sent with `retry: 'none'` (one that provokes an error on purpose):
   * never retried, so only whether the target answers normally elsewhere decides (src/engine/outcome.ts).
   */
  provoked?: true;
}

/** One answer before the retry rules decide: the same shape as the response handed back. */
type Attempt = HttpResponse;

export class HttpClient {
  readonly stats: HttpStats = { requests: 0, unplanned429: 0, waitsMs: 0, tokenReissues: 0 };
  private readonly agent: Dispatcher;
  private readonly pacer: Pacer;
  private readonly base: URL;
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly protocol: HttpProtocol;
  /** Origin and path of URLs limited per source address besides the protocol's paths (markPerSource). */
  private readonly perSourceUrls = new Set<string>();
  private seq = 0;
  /** Exchanges whose answer is no ground for a verdict on its own, with the reason (see `noVerdict`). */
  private readonly unjudgeable = new Map<string, Unjudgeable>();

  constructor(private readonly opts: HttpClientOptions) {
    this.base = new URL(opts.baseUrl.endsWith('/') ? opts.baseUrl : `${opts.baseUrl}/`);
    const timeout = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    // undici's own timers are the wall-clock bound; the request timeout proper is `targetTimeout` in send().
    // TLS settings and the proxy (if any) apply to every request of the client (src/http/dispatcher.ts).
    this.agent = createDispatcher(opts.network, timeoutCapMs(timeout));
    this.now = opts.now ?? Date.now;
    this.sleep = opts.sleep ?? ((ms, signal) => sleepTimer(ms, undefined, { signal }));
    this.random = opts.random ?? Math.random;
    this.protocol = opts.protocol ?? {};
    this.pacer = new Pacer({
      windowSec: opts.windowSec ?? DEFAULT_WINDOW_SEC,
      defaultCeiling: opts.defaultRatePerMinute ?? DEFAULT_RATE,
      ceilings: opts.ratePerMinute,
      now: this.now,
      maxHoldMs: opts.maxRetryWaitMs ?? DEFAULT_MAX_RETRY_WAIT_MS,
      ...(opts.organization ? { organization: opts.organization } : {}),
      wait: (ms, reason, bucket) => this.wait(ms, reason, bucket === ANONYMOUS_BUCKET || bucket === PER_SOURCE_BUCKET ? undefined : bucket),
    });
  }

  /** The base URL requests are resolved against (absolute, ending in `/`). */
  get baseUrl(): string {
    return this.base.href;
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /** Authenticated requests sent through client-side pacing, per client role. */
  pacedByClient(): Record<string, number> {
    return this.pacer.limitedRequests();
  }

  /** How long a paced request with `client`'s key would wait now, and how many it sent in the current window. */
  keyLoad(client: string): { waitMs: number; inWindow: number } {
    return { waitMs: this.pacer.waitFor(client), inWindow: this.pacer.inWindow(client) };
  }

  /**
   * Sends a request following the retry rules of `opts.retry` (default 'spec'). The bearer
   * token is taken after every wait (pacing, a 429's hold, retry back-off), right before
   * each attempt leaves; an expired-token answer (HttpProtocol.tokenExpired) to a broker token
   * the suite held valid is re-sent once with a re-issued token.
   */
  async request(opts: RequestOptions): Promise<HttpResponse> {
    const prepared = this.prepare(opts);
    const bucket = this.bucketOf(opts, prepared.url);
    // Another piece of work owns the key (an exhaustion episode): wait until it is done with it.
    if (opts.client !== undefined && bucket !== PER_SOURCE_BUCKET) await this.opts.keyGate?.(opts.client);
    const maxRetryWait = this.opts.maxRetryWaitMs ?? DEFAULT_MAX_RETRY_WAIT_MS;
    let token = opts.token;
    let reissued = false;
    let retries429 = 0;
    let retries5xx = 0;
    for (;;) {
      // A token issuance that must wait (the issuance limit) waits before pacing, not between the pacing slot and the send.
      if (token !== undefined) await this.bearer(token);
      await this.pacer.acquire(bucket, opts.client !== undefined && bucket !== PER_SOURCE_BUCKET, opts.urgent, {
        paced: opts.pace !== false,
        earlyRetry: opts.earlyRetry,
      });
      const bearer = await this.bearer(token);
      const attempt = await this.sendOnce(withBearer(prepared, bearer), opts);
      this.pacer.observe(bucket, this.protocol.rateLimit?.(attempt.headers) ?? {});
      const kind = retryKind(attempt.status);
      const retryAfter = this.protocol.retryAfterMs ? this.protocol.retryAfterMs(attempt.headers) : parseRetryAfterMs(attempt.headers['retry-after']);
      // Retry rule 1 for every request of the key, not only this one: nothing leaves before Retry-After.
      if (kind === '429' && retryAfter !== undefined && bucket !== PER_SOURCE_BUCKET) this.pacer.hold(bucket, this.now() + retryAfter);
      if (kind === '429' && !opts.expect429) this.stats.unplanned429++;
      if (!reissued && bearer !== undefined && this.protocol.tokenExpired?.(attempt)) {
        const fresh = await this.opts.tokens?.replaceExpired(bearer);
        if (fresh) {
          reissued = true;
          token = fresh.token;
          this.stats.tokenReissues++;
          this.opts.onTokenReissued?.({ exchange: attempt.exchange, client: opts.client, ageMs: fresh.ageMs, lifetimeMs: fresh.lifetimeMs });
          continue;
        }
      }
      if (opts.retry === 'none' && kind === '5xx') return this.provoked(attempt);
      if (opts.retry === 'none' || kind === 'none') return attempt;

      let delay: number;
      if (kind === '429') {
        if (retries429++ >= MAX_429_RETRIES || retryAfter === undefined) return attempt;
        delay = retryAfter;
      } else {
        if (retries5xx >= MAX_5XX_RETRIES) return this.giveUp(attempt, retries5xx + 1);
        delay = attempt.status === 503 && retryAfter !== undefined ? retryAfter : backoffDelayMs(retries5xx, this.random);
        retries5xx++;
      }
      if (delay > maxRetryWait || delay > this.remainingRunMs()) {
        // Waiting would hang the suite or outlive the run: give the response back
        // (the 429's hold keeps the key quiet until its Retry-After).
        // retries5xx already counts the retry that will not happen.
        if (kind === '5xx') return this.giveUp(attempt, retries5xx);
        const { method, url } = attempt.exchange.request;
        return opts.expect429
          ? attempt
          : this.giveUp(attempt, 1, `the target asked to wait ${seconds(delay)} (Retry-After) before ${method} ${url}, longer than the run allows`);
      }
      await this.wait(delay, kind === '429' ? `429: Retry-After ${seconds(delay)}` : `${attempt.status}: backoff ${seconds(delay)}`, opts.client);
    }
  }

  /** The bearer token for an attempt leaving now: a source's, or a broker token renewed if it would not outlive the send. */
  private async bearer(token: string | TokenSource | undefined): Promise<string | undefined> {
    if (token === undefined) return undefined;
    const value = typeof token === 'function' ? await token() : ((await this.opts.tokens?.current(token)) ?? token);
    registerSecret(value);
    return value;
  }

  /**
   * Why an exchange's answer is no ground for a verdict, if it is not: a 5xx
   * that persisted through the spec's retries (or left no time to retry) or that
   * answered a request sent without retries, an outage; an unprovoked 429 whose Retry-After the run cannot wait out; or a
   * body cut at the size cap, whose rest was never read.
   */
  noVerdict(exchangeId: string): string | undefined {
    return this.unjudgeable.get(exchangeId)?.reason;
  }

  /** The same, with what kind of answer it was (src/engine/outcome.ts decides what a persistent 5xx means). */
  unjudgeableAnswer(exchangeId: string): Unjudgeable | undefined {
    return this.unjudgeable.get(exchangeId);
  }

  /** A 5xx to a request sent without retries: as much a server error as one that outlasted them, judged the same way. */
  private provoked(attempt: Attempt): HttpResponse {
    const { method, url } = attempt.exchange.request;
    this.unjudgeable.set(attempt.exchange.id, {
      kind: 'server-error',
      status: attempt.status,
      attempts: 1,
      provoked: true,
      reason: `the target answered ${attempt.status} to ${method} ${url}, a request sent without retries (server error)`,
    });
    return attempt;
  }

  /** `attempts`: answers received for the request, the last one included. */
  private giveUp(attempt: Attempt, attempts: number, reason?: string): HttpResponse {
    const { method, url } = attempt.exchange.request;
    this.unjudgeable.set(
      attempt.exchange.id,
      reason === undefined
        ? {
            kind: 'server-error',
            status: attempt.status,
            attempts,
            reason: `the target kept answering ${attempt.status} to ${method} ${url} after the spec's retries (server error)`,
          }
        : { kind: 'retry-after', status: attempt.status, attempts, reason },
    );
    return attempt;
  }

  /**
   * Sends once; a connection a keep-alive race closed before any response
   * byte (the request never reached the target) is retried once on a fresh one.
   */
  private async sendOnce(prepared: PreparedRequest, opts: RequestOptions): ReturnType<HttpClient['send']> {
    try {
      return await this.send(prepared, opts);
    } catch (e) {
      if (!(e instanceof ConformanceError) || e.code !== 'ERR_PROTOCOL' || !/^no valid HTTP response/.test(e.message)) throw e;
      return this.send(prepared, opts);
    }
  }

  private remainingRunMs(): number {
    return this.opts.deadline === undefined ? Infinity : this.opts.deadline - this.now();
  }

  /**
   * Marks a URL (any query) as limited per source address, not per key: the token endpoint the target
   * publishes or the config declares, wherever it is (another path, a trailing slash, another origin).
   * Like the protocol's per-source paths it gets its own pacing bucket, never held by a 429, and its
   * exchanges' facts say so (the run-wide rules judge it as the token endpoint).
   */
  markPerSource(url: string): void {
    const u = new URL(url, this.base);
    this.perSourceUrls.add(u.origin + u.pathname);
  }

  private isPerSource(url: URL): boolean {
    return this.perSourceUrls.has(url.origin + url.pathname) || this.protocol.perSource?.(this.servicePath(url)) === true;
  }

  private bucketOf(opts: RequestOptions, url: URL): string {
    if (this.isPerSource(url)) return PER_SOURCE_BUCKET;
    return opts.client ?? ANONYMOUS_BUCKET;
  }

  /** Path of a URL relative to the target's base URL (`/fhir/R4/...`). */
  private servicePath(url: URL): string {
    const basePath = this.base.pathname.replace(/\/$/, '');
    return url.origin === this.base.origin && url.pathname.startsWith(`${basePath}/`) ? url.pathname.slice(basePath.length) : url.pathname;
  }

  /** A wait that reports itself, ends early at the run deadline and on interrupt. */
  private async wait(ms: number, reason: string, client?: string): Promise<void> {
    if (ms <= 0) return;
    this.throwIfStopped();
    if (ms > this.remainingRunMs()) throw new ConformanceError('ERR_DEADLINE', `run deadline (timeouts.runMs) passes before the wait ends (${reason})`);
    this.opts.onWait?.({ reason, ms, client });
    this.stats.waitsMs += ms;
    try {
      await this.sleep(ms, this.opts.signal);
    } catch (e) {
      if (this.opts.signal?.aborted) throw new ConformanceError('ERR_INTERRUPTED', 'interrupted while waiting', { cause: e });
      throw e;
    }
    this.throwIfStopped();
  }

  private throwIfStopped(): void {
    if (this.opts.signal?.aborted) throw new ConformanceError('ERR_INTERRUPTED', 'request interrupted');
    if (this.remainingRunMs() <= 0) throw new ConformanceError('ERR_DEADLINE', 'run deadline (timeouts.runMs) passed');
  }

  private prepare(opts: RequestOptions): PreparedRequest {
    const url = new URL(opts.url.replace(/^\//, ''), this.base);
    // Compressed answers are accepted and decoded (src/http/body.ts): the body judged is the decoded one.
    const headers: Record<string, string> = { 'user-agent': USER_AGENT, 'accept-encoding': ACCEPT_ENCODING };
    for (const [name, value] of Object.entries(opts.headers ?? {})) headers[name.toLowerCase()] = value;
    if (typeof opts.token === 'string') registerSecret(opts.token);
    for (const field of opts.secretFields ?? []) {
      const v = opts.form?.[field];
      if (v !== undefined) registerSecret(v);
    }
    if (opts.form?.client_assertion !== undefined) registerSecret(opts.form.client_assertion);

    let body: string | Buffer | JsonParts | undefined;
    let json: unknown;
    if (opts.form) {
      body = new URLSearchParams(opts.form).toString();
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
    } else if (typeof opts.body === 'string' || Buffer.isBuffer(opts.body)) {
      body = opts.body;
    } else if (opts.body !== undefined) {
      json = opts.body;
      body = jsonBody(opts.body);
      headers['content-type'] ??= 'application/fhir+json';
    }
    return { method: (opts.method ?? (body === undefined ? 'GET' : 'POST')).toUpperCase(), url, headers, body, isForm: !!opts.form, json };
  }

  /** One HTTP exchange: sends, reads the body under the cap, records evidence. */
  private async send(req: PreparedRequest, opts: RequestOptions): Promise<Attempt> {
    this.throwIfStopped();
    const id = `x-${String(++this.seq).padStart(6, '0')}`;
    const timeoutMs = opts.timeoutMs ?? this.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const cap = opts.maxBodyBytes ?? this.opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    const started = this.now();
    const startedAt = new Date(started).toISOString();
    this.stats.requests++;

    const controller = new AbortController();
    let abortCause: AbortCause | undefined;
    const abort = (cause: AbortCause) => {
      abortCause ??= cause;
      controller.abort();
    };
    // The run deadline is wall time; the request timeout counts the target's time, not this process's stalls.
    const capMs = timeoutCapMs(timeoutMs);
    const runLeft = this.remainingRunMs();
    const deadline = runLeft < capMs ? setTimeout(() => abort('deadline'), runLeft) : undefined;
    const timer = targetTimeout(timeoutMs, capMs, () => abort('timeout'));
    const onInterrupt = () => abort('interrupted');
    this.opts.signal?.addEventListener('abort', onInterrupt, { once: true });

    let status: number | undefined;
    let headers: Record<string, string> = {};
    let body: CappedBody | undefined;
    // When the answer arrived: the time its headers (X-RateLimit-Reset...) describe, not after a long upload's evidence is built.
    let answeredAt = started;
    try {
      // Dispatcher.request, as undici's `request(url, {dispatcher})` calls it (src/http/undici.ts).
      const inProcess = this.opts.network?.inProcess;
      if (inProcess !== undefined && req.url.origin === inProcess.origin) {
        // The embedded reference's handler, called in this process (src/http/in-process.ts).
        const answer = await sendInProcess(
          inProcess,
          {
            method: req.method,
            path: `${req.url.pathname}${req.url.search}`,
            headers: req.headers,
            ...(req.body !== undefined ? { body: isParts(req.body) ? Buffer.concat(req.body.chunks) : req.body } : {}),
          },
          controller.signal,
        );
        answeredAt = this.now();
        status = answer.status;
        headers = flattenHeaders(answer.headers);
        // A body not content-coded is capped as it is; a coded one is decoded as the network's is.
        body =
          contentCodings(headers['content-encoding']).length === 0
            ? cappedBuffer(answer.payload, cap)
            : await readCapped(decodedStream(Readable.from([answer.payload]), headers['content-encoding']), cap);
      } else {
        const res = await this.agent.request({
          origin: req.url.origin,
          path: `${req.url.pathname}${req.url.search}`,
          method: req.method as 'GET',
          // A body in parts goes out with its length, as a whole one does.
          headers: isParts(req.body) ? { ...req.headers, 'content-length': String(req.body.bytes) } : req.headers,
          body: isParts(req.body) ? Readable.from(req.body.chunks) : req.body,
          signal: controller.signal,
          headersTimeout: capMs,
          bodyTimeout: capMs,
        });
        answeredAt = this.now();
        status = res.statusCode;
        headers = flattenHeaders(res.headers);
        body = await readCapped(decodedStream(res.body, headers['content-encoding']), cap);
      }
    } catch (e) {
      const partial = e instanceof BodyReadError ? e.partial : undefined;
      const error = toConformanceError(e instanceof BodyReadError ? e.reason : e, {
        url: req.url,
        inBody: status !== undefined,
        abortCause,
        timeoutMs,
        bytesReceived: partial?.bytes ?? 0,
        proxy: proxyFor(this.opts.network?.proxy, req.url),
      });
      const received = status === undefined ? undefined : { status, headers, body: partial, ...decodeBody(partial?.buffer ?? Buffer.alloc(0)) };
      const exchange = this.record(id, started, startedAt, req, opts, received, error.message);
      this.emit(exchange, { ...this.facts(req, opts, answeredAt), complete: false });
      error.exchange ??= exchange;
      throw error;
    } finally {
      timer.clear();
      clearTimeout(deadline);
      this.opts.signal?.removeEventListener('abort', onInterrupt);
    }

    const { text, binary } = decodeBody(body.buffer);
    const json = binary ? undefined : parseJson(text);
    const exchange = this.record(id, started, startedAt, req, opts, { status, headers, body, text, json, binary });
    if (body.truncated)
      this.unjudgeable.set(id, {
        kind: 'truncated',
        status,
        attempts: 1,
        reason: `the response to ${exchange.request.method} ${exchange.request.url} was cut at the ${sizeOf(cap)} body cap`,
      });
    this.emit(exchange, { ...this.facts(req, opts, answeredAt), json, ...(json !== undefined ? { text } : {}), truncated: body.truncated });
    return { status, headers, text, json, bodyTruncated: body.truncated, exchange };
  }

  private facts(req: PreparedRequest, opts: RequestOptions, answeredAt: number): ExchangeFacts {
    return {
      path: this.servicePath(req.url),
      authenticated: req.headers.authorization !== undefined,
      perSource: this.isPerSource(req.url),
      answeredAt,
      truncated: false,
      complete: true,
      skipInvariants: opts.skipInvariants === true,
    };
  }

  private emit(exchange: Exchange, facts: ExchangeFacts): void {
    this.opts.onExchange?.(exchange, facts);
  }

  /** Builds the redacted evidence of one exchange. */
  private record(
    id: string,
    started: number,
    startedAt: string,
    req: PreparedRequest,
    opts: RequestOptions,
    res: { status: number; headers: Record<string, string>; body?: CappedBody; text: string; binary: boolean; json?: unknown } | undefined,
    error?: string,
  ): Exchange {
    const reqHeaders = redactHeaders(req.headers);
    const reqExcerpt = req.body === undefined ? undefined : this.requestExcerpt(req, req.body, opts);
    const url = redactString(req.url.toString());
    const exchange: Exchange = {
      id,
      startedAt,
      durationMs: Math.max(0, this.now() - started),
      request: { method: req.method, url, headers: reqHeaders },
      curl: curlCommand({ method: req.method, url, headers: reqHeaders, body: reqExcerpt }),
    };
    if (opts.client !== undefined) exchange.client = opts.client;
    if (reqExcerpt) {
      exchange.request.body = reqExcerpt.body;
      if (reqExcerpt.truncated) exchange.request.bodyTruncated = true;
    }
    if (res) {
      const excerpt = res.binary
        ? binaryExcerpt(res.body?.bytes ?? 0)
        : bodyExcerpt(res.text, { json: res.json, secretFields: opts.secretFields, alreadyTruncated: res.body?.truncated });
      exchange.response = { status: res.status, headers: redactHeaders(res.headers), bodyBytes: res.body?.bytes ?? 0 };
      if (res.text !== '') exchange.response.body = excerpt.body;
      if (excerpt.truncated) exchange.response.bodyTruncated = true;
    }
    if (error !== undefined) exchange.error = redactString(error);
    return exchange;
  }

  private requestExcerpt(req: PreparedRequest, body: string | Buffer | JsonParts, opts: RequestOptions) {
    if (isParts(body)) return bodyExcerpt(body.text, { json: req.json, secretFields: opts.secretFields });
    if (Buffer.isBuffer(body) && !isText(body)) return binaryExcerpt(body.length);
    const text = typeof body === 'string' ? body : decodeBody(body).text;
    const json = req.json ?? (req.isForm ? undefined : parseJson(text));
    return bodyExcerpt(text, { json, form: req.isForm, secretFields: opts.secretFields });
  }
}

const isParts = (body: PreparedRequest['body']): body is JsonParts => typeof body === 'object' && !Buffer.isBuffer(body);

/** The prepared request with this attempt's bearer token. */
function withBearer(req: PreparedRequest, token: string | undefined): PreparedRequest {
  return token === undefined ? req : { ...req, headers: { ...req.headers, authorization: `Bearer ${token}` } };
}

function sizeOf(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Number((bytes / 1024 / 1024).toFixed(1))} MiB` : `${bytes} bytes`;
}

function flattenHeaders(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(h)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
