/**
 * The token broker: issues access tokens with signed client assertions, caches them per
 * (client role, scope set), keeps under the issuance limit and honours the endpoint's Retry-After.
 */
import { ConformanceError, SkipSignal } from '../errors.js';
import type { ResolvedClient } from '../config/index.js';
import type { HttpResponse, RequestOptions } from '../http/types.js';
import { registerSecret } from '../redact.js';
import { createAssertion } from './assertion.js';
import { IssuanceLimiter } from './issuance-limiter.js';
import { describeTokenFailure, refreshAt, retryAfterMs, tokenExpiry } from './token-response.js';
import type { AssertionOverrides, TokenBrokerApi, TokenRequestOptions } from './types.js';

export interface TokenBrokerOptions {
  http: { request(opts: RequestOptions): Promise<HttpResponse> };
  tokenUrl: string;
  clients: ResolvedClient[];
  /** Token requests allowed in any window (spec: 20). */
  issuancePerMinute: number;
  /** Window length, seconds (spec: 60). */
  windowSec: number;
  /** Declared access token lifetime, seconds (spec: 300); used when the response says nothing. */
  tokenLifetimeSec: number;
  /**
   * How long a request may wait for client-side pacing after it got its token: a cached
   * token is handed out only while it outlives that wait (default 0).
   */
  pacingSlackMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  onWait?: (info: { reason: string; ms: number; client?: string }) => void;
}

export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** Token requests per `token()`/`freshToken()` call when the endpoint answers 429 (each waits Retry-After). */
const MAX_ISSUE_ATTEMPTS = 3;

interface CachedToken {
  token: string;
  refreshAt: number;
}

/** When X-RateLimit-Remaining says nothing is left: X-RateLimit-Reset in ms; else undefined. */
function exhaustedUntilMs(headers: Record<string, string>): number | undefined {
  const remaining = Number(headers['x-ratelimit-remaining']);
  const reset = Number(headers['x-ratelimit-reset']);
  return headers['x-ratelimit-remaining'] !== undefined && remaining <= 0 && Number.isInteger(reset) ? reset * 1000 : undefined;
}

function scopeKey(role: string, scopes: string[]): string {
  return `${role}\n${[...new Set(scopes)].sort().join(' ')}`;
}

export class TokenBroker implements TokenBrokerApi {
  private readonly limiter: IssuanceLimiter;
  private readonly now: () => number;
  private readonly cache = new Map<string, CachedToken>();
  private readonly pending = new Map<string, Promise<string>>();
  private sent = 0;

  constructor(private readonly opts: TokenBrokerOptions) {
    this.now = opts.now ?? Date.now;
    const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    this.limiter = new IssuanceLimiter({
      limit: opts.issuancePerMinute,
      windowMs: opts.windowSec * 1000,
      now: this.now,
      sleep,
      onWait: opts.onWait,
    });
  }

  get issued(): number {
    return this.sent;
  }

  /** The configured client for a role (or client id); a missing role skips the check that needs it. */
  client(role: string): ResolvedClient {
    const client = this.opts.clients.find((c) => c.role === role) ?? this.opts.clients.find((c) => c.clientId === role);
    if (!client) throw new SkipSignal(`no client with role "${role}" in the config`);
    return client;
  }

  assertion(role: string, overrides?: AssertionOverrides): Promise<string> {
    return createAssertion(this.client(role), this.opts.tokenUrl, overrides, this.now());
  }

  async token(role: string, scopes: string[], opts: { validForMs?: number } = {}): Promise<string> {
    const key = scopeKey(role, scopes);
    const cached = this.cache.get(key);
    if (cached && this.now() + Math.max(opts.validForMs ?? 0, this.opts.pacingSlackMs ?? 0) < cached.refreshAt) return cached.token;
    let pending = this.pending.get(key);
    if (!pending) {
      pending = this.issue(role, scopes)
        .then((entry) => {
          this.cache.set(key, entry);
          return entry.token;
        })
        .finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
    }
    return pending;
  }

  async freshToken(role: string, scopes: string[]): Promise<string> {
    return (await this.issue(role, scopes)).token;
  }

  async request(role: string, opts: TokenRequestOptions = {}): Promise<HttpResponse> {
    const client = this.client(role);
    const release = await this.limiter.acquire(opts.pace !== false);
    try {
      // Signed after any wait, so the assertion is fresh when it leaves.
      const assertion = await createAssertion(client, this.opts.tokenUrl, opts.assertion, this.now());
      this.sent++;
      const res = await this.opts.http.request({
        method: 'POST',
        url: this.opts.tokenUrl,
        ...this.payload(assertion, opts),
        secretFields: ['client_assertion'],
        expect429: opts.expect429,
        ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
        // Paced by the issuance limiter above, before the assertion is signed: a wait in the
        // HTTP layer would come after the signature and could outlast the assertion.
        pace: false,
        // Each send must pass the issuance limiter: the HTTP layer must not resend on its own.
        retry: 'none',
      });
      if (res.status === 429) {
        const wait = retryAfterMs(res.headers['retry-after'], this.now()) ?? this.opts.windowSec * 1000;
        this.limiter.blockUntil(this.now() + wait);
      }
      // The endpoint's own count (other clients from this address, a window aligned elsewhere).
      const exhaustedUntil = exhaustedUntilMs(res.headers);
      if (exhaustedUntil !== undefined) this.limiter.blockUntil(Math.min(exhaustedUntil, this.now() + this.opts.windowSec * 1000 + 5000));
      return res;
    } finally {
      release();
    }
  }

  private payload(assertion: string, opts: TokenRequestOptions): Pick<RequestOptions, 'form' | 'body' | 'headers'> {
    if (opts.rawBody) return { body: opts.rawBody.body, headers: { 'content-type': opts.rawBody.contentType } };
    const fields: Record<string, string | null | undefined> = {
      grant_type: 'client_credentials',
      client_assertion_type: CLIENT_ASSERTION_TYPE,
      client_assertion: assertion,
      scope: opts.scopes?.length ? opts.scopes.join(' ') : undefined,
      ...opts.form,
    };
    const form: Record<string, string> = {};
    for (const [name, value] of Object.entries(fields)) if (typeof value === 'string') form[name] = value;
    return { form };
  }

  private async issue(role: string, scopes: string[]): Promise<CachedToken> {
    for (let attempt = 1; ; attempt++) {
      const res = await this.request(role, { scopes });
      const receivedAt = this.now();
      const body = (res.json ?? {}) as Record<string, unknown>;
      const token = body.access_token;
      if (res.status >= 200 && res.status < 300 && typeof token === 'string' && token !== '') {
        registerSecret(token);
        const expiresAt = tokenExpiry(body, token, receivedAt, this.opts.tokenLifetimeSec);
        return { token, refreshAt: refreshAt(expiresAt, receivedAt) };
      }
      if (res.status !== 429 || attempt >= MAX_ISSUE_ATTEMPTS) {
        throw new ConformanceError('ERR_TOKEN', `token request for client "${role}" failed: ${describeTokenFailure(res)}`);
      }
    }
  }
}
