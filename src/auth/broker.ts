/**
 * The token broker: issues access tokens with signed client assertions, caches them per
 * (client role, scope set), keeps under the issuance limit and honours the endpoint's Retry-After.
 */
import { ConformanceError, SkipSignal } from '../errors.js';
import type { ResolvedClient } from '../config/index.js';
import type { Exchange, HttpResponse, RequestOptions, TokenReissue, TokenRenewal } from '../http/types.js';
import { registerSecret } from '../redact.js';
import { createAssertion } from './assertion.js';
import { IssuanceLimiter } from './issuance-limiter.js';
import { describeTokenFailure, refreshAt, retryAfterMs, tokenExpiry } from './token-response.js';
import type { AssertionOverrides, TokenBrokerApi, TokenRequestOptions } from './types.js';

export interface TokenBrokerOptions {
  /** `markPerSource` (HttpClient's), when there: the token URL is limited per source address, wherever it is. */
  http: { request(opts: RequestOptions): Promise<HttpResponse>; markPerSource?(url: string): void };
  tokenUrl: string;
  clients: ResolvedClient[];
  /** Token requests allowed in any window (spec: 20). */
  issuancePerMinute: number;
  /** Window length, seconds (spec: 60). */
  windowSec: number;
  /** Declared access token lifetime, seconds (spec: 300); used when the response says nothing. */
  tokenLifetimeSec: number;
  /**
   * How long a token handed out must outlive the moment it leaves, so it is still valid when
   * the request reaches the target: the request timeout (default 0). Tokens are taken after
   * every wait (pacing, holds, back-off), so no wait needs to be covered. Capped at a quarter
   * of the token's own lifetime, so short-lived tokens are still reused.
   */
  sendMarginMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  onWait?: (info: { reason: string; ms: number; client?: string }) => void;
  /** A token request (or section) about to wait for another's `alone` section to end: `section` settles then. */
  onSectionWait?: (section: Promise<void>) => void;
  /** A token endpoint answer that issued a token: the client's role, the exchange, when the token expires (epoch ms). No token. */
  onIssued?: (info: { client: string; exchange: Exchange; expiresAt: number }) => void;
  /** The run sends no writes (the read-only profile): a covering token is asked for the client's declared read scopes only. */
  readOnly?: boolean;
}

/** The broker options a target config decides: its clients, its declared issuance limit, window and token lifetime, and a read-only profile. */
export function brokerOptionsOf(config: {
  clients: ResolvedClient[];
  limits: { tokenIssuancePerMinute: number; windowSec: number; tokenLifetimeSec: number };
  profile?: string;
}): Pick<TokenBrokerOptions, 'clients' | 'issuancePerMinute' | 'windowSec' | 'tokenLifetimeSec' | 'readOnly'> {
  return {
    clients: config.clients,
    issuancePerMinute: config.limits.tokenIssuancePerMinute,
    windowSec: config.limits.windowSec,
    tokenLifetimeSec: config.limits.tokenLifetimeSec,
    ...(config.profile === 'read-only' ? { readOnly: true } : {}),
  };
}

/**
 * The scopes a client declares it holds (clients[].scopes), once each; with `readOnly` only those
 * that grant no write (letters `r` and `s` alone): a read-only run never holds a token that could
 * write. Undefined when none remain.
 */
export function declaredScopes(client: { scopes?: readonly string[] }, readOnly = false): string[] | undefined {
  const scopes = [...new Set(client.scopes ?? [])].filter((s) => !readOnly || /\.[rs]+$/.test(s));
  return scopes.length ? scopes : undefined;
}

/** The name the broker and the pacer know a client by: its role for the first client of that role, else its client id. */
export function clientKey(clients: readonly ResolvedClient[], client: Pick<ResolvedClient, 'role' | 'clientId'>): string {
  return clients.find((c) => c.role === client.role)?.clientId === client.clientId ? client.role : client.clientId;
}

export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** Token requests per `token()`/`freshToken()` call when the endpoint answers 429 (each waits Retry-After). */
const MAX_ISSUE_ATTEMPTS = 3;

interface CachedToken {
  token: string;
  refreshAt: number;
  /** When the token request was sent (the lifetime started no earlier), epoch ms. */
  issuedAt: number;
  expiresAt: number;
}

/** A token `token()` handed out, by its value (so a check's copy can be renewed). */
interface Handed extends CachedToken {
  key: string;
  role: string;
  scopes: string[];
  /** Issued because the target refused its predecessor as expired. */
  afterExpiry?: boolean;
}

/** Share of a token's lifetime the send margin may take at most. */
const MAX_SEND_MARGIN_SHARE = 0.25;

/** When X-RateLimit-Remaining says nothing is left: X-RateLimit-Reset in ms; else undefined. */
function exhaustedUntilMs(headers: Record<string, string>): number | undefined {
  const remaining = Number(headers['x-ratelimit-remaining']);
  const reset = Number(headers['x-ratelimit-reset']);
  return headers['x-ratelimit-remaining'] !== undefined && remaining <= 0 && Number.isInteger(reset) ? reset * 1000 : undefined;
}

function scopeKey(role: string, scopes: string[]): string {
  return `${role}\n${[...new Set(scopes)].sort().join(' ')}`;
}

/** Whether a `scopeKey` is the role's, for a scope set that includes every one of `scopes`. */
function keyCovers(key: string, role: string, scopes: readonly string[]): boolean {
  const [keyRole, list = ''] = key.split('\n');
  const held = new Set(list.split(' '));
  return keyRole === role && scopes.every((s) => held.has(s));
}

export class TokenBroker implements TokenBrokerApi, TokenRenewal {
  private readonly limiter: IssuanceLimiter;
  private readonly now: () => number;
  private readonly cache = new Map<string, CachedToken>();
  private readonly handed = new Map<string, Handed>();
  /** Roles for which a re-issued token was refused as expired too: re-issuing does not help. */
  private readonly futile = new Set<string>();
  /** Roles whose token for all their declared scopes was not issued: covering tokens are asked for exactly. */
  private readonly wideRefused = new Set<string>();
  private readonly pending = new Map<string, Promise<string>>();
  private sent = 0;
  /** Token requests on the wire now (those of an `alone` section excepted). */
  private inFlight = 0;
  private readonly idleWaiters: Array<() => void> = [];
  /** Set while an `alone` section runs: every other token request waits for it. */
  private section?: Promise<void>;

  constructor(private readonly opts: TokenBrokerOptions) {
    // Wherever the target publishes it (config, smart-configuration): paced per source address, judged as the token endpoint.
    opts.http.markPerSource?.(opts.tokenUrl);
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

  /** Token requests that could be sent now without waiting for the issuance window (0 during an `alone` section). */
  issuanceRoom(): number {
    return this.section ? 0 : this.limiter.room();
  }

  /**
   * How long a token request would wait now for the issuance window (0 when it has room). During
   * an `alone` section: Infinity (its length is not known, and it may outlast a check's budget).
   */
  issuanceWait(): number {
    return this.section ? Number.POSITIVE_INFINITY : this.limiter.waitMs();
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
    if (cached && this.usable(cached, opts.validForMs ?? 0)) return cached.token;
    let pending = this.pending.get(key);
    if (!pending) {
      pending = this.issue(role, scopes)
        .then((entry) => {
          this.cache.set(key, entry);
          this.handed.set(entry.token, { ...entry, key, role, scopes: [...scopes] });
          return entry.token;
        })
        .finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
    }
    return pending;
  }

  /**
   * A usable token the role already holds (or has on its way) for a set of scopes that includes
   * these; else a token for all the scopes the client declares it holds (clients[].scopes; its read
   * scopes in a read-only run), when they include these, so the next covering request of the role costs no token request either;
   * else (none declared, or the target did not issue that one) `token(role, scopes)`. For a
   * request whose point is not its token's exact scopes: it costs no token request when a wider
   * token is held, so it does not wait for an issuance window another check exhausted.
   */
  covering(role: string, scopes: string[], opts: { validForMs?: number } = {}): Promise<string> {
    const held = this.coveringHeld(role, scopes, opts.validForMs ?? 0);
    if (held) return held;
    const declared = this.wideRefused.has(role) ? undefined : declaredScopes(this.client(role), this.opts.readOnly);
    if (declared && scopes.every((s) => declared.includes(s))) {
      return this.token(role, declared, opts).catch(() => {
        this.wideRefused.add(role);
        return this.token(role, scopes, opts);
      });
    }
    return this.token(role, scopes, opts);
  }

  /**
   * Whether `token(role, scopes)` (`covering`: `covering(role, scopes)`) would answer without a
   * token request (a usable token is held, or one is on its way).
   */
  holds(role: string, scopes: string[], opts: { covering?: boolean } = {}): boolean {
    if (opts.covering) return this.coveringHeld(role, scopes, 0) !== undefined;
    const key = scopeKey(role, scopes);
    const cached = this.cache.get(key);
    return (cached !== undefined && this.usable(cached, 0)) || this.pending.has(key);
  }

  /** The newest usable token of the role whose scopes include these, else one on its way; undefined when neither. */
  private coveringHeld(role: string, scopes: string[], validForMs: number): Promise<string> | undefined {
    let best: CachedToken | undefined;
    for (const [key, entry] of this.cache) {
      if (keyCovers(key, role, scopes) && this.usable(entry, validForMs) && (!best || entry.refreshAt > best.refreshAt)) best = entry;
    }
    if (best) return Promise.resolve(best.token);
    for (const [key, pending] of this.pending) if (keyCovers(key, role, scopes)) return pending;
    return undefined;
  }

  /** A token `token()` handed out, while it outlives its refresh point by the send margin (and `validForMs`). */
  private usable(entry: CachedToken, validForMs: number): boolean {
    const margin = Math.min(this.opts.sendMarginMs ?? 0, (entry.expiresAt - entry.issuedAt) * MAX_SEND_MARGIN_SHARE);
    return this.now() + Math.max(validForMs, margin) < entry.refreshAt;
  }

  async current(token: string): Promise<string | undefined> {
    const entry = this.handed.get(token);
    if (!entry) return undefined;
    return this.usable(entry, 0) ? token : this.token(entry.role, entry.scopes);
  }

  async replaceExpired(token: string): Promise<TokenReissue | undefined> {
    const entry = this.handed.get(token);
    if (!entry || this.futile.has(entry.role)) return undefined;
    const lifetimeMs = entry.expiresAt - entry.issuedAt;
    const ageMs = this.now() - entry.issuedAt;
    // A replacement refused before half its lifetime: the target refuses fresh tokens; let the 401 show.
    if (entry.afterExpiry && ageMs < lifetimeMs / 2) {
      this.futile.add(entry.role);
      return undefined;
    }
    if (this.cache.get(entry.key)?.token === token) this.cache.delete(entry.key);
    const fresh = await this.token(entry.role, entry.scopes);
    const handed = this.handed.get(fresh);
    if (handed && fresh !== token) handed.afterExpiry = true;
    return fresh === token ? undefined : { token: fresh, ageMs, lifetimeMs };
  }

  /** The client role and scopes of a token `token()` handed out; undefined for any other token. */
  grantOf(token: string): { role: string; scopes: string[] } | undefined {
    const entry = this.handed.get(token);
    return entry ? { role: entry.role, scopes: [...entry.scopes] } : undefined;
  }

  /**
   * Caches the token a raw `request` for (role, scopes) obtained (the preflight's probe of each
   * client), as if `token()` had issued it, so the run does not spend another token request on
   * it. Nothing happens when the answer carries no token or the role already has one for these scopes.
   * `sentElsewhere`: the request went out through another broker (discovery's), so this one's
   * issuance limiter counts it too (the target limits issuance per source address).
   */
  adopt(role: string, scopes: string[], res: HttpResponse, opts: { sentElsewhere?: boolean } = {}): void {
    if (opts.sentElsewhere) {
      this.limiter.record(this.now());
      this.sent++;
    }
    const key = scopeKey(role, scopes);
    if (this.cache.has(key) || this.pending.has(key)) return;
    const entry = this.entryOf(res);
    if (!entry) return;
    this.cache.set(key, entry);
    this.handed.set(entry.token, { ...entry, key, role, scopes: [...scopes] });
  }

  /**
   * Re-issues now each role's token for all its declared scopes (the one `covering` asks for) that
   * was issued before but would not stay usable `horizonMs` more, and answers how many it renewed.
   * For work about to take the token endpoint to itself for that long (the issuance section, which
   * ends with the endpoint exhausted): a check that needs the role's token after that work's start
   * finds one instead of waiting for the work and the endpoint's window. A refused renewal keeps
   * the old token (it is asked again when needed, as before).
   */
  async renewCovering(horizonMs: number): Promise<number> {
    const due = [...new Set(this.opts.clients.map((c) => c.role))].flatMap((role) => {
      const declared = this.wideRefused.has(role) ? undefined : declaredScopes(this.client(role), this.opts.readOnly);
      const entry = declared && this.cache.get(scopeKey(role, declared));
      return declared && entry && !this.usable(entry, horizonMs) ? [{ role, declared }] : [];
    });
    await Promise.all(due.map(({ role, declared }) => this.token(role, declared, { validForMs: horizonMs }).catch(() => undefined)));
    return due.length;
  }

  async freshToken(role: string, scopes: string[]): Promise<string> {
    return (await this.issue(role, scopes)).token;
  }

  async request(role: string, opts: TokenRequestOptions = {}): Promise<HttpResponse> {
    while (this.section) {
      this.opts.onSectionWait?.(this.section);
      await this.section;
    }
    this.inFlight++;
    try {
      return await this.send(role, opts);
    } finally {
      if (--this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  /**
   * Runs `fn` with the token endpoint to itself: it starts once no other token request is in
   * flight, and every token request that is not `fn`'s own (its `request` argument) waits until
   * it ends. For a check that changes what every token request depends on for a moment (the
   * client key set made unreachable): no other check's token request meets that moment.
   */
  async alone<T>(fn: (request: (role: string, opts?: TokenRequestOptions) => Promise<HttpResponse>) => Promise<T>): Promise<T> {
    while (this.section) {
      this.opts.onSectionWait?.(this.section);
      await this.section;
    }
    let end!: () => void;
    this.section = new Promise<void>((r) => {
      end = r;
    });
    try {
      while (this.inFlight > 0) await new Promise<void>((r) => this.idleWaiters.push(r));
      return await fn((role, opts = {}) => this.send(role, opts));
    } finally {
      this.section = undefined;
      end();
    }
  }

  private async send(role: string, opts: TokenRequestOptions): Promise<HttpResponse> {
    const client = this.client(role);
    const release = await this.limiter.acquire(opts.pace !== false);
    try {
      // Signed after any wait, so the assertion is fresh when it leaves.
      const assertion = await createAssertion(client, this.opts.tokenUrl, opts.assertion, this.now());
      await opts.beforeSend?.();
      this.sent++;
      const payload = this.payload(assertion, opts);
      const res = await this.opts.http.request({
        method: 'POST',
        url: this.opts.tokenUrl,
        ...payload,
        ...(opts.headers ? { headers: { ...payload.headers, ...opts.headers } } : {}),
        secretFields: ['client_assertion'],
        expect429: opts.expect429,
        ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
        // Paced by the issuance limiter above, before the assertion is signed: a wait in the
        // HTTP layer would come after the signature and could outlast the assertion.
        pace: false,
        // Each send must pass the issuance limiter: the HTTP layer must not resend on its own.
        retry: 'none',
      });
      // By role: the preflight asks by client id.
      this.reportIssued(client.role, res);
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

  /** Tells `onIssued` of a token the answer carries (the run timeline draws its lifetime). */
  private reportIssued(role: string, res: HttpResponse): void {
    if (!this.opts.onIssued) return;
    const body = (res.json ?? {}) as Record<string, unknown>;
    const token = body.access_token;
    if (!(res.status >= 200 && res.status < 300 && typeof token === 'string' && token !== '')) return;
    const issuedAt = Date.parse(res.exchange.startedAt);
    this.opts.onIssued({ client: role, exchange: res.exchange, expiresAt: tokenExpiry(body, token, issuedAt, this.opts.tokenLifetimeSec) });
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

  /** The token of a 2xx token response with an access_token, timed from the exchange; undefined otherwise. */
  private entryOf(res: HttpResponse): CachedToken | undefined {
    // The lifetime started when the target got the request, no earlier than it was sent.
    const issuedAt = Date.parse(res.exchange.startedAt);
    const body = (res.json ?? {}) as Record<string, unknown>;
    const token = body.access_token;
    if (!(res.status >= 200 && res.status < 300 && typeof token === 'string' && token !== '')) return undefined;
    registerSecret(token);
    const expiresAt = tokenExpiry(body, token, issuedAt, this.opts.tokenLifetimeSec);
    return { token, refreshAt: refreshAt(expiresAt, issuedAt), issuedAt, expiresAt };
  }

  private async issue(role: string, scopes: string[]): Promise<CachedToken> {
    for (let attempt = 1; ; attempt++) {
      const res = await this.request(role, { scopes });
      const receivedAt = this.now();
      // The lifetime started when the target got the request, no earlier than it was sent.
      const issuedAt = receivedAt - Math.max(0, res.exchange.durationMs);
      const body = (res.json ?? {}) as Record<string, unknown>;
      const token = body.access_token;
      if (res.status >= 200 && res.status < 300 && typeof token === 'string' && token !== '') {
        registerSecret(token);
        const expiresAt = tokenExpiry(body, token, issuedAt, this.opts.tokenLifetimeSec);
        return { token, refreshAt: refreshAt(expiresAt, issuedAt), issuedAt, expiresAt };
      }
      if (res.status !== 429 || attempt >= MAX_ISSUE_ATTEMPTS) {
        throw new ConformanceError('ERR_TOKEN', `token request for client "${role}" failed: ${describeTokenFailure(res)}`);
      }
    }
  }
}
