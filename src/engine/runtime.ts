/**
 * The run's live state: resolved config, HTTP client, token broker, the target's
 * operation model, the schema validator and the generic-invariant tally. One per
 * run; every check of the run shares it. It publishes exchanges and waits on the
 * run's event bus.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { setMaxListeners } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { HttpClient } from '../http/client.js';
import { brokerOptionsOf, clientKey, TokenBroker } from '../auth/broker.js';
import { networkOf, type ResolvedConfig } from '../config/index.js';
import type { OperationModel } from '../discovery/model.js';
import type { ExchangeFacts, HttpProtocol, HttpResponse } from '../http/types.js';
import { sharedFhirValidator } from '../fhir/index.js';
import { ConformanceError } from '../errors.js';
import type { CheckContext } from './check.js';
import { CheckRecorder } from './context.js';
import type { Exchange, Finding, InvariantTally, KeyRequest, Profile } from './types.js';
import { DETACH_KEY, type RunStats } from './schedule.js';
import { RunEvents } from './events.js';
import type { RecentAnswer } from './outcome.js';
import type { JwksControl } from '../auth/jwks.js';
import { ExchangeCache } from './exchange-cache.js';

/**
 * What the engine must know of the service under test, passed in by the run path
 * (src/service/run.ts holds the Clinical Records FHIR Service's): the engine itself
 * knows no path, scope or catalog code of it.
 */
export interface ServiceBinding {
  /** The service's HTTP protocol (rate-limit headers, Retry-After, the token endpoint, expired-token answers). */
  http: HttpProtocol;
  /** The token endpoint's URL when the config names none: discovered through `http`, else the service's fixed one. */
  tokenUrl(http: HttpClient, baseUrl: string): Promise<string>;
  /**
   * The token-expiry probe: the scopes of its token, and a new URL of the service that answers a valid token (with 404).
   * `scopesFor`: the token's scopes for this target (every surface it publishes, within the main client's declared grant).
   * `label`: the surface `url` is on; `surfaceUrls`: one URL of each other surface the token's scopes read, used with the
   * probe token before its expiry too (a token valid on one surface must be valid on every one).
   */
  expiryProbe: {
    scopes: readonly string[];
    url(): string;
    scopesFor?(model: OperationModel, granted?: readonly string[]): string[];
    label?: string;
    surfaceUrls?(model: OperationModel, scopes: readonly string[]): Array<{ label: string; url: string }>;
  };
  /** Requests that show whether the target answers at all (the outcome policy), in order of preference. */
  controlPaths: readonly string[];
  /** A path of the service itself (not of a token endpoint that may live elsewhere). */
  isServicePath(path: string): boolean;
  /** The path of a resource when the target publishes no read operation for its type. */
  resourcePath(resourceType: string, id: string): string;
}

/** What a run is about: resolved once by the caller, shared by every check. */
export interface RunSpec {
  runId: string;
  profile: Profile;
  /** The target config, resolved once (src/config). */
  config: ResolvedConfig;
  embedded: boolean;
  model: OperationModel;
  /** Epoch ms after which no request is sent. */
  deadline: number;
  /** Checks the profile leaves out beyond what their tags say (the `gate` selection), with why. */
  exclusions?: ReadonlyMap<string, string>;
  /** The suite's hosted client key set (config `jwksHosting`, embedded runs): its control endpoint. */
  jwksControl?: JwksControl;
  startedAt: string;
  /** What the engine must know of the service (paths, protocol): the run path passes src/service's. */
  service: ServiceBinding;
}

export const EXPIRY_PROBE_KEY = 'expiry-probe';
/** `shared` key of the hosted key set's control endpoint (a JwksControl), when the suite hosts one. */
export const JWKS_CONTROL_KEY = 'jwks-control';
export interface ExpiryProbe {
  /** When the token was requested (the earliest the target can have issued it). */
  issuedAt: number;
  /** When the token response arrived (the latest the target can have issued it). */
  receivedAt?: number;
  lifetimeMs: number;
  /** An authenticated URL that answers 404 to a valid token (a random id). */
  probeUrl: string;
  token?: Promise<string | undefined>;
  /** The response to the probe token used shortly before its expiry. */
  beforeExpiry?: Promise<HttpResponse | undefined>;
  /** The surface probeUrl is on (the service binding's label), when known. */
  probeLabel?: string;
  /**
   * The probe token used shortly before its expiry on each other surface, beside probeUrl: each answer, or
   * undefined with why (held past the token's earliest end by a wait on the key, or a network failure).
   */
  beforeExpirySurfaces?: Promise<Array<{ label: string; res?: HttpResponse; why?: string }>>;
  error?: string;
  /** When the probe request left, ms after the token was requested. */
  sentAfterMs?: number;
  /** Set when a wait on the key (a 429's Retry-After) held the probe request until the token may have ended. */
  heldPastExpiry?: { sentAfterMs: number; earliestEndMs: number };
  /** The probe token's scopes (client `main`). */
  scopes: readonly string[];
  /** A new token of the probe's client and scopes, issued once the probe token had expired (renewExpiredProbe). */
  renewed?: Promise<{ token: string; receivedAt: number } | undefined>;
}

/** How long after issuedAt + lifetime the probe token counts as expired (token times are whole seconds; transit). */
export const PROBE_EXPIRED_AFTER_MS = 2000;

/**
 * Issues, once, a new token of the probe's client and scopes when the probe token has expired ("the
 * client requests a new token"): the check of that rule uses it instead of a token request of its own,
 * so work that exhausts token issuance just before (the issuance episode, which calls this first)
 * does not hold that check up for a window. Nothing is issued before the probe token has expired.
 */
export function renewExpiredProbe(ctx: Pick<CheckContext, 'shared' | 'tokens'>): Promise<unknown> {
  const probe = ctx.shared.get(EXPIRY_PROBE_KEY) as ExpiryProbe | undefined;
  if (!probe || probe.renewed || Date.now() < probe.issuedAt + probe.lifetimeMs + PROBE_EXPIRED_AFTER_MS) return Promise.resolve();
  probe.renewed = ctx.tokens.freshToken('main', [...probe.scopes]).then(
    (token) => ({ token, receivedAt: Date.now() }),
    () => undefined,
  );
  return probe.renewed;
}

/** The token issued when the run started (startExpiryProbe), once issued; the check skips when the run has none. */
export async function expiryProbe(ctx: CheckContext): Promise<{ probe: ExpiryProbe; token: string }> {
  const probe = ctx.shared.get(EXPIRY_PROBE_KEY) as ExpiryProbe | undefined;
  if (!probe) ctx.skip('no expiry probe was issued at the start of this run');
  const token = await probe.token;
  if (!token) throw new Error(`the expiry probe's token could not be issued: ${probe.error ?? 'unknown'}`);
  return { probe, token };
}

/** Whole-second token times (up to 1 s) and the probe's transit (500 ms): how much earlier than issuedAt + lifetime a token may end. */
export const PROBE_EXPIRY_SLACK_MS = 1500;

export type { InvariantTally } from './types.js';

export interface WaitInfo {
  reason: string;
  ms: number;
  client?: string;
}

export type { KeyRequest } from './types.js';

/** Requests kept per role in the run's key log (the most recent). */
const KEY_LOG_MAX = 20_000;

/** Appends an exchange's timing and status to a request log, keeping its newest KEY_LOG_MAX entries. */
function appendTimed(log: KeyRequest[], ex: Exchange): void {
  const sentAt = Date.parse(ex.startedAt);
  log.push({ sentAt, receivedAt: sentAt + ex.durationMs, ...(ex.response ? { status: ex.response.status } : {}) });
  if (log.length > KEY_LOG_MAX) log.splice(0, log.length - KEY_LOG_MAX);
}

/** What a runtime knows of the work in progress: the check (or detached episode) whose requests are being made. */
export interface CheckScopeStore {
  recorder: CheckRecorder;
  area?: string;
  check?: string;
  detached?: boolean;
}

/**
 * One AsyncLocalStorage for every runtime of the process. Node 20 copies the store of each enabled
 * AsyncLocalStorage into every async resource it creates (every promise), and never forgets one that is
 * not disabled: with one per runtime, a process that runs hundreds of runs (the fault shards, the test
 * workers) paid for all of them on every promise, about 6 % of a fault shard's CPU after 60 runs and
 * growing with each run. Each runtime reads only the stores it put there.
 */
const CHECK_SCOPE = new AsyncLocalStorage<{ owner: CheckScope; store: CheckScopeStore }>();

/** A runtime's view of CHECK_SCOPE: the store of the current async context when this runtime set it. */
export class CheckScope {
  run<R>(store: CheckScopeStore, fn: () => R): R {
    return CHECK_SCOPE.run({ owner: this, store }, fn);
  }

  getStore(): CheckScopeStore | undefined {
    const current = CHECK_SCOPE.getStore();
    return current?.owner === this ? current.store : undefined;
  }
}

export class Runtime {
  /** The check (or detached episode, by the area of the check that started it) whose requests are being made. */
  readonly scope = new CheckScope();
  /** The expiry probe's use of its token shortly before it expires (startExpiryProbe); cleared on close. */
  private expiryTimer: NodeJS.Timeout | undefined;
  /** Keys owned by work started early (an exhaustion episode), until it settles: other requests on them wait. */
  private readonly keyOwners = new Map<string, Promise<unknown>>();
  /** The run's shared exchanges (src/engine/exchange-cache.ts). */
  readonly exchanges = new ExchangeCache();
  /** Requests to the token endpoint, every attempt. */
  tokenRequests = 0;
  /** Recorders of detached episodes, by the check that started them (their requests count for its area). */
  private readonly episodes = new Map<string, { area: string; recorder: CheckRecorder }>();
  readonly invariants = new Map<string, InvariantTally>();
  readonly shared = new Map<string, unknown>();
  readonly validator = sharedFhirValidator();
  /** Exchanges that got a response (the generic invariants' sample). */
  exchangesSeen = 0;
  /** The run's last answers (the outcome policy asks whether the target answers normally elsewhere). */
  readonly recentAnswers: RecentAnswer[] = [];
  private readonly keyLog = new Map<string, KeyRequest[]>();
  /** When the runtime was made (ms): requests a key's window counts from before then are not in the run's logs. */
  readonly startedAt = Date.now();
  /** Every completed request to the token endpoint, oldest first (the issuance window counts them all). */
  private readonly tokenEndpointLog: KeyRequest[] = [];
  private constructor(
    readonly spec: RunSpec,
    readonly config: ResolvedConfig,
    readonly http: HttpClient,
    readonly tokens: TokenBroker,
    private readonly abort: AbortController,
    readonly events: RunEvents,
    readonly tokenUrl: string,
  ) {}

  /**
   * Gives `roles`' keys to detached work until `until` settles: a request on one of them made
   * outside detached work waits until then (HttpClientOptions.keyGate), so nothing else spends
   * the window the work counts on.
   */
  reserveKeys(roles: readonly string[], until: Promise<unknown>): void {
    const done = until.then(
      () => undefined,
      () => undefined,
    );
    for (const role of roles) {
      const before = this.keyOwners.get(role);
      const owned = before ? Promise.all([before, done]) : done;
      this.keyOwners.set(role, owned);
      void owned.then(() => {
        if (this.keyOwners.get(role) === owned) this.keyOwners.delete(role);
      });
    }
  }

  /** What a request on `role`'s key waits for first: the key's owner, unless the request is the owner's (detached work). */
  keyGate(role: string): Promise<unknown> | undefined {
    return this.scope.getStore()?.detached ? undefined : this.keyOwners.get(role);
  }

  /** Waits of the HTTP layer and the token broker, and those checks announce. */
  onWait(w: WaitInfo): void {
    this.events.emit({ type: 'wait', ...w });
  }

  /**
   * The token-expiry probe: a token issued at the start of the run and used at
   * its end, so checking the lifetime costs no extra wall time.
   */
  startExpiryProbe(): void {
    const issuedAt = Date.now();
    const lifetimeMs = this.config.limits.tokenLifetimeSec * 1000;
    const { expiryProbe } = this.spec.service;
    const granted = this.config.clients.find((c) => c.role === 'main')?.scopes;
    const scopes = expiryProbe.scopesFor?.(this.spec.model, granted) ?? [...expiryProbe.scopes];
    const probe: ExpiryProbe = { issuedAt, lifetimeMs, probeUrl: expiryProbe.url(), scopes, ...(expiryProbe.label ? { probeLabel: expiryProbe.label } : {}) };
    const surfaces = expiryProbe.surfaceUrls?.(this.spec.model, scopes) ?? [];
    probe.token = this.tokens.freshToken('main', [...scopes]).then((t) => {
      probe.receivedAt = Date.now();
      return t;
    });
    probe.token = probe.token.catch((e: unknown) => {
      probe.error = e instanceof Error ? e.message : String(e);
      return undefined;
    });
    // Use the token once shortly before it expires: it must still be accepted.
    const margin = Math.max(3000, lifetimeMs * 0.1);
    const timer = setTimeout(
      () => {
        probe.beforeExpiry = probe
          .token!.then((token) =>
            // Urgent: a pacing wait here could outlast the token it is meant to use before expiry.
            token ? this.http.request({ url: probe.probeUrl, token, client: 'main', urgent: true, headers: { accept: 'application/fhir+json' } }) : undefined,
          )
          .then((res) => {
            // Urgent requests still wait out a 429's Retry-After on the key: one held to the token's end proves nothing.
            // The earliest the token may end: token times are whole seconds (exp = iat + lifetime with iat
            // truncated), so up to 1 s before issuedAt + lifetime, less the request's own transit.
            if (!res) return res;
            const sentAfterMs = Date.parse(res.exchange.startedAt) - issuedAt;
            const earliestEndMs = lifetimeMs - PROBE_EXPIRY_SLACK_MS;
            probe.sentAfterMs = sentAfterMs;
            if (sentAfterMs < earliestEndMs) return res;
            probe.heldPastExpiry = { sentAfterMs, earliestEndMs };
            return undefined;
          })
          .catch((e: unknown) => {
            probe.error = e instanceof Error ? e.message : String(e);
            return undefined;
          });
        // The same token on every other surface, at the same moment (one request each).
        probe.beforeExpirySurfaces = probe.token!.then((token) =>
          Promise.all(
            surfaces.map(async ({ label, url }) => {
              if (!token) return { label, why: 'the probe token was not issued' };
              try {
                const res = await this.http.request({ url, token, client: 'main', urgent: true, headers: { accept: 'application/fhir+json' } });
                const sentAfterMs = Date.parse(res.exchange.startedAt) - issuedAt;
                const earliestEndMs = lifetimeMs - PROBE_EXPIRY_SLACK_MS;
                if (sentAfterMs >= earliestEndMs) return { label, why: `held until ${sentAfterMs} ms after the token was requested, past ${earliestEndMs} ms` };
                return { label, res };
              } catch (e) {
                return { label, why: e instanceof Error ? e.message : String(e) };
              }
            }),
          ),
        );
      },
      Math.max(0, lifetimeMs - margin),
    );
    timer.unref();
    this.expiryTimer = timer;
    this.shared.set(EXPIRY_PROBE_KEY, probe);
  }

  /**
   * The key a paced request without an explicit role uses: `main`, or with a declared
   * organization ceiling one of `spreadRoles`: the one that can send soonest, counting for a key
   * that holds no token for these scopes the wait of its token request (the issuance window);
   * on a tie a key holding a token, then the first in `spreadRoles` order (`main` first). So the
   * keys fill one after another, each scope set costs a token request on as few keys as possible,
   * and identical reads are shared on one key. The pacer keeps each key and the organization
   * within its ceiling whichever is chosen.
   */
  spreadKey(scopes: readonly string[], covering = false): string {
    return soonest(this.keyWaits(scopes, covering));
  }

  /**
   * The key a check that went out with `kept` sends its next request with (scopes `scopes`):
   * `kept` while no other organization key could send sooner (spreadKey's measure); else the one
   * spreadKey chooses. So a check stays on one key until that key's window (or its token's
   * issuance) would hold it back while another key is free. `covering`: the request takes any
   * token of the key whose scopes include these (TokenBroker.covering).
   */
  keepOrSpread(kept: string, scopes: readonly string[], covering = false): string {
    const keys = this.keyWaits(scopes, covering);
    const own = keys.find((k) => k.r === kept);
    return own && !keys.some((k) => k.wait < own.wait) ? kept : soonest(keys);
  }

  /** Each key paced requests for `scopes` may spread over: whether it holds a token for them, and how long it would wait now. */
  private keyWaits(scopes: readonly string[], covering: boolean): KeyWait[] {
    const roles = spreadRoles(this.config, scopes);
    const issuance = roles.length === 1 ? 0 : this.tokens.issuanceWait();
    // A token request spends one of the issuance limit's requests, which every key and check of the
    // run share (20 a minute at the spec's limits): a key without the token counts as waiting one
    // issuance interval more, so a key holding it is kept unless its own wait is longer than that.
    // While a section has the token endpoint to itself (TokenBroker.alone) such a key waits for
    // as long as that lasts (issuanceWait is then Infinity): any key holding the token goes first.
    const tokenCost = (this.config.limits.windowSec * 1000) / Math.max(1, this.config.limits.tokenIssuancePerMinute);
    return roles.map((r) => {
      const held = this.tokens.holds(r, [...scopes], { covering });
      const wait = this.http.keyLoad(r).waitMs;
      return { r, held, wait: held ? wait : Math.max(wait, issuance) + tokenCost };
    });
  }

  /** The keys that carried paced requests, and why (every report's `budget.keys`). */
  keysUsed(): { roles: string[]; reason: string } {
    const paced = this.http.pacedByClient();
    const org = this.config.organization;
    const spread = spreadRoles(this.config, []);
    const used = spread.filter((r) => (paced[r] ?? 0) > 0);
    if (!org)
      return {
        roles: ['main'],
        reason:
          "one key: the config declares no organization ceiling (organization.requestsPerMinute), which the spec does not show, so spreading requests over the organization's keys could exceed it",
      };
    if (spread.length === 1)
      return {
        roles: ['main'],
        reason: `one key: organization ceiling ${org.requestsPerMinute} per window declared, but no extra client declares the scopes it holds (clients[].scopes)`,
      };
    return {
      roles: used.length ? used : ['main'],
      reason: `organization ceiling ${org.requestsPerMinute} per window declared: paced requests spread over ${spread.join(' and ')}, each within its own ceiling and together within the organization's (${Object.entries(
        paced,
      )
        .filter(([r]) => spread.includes(r))
        .map(([r, n]) => `${r} ${n}`)
        .join(', ')} paced)`,
    };
  }

  /** Cumulative traffic of the run so far (the reporter computes the pacing figures from it). */
  runStats(): RunStats {
    const limits = this.config.limits;
    const main = this.config.clients.find((c) => c.role === 'main');
    return {
      requests: this.http.stats.requests,
      unplanned429: this.http.stats.unplanned429,
      pacedByClient: this.http.pacedByClient(),
      tokenRequests: this.tokens.issued,
      tokenReissues: this.http.stats.tokenReissues,
      limits: {
        ...this.pacedRate(),
        perKeyPerWindow: main?.rateLimitPerMinute ?? 60,
        windowSec: limits.windowSec,
        tokenLifetimeSec: limits.tokenLifetimeSec,
        tokenIssuancePerWindow: limits.tokenIssuancePerMinute,
      },
    };
  }

  /** With a declared organization ceiling: the paced rate of the keys spread over (their ceilings, capped by the organization's). */
  private pacedRate(): { pacedPerWindow?: number; usableKeys?: number } {
    const org = this.config.organization;
    if (!org) return {};
    const spread = spreadRoles(this.config, []);
    const ceiling = ratesByRole(this.config);
    const sum = spread.reduce((n, r) => n + (ceiling[r] ?? 60), 0);
    return { pacedPerWindow: Math.min(org.requestsPerMinute, sum), usableKeys: spread.length };
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  static async create(spec: RunSpec, events = new RunEvents()): Promise<Runtime> {
    const config = spec.config;
    let runtime: Runtime | undefined;
    let broker: TokenBroker | undefined;
    const abort = new AbortController();
    // Every request in flight listens for an interrupt; the exhaustion episodes keep a few dozen in flight.
    setMaxListeners(100, abort.signal);
    const http = new HttpClient({
      baseUrl: config.baseUrl,
      timeoutMs: config.timeouts.requestMs,
      deadline: spec.deadline,
      signal: abort.signal,
      windowSec: config.limits.windowSec,
      ratePerMinute: ratesByRole(config),
      ...(config.organization ? { organization: { ceiling: config.organization.requestsPerMinute, members: organizationRoles(config) } } : {}),
      onExchange: (ex, facts) => runtime?.record(ex, facts),
      protocol: spec.service.http,
      onWait: (w) => runtime?.onWait(w),
      // Broker tokens are renewed when they would not outlive the send, and once after an expired-token answer.
      tokens: {
        current: async (token) => broker?.current(token),
        replaceExpired: async (token) => broker?.replaceExpired(token),
      },
      onTokenReissued: (info) => runtime?.tokenReissued(info),
      keyGate: (client) => runtime?.keyGate(client),
      network: networkOf(config),
    });
    const tokenUrl = config.tokenUrl ?? (await spec.service.tokenUrl(http, config.baseUrl));
    const tokens = (broker = new TokenBroker({
      http,
      tokenUrl,
      ...brokerOptionsOf(config),
      // Tokens are taken after every wait; one must still be valid when its request arrives.
      sendMarginMs: config.timeouts.requestMs,
      // Issuance waits end with the run: at its deadline and on interrupt.
      sleep: (ms) => sleepWithinRun(ms, spec.deadline, abort.signal),
      onWait: (w: WaitInfo) => runtime?.onWait(w),
      // Waiting for another check's section is the run's own coordination: the waiting check's budget stops meanwhile.
      onSectionWait: (section) => runtime?.scope.getStore()?.recorder.budget?.pauseFor(section),
      onIssued: ({ client, exchange, expiresAt }) =>
        runtime?.events.emit({ type: 'token-issued', client, exchange: exchange.id, sentAt: Date.parse(exchange.startedAt), expiresAt }),
    }));
    runtime = new Runtime(spec, config, http, tokens, abort, events, tokenUrl);
    const rt = runtime;
    // Detached work belongs to no check: its exchanges count for the area of the check that started it.
    rt.shared.set(DETACH_KEY, <T>(fn: () => Promise<T>) => {
      const { area = 'unattributed', check = 'unattributed' } = rt.scope.getStore() ?? {};
      return rt.scope.run({ recorder: rt.episodeRecorder(check, area), area, check, detached: true }, fn);
    });
    if (spec.jwksControl) rt.shared.set(JWKS_CONTROL_KEY, spec.jwksControl);
    // The quick and gate profiles wait out no token lifetime: no probe token.
    if (spec.profile !== 'quick' && spec.profile !== 'gate') runtime.startExpiryProbe();
    return runtime;
  }

  /**
   * An expired-token answer to a token the suite held valid, re-issued and retried once: recorded on
   * the check that sent it (and counted run-wide in http.stats), as the suite's doing, never the target's.
   */
  private tokenReissued(info: { exchange: Exchange; client?: string; ageMs: number; lifetimeMs: number }): void {
    this.scope.getStore()?.recorder.observations.push({
      key: 'suite.token-reissued',
      value: {
        exchange: info.exchange.id,
        client: info.client,
        tokenAgeS: Math.round(info.ageMs / 100) / 10,
        lifetimeS: Math.round(info.lifetimeMs / 100) / 10,
      },
      note: "the target refused as expired (e.g. 401 HPB-00107) a token the suite held valid; the suite re-issued it and re-sent the request once (the suite's token handling, not a finding against the target)",
    });
  }

  private episodeRecorder(check: string, area: string): CheckRecorder {
    let e = this.episodes.get(check);
    if (!e) this.episodes.set(check, (e = { area, recorder: new CheckRecorder() }));
    return e.recorder;
  }

  /** Requests sent by detached episodes, by the check that started them (with its area). */
  episodeRequests(): Map<string, { area: string; requests: number; tokenRequests: number; mainKeyRequests: number }> {
    return new Map(
      [...this.episodes].map(([check, e]) => [
        check,
        { area: e.area, requests: e.recorder.requests, tokenRequests: e.recorder.tokenRequests, mainKeyRequests: e.recorder.mainKeyRequests },
      ]),
    );
  }

  /** Called by the HTTP client for every exchange; the run-wide rules subscribe to its event (src/service/invariants.ts). */
  private record(ex: Exchange, facts: ExchangeFacts): void {
    this.exchanges.sent(ex.request.method, ex.request.url);
    const token = this.isTokenEndpoint(ex.request.url);
    if (token) this.tokenRequests++;
    this.events.emit({ type: 'exchange', exchange: ex, facts });
    if (ex.response) this.exchangesSeen++;
    this.recentAnswers.push(recentAnswer(ex));
    if (this.recentAnswers.length > RECENT_ANSWERS) this.recentAnswers.shift();
    if (ex.client) this.logKeyRequest(ex.client, ex);
    if (token) appendTimed(this.tokenEndpointLog, ex);
    const store = this.scope.getStore();
    store?.recorder.addExchange(ex);
    if (store && token) store.recorder.tokenRequests++;
    if (store && ex.client === 'main') store.recorder.mainKeyRequests++;
  }

  /** Findings of the run-wide rules on an exchange, into the run's tally (read by checks through ctx.run.invariant). */
  tallyFindings(ex: Exchange, findings: readonly Finding[]): void {
    for (const f of findings) {
      const id = f.requirement ?? 'unknown';
      const t = this.tally(id);
      t.violationCount++;
      if (t.violations.length < 5) t.violations.push({ finding: f, exchange: ex });
    }
  }

  private logKeyRequest(role: string, ex: Exchange): void {
    let log = this.keyLog.get(role);
    if (!log) this.keyLog.set(role, (log = []));
    appendTimed(log, ex);
  }

  /** The run's completed token endpoint requests (every client's, valid or not), oldest first. */
  tokenRequestLog(): readonly KeyRequest[] {
    return this.tokenEndpointLog;
  }

  /** The request went to the run's token endpoint. */
  isTokenEndpoint(url: string): boolean {
    const bare = (u: string) => u.split(/[?#]/)[0]!.replace(/\/$/, '');
    return bare(url) === bare(this.tokenUrl);
  }

  /** The completed requests the run made with `role`'s token, oldest first. */
  keyRequests(role: string): readonly KeyRequest[] {
    return this.keyLog.get(role) ?? [];
  }

  tally(id: string): InvariantTally {
    let t = this.invariants.get(id);
    if (!t) this.invariants.set(id, (t = { violations: [], violationCount: 0 }));
    return t;
  }

  /** Interruptible sleep that never passes the run deadline. */
  sleep(ms: number): Promise<void> {
    return sleepWithinRun(ms, this.spec.deadline, this.signal);
  }

  interrupt(): void {
    this.abort.abort();
  }

  async close(): Promise<void> {
    // A run that ended before its probe's moment sends nothing more, and is not kept alive by the timer
    // until then (a process of many short runs held every run of the last token lifetime).
    clearTimeout(this.expiryTimer);
    await this.http.close();
  }
}

const RECENT_ANSWERS = 50;

function recentAnswer(ex: Exchange): RecentAnswer {
  let path = ex.request.url;
  try {
    const u = new URL(ex.request.url);
    path = `${u.pathname}${u.search}`;
  } catch {
    // keep the URL as recorded
  }
  return { at: Date.parse(ex.startedAt) + ex.durationMs, method: ex.request.method, path, ...(ex.response ? { status: ex.response.status } : {}) };
}

/** Sleeps unless interrupted; a wait the run deadline would cut short fails at once instead. */
async function sleepWithinRun(ms: number, deadline: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) throw new ConformanceError('ERR_INTERRUPTED', 'the run was interrupted');
  if (ms > deadline - Date.now())
    throw new ConformanceError('ERR_DEADLINE', `the run deadline (timeouts.runMs) passes before a wait of ${Math.ceil(ms / 1000)} s ends`);
  try {
    await delay(ms, undefined, { signal });
  } catch {
    throw new ConformanceError('ERR_INTERRUPTED', 'the run was interrupted');
  }
}

/** A key paced requests may spread over, as Runtime.spreadKey weighs it. */
interface KeyWait {
  r: string;
  held: boolean;
  wait: number;
}

/** The key that can send soonest; on a tie one holding a token, then the first (`main` first). */
function soonest(keys: readonly KeyWait[]): string {
  return keys.reduce((a, b) => (b.wait < a.wait || (b.wait === a.wait && b.held && !a.held) ? b : a)).r;
}

/**
 * The roles whose requests count against the main organization's ceiling: every role but
 * `second-org` (another organization), and the client id of every `extra` client after the first
 * (spreadRoles). A `production` key's organization is not declared; counting it can only keep the
 * run further below the ceiling.
 */
export function organizationRoles(config: ResolvedConfig): string[] {
  return [...new Set([...config.clients.map((c) => c.role as string), ...moreExtraKeys(config)])].filter((r) => r !== 'second-org');
}

/** Client ids of the `extra` clients after the first: each is a key of its own (the broker and the pacer know a client by its id too). */
function moreExtraKeys(config: ResolvedConfig): string[] {
  return config.clients
    .filter((c) => c.role === 'extra')
    .slice(1)
    .map((c) => c.clientId);
}

/**
 * The keys paced requests may spread over: `main`, and with a declared organization ceiling
 * each `extra` client declared to hold `scopes` (clients[].scopes): the first by its role
 * `extra`, the others by their client id.
 */
export function spreadRoles(config: ResolvedConfig, scopes: readonly string[]): string[] {
  if (!config.organization) return ['main'];
  const extras = config.clients.filter((c) => c.role === 'extra');
  const holding = extras
    .map((c) => ({ key: clientKey(config.clients, c), holds: c.scopes !== undefined && scopes.every((s) => c.scopes!.includes(s)) }))
    .filter((k) => k.holds)
    .map((k) => k.key);
  return ['main', ...holding];
}

/** Pacing is keyed by role, and by client id for the `extra` clients after the first. */
function ratesByRole(config: ResolvedConfig): Record<string, number> {
  const rates: Record<string, number> = {};
  for (const c of config.clients) rates[c.role] = Math.min(rates[c.role] ?? Infinity, c.rateLimitPerMinute);
  const more = new Set(moreExtraKeys(config));
  for (const c of config.clients) if (more.has(c.clientId)) rates[c.clientId] = c.rateLimitPerMinute;
  return rates;
}
