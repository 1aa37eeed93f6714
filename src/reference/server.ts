/**
 * HTTP core of the reference server on node:http: routing, authentication,
 * rate limits, origin and scope checks, body handling, errors and the
 * headers every response carries. Resource behaviour lives in the handlers
 * from src/reference/resources/ (injected, so tests can use a stub).
 */
import { decodeJwt } from 'jose';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { HandlerRequest, HandlerResponse, InProcessTarget } from '../http/in-process.js';
import type { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { FIXTURES_DIR } from '../paths.js';
import type { OperationDef } from '../service/api.js';
import { Authority, configureClients, hasScope, loadClients, withMainKeyAlg } from './auth.js';
import { toClientRecord } from './clients.js';
import type { ClientRecord } from './auth.js';
import {
  capabilityStatement,
  extraScopes,
  jwks,
  OBSERVATION_PROFILE_PATH,
  observationProfile,
  openApiDocument,
  operationDefinition,
  OPERATION_DEFINITION_PATH,
  operationPath,
  servedOperations,
  smartConfiguration,
} from './discovery.js';
import type { DiscoveryInit } from './discovery.js';
import { resolveFaults } from './faults/index.js';
import { scopeOverride } from './faults/scopes.js';
import { bodyLeniency } from './faults/generated.js';
import { keyWindowKey, keyWindowLog } from './faults/rate-limit.js';
import { issuanceCounter, issuanceKey } from './faults/issuance-limit.js';
import type { FaultDef, FaultResponse } from './faults/index.js';
import { catalogError, operationOutcome, plainError, styledError } from './outcome.js';
import { type FixedWindowCounter, SlidingWindowLog, rateLimitHeaders, retryAfterSeconds } from './rate-limit.js';
import type { RateDecision } from './rate-limit.js';
import type { ResourceInit, Resources } from './resources/index.js';
import { documentBodyCap } from './resources/documents.js';
import { uploadBodyCap } from './resources/upload.js';
import { FhirError, resolveLimits, resolveModes } from './types.js';
import { AuditLog, returnedCount, type AuditRecord } from './audit.js';
import type { Caller, ReferenceLimits, ReferenceModes, ReferenceOptions } from './types.js';
import { renderBody } from './rendering.js';

export const FHIR_JSON = 'application/fhir+json; charset=utf-8';
const PLAIN_JSON = 'application/json; charset=utf-8';
/** Reference choice: anonymous requests (discovery, 401s, 404s) per IP and window. */
export const ANONYMOUS_PER_WINDOW = 600;
const DEFAULT_FIXTURES_DIR = resolve(FIXTURES_DIR, 'reference');
const CORRELATION_ID_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;
/**
 * A refused oversized body is still read and discarded up to this many bytes, so the
 * client, which may still be sending when the 413 goes out, reads the response instead of
 * meeting a reset connection (RFC 9112 section 9.6). Beyond it the connection is closed.
 */
const DRAIN_LIMIT_BYTES = 256 * 1024 * 1024;
const CLOSE = { Connection: 'close' };
/** The 413's headers: keep the connection (the rest of the body is drained) unless it is too large to drain. */
/** Whether Accept-Encoding lists gzip (or `*`) with a non-zero q. */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  const items = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',');
  return items.some((item) => {
    const [coding, ...params] = item.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    return (coding === 'gzip' || coding === 'x-gzip' || coding === '*') && (q === undefined || Number(q.slice(2)) > 0);
  });
}

const afterRefusal = (req: HandlerRequest): Record<string, string> => (Number(req.headers['content-length']) > DRAIN_LIMIT_BYTES ? CLOSE : {});

export type CreateResources = (init: ResourceInit) => Promise<Resources>;

export interface ReferenceServer {
  url: string;
  port: number;
  close(): Promise<void>;
  /** The server as a client in this process reaches it without connecting: its handler (src/http/in-process.ts). */
  inProcess: InProcessTarget;
  options: { limits: ReferenceLimits; modes: ReferenceModes; faults: string[] };
  fixtureIds: Record<string, string>;
  /** A target config for the suite (absolute key paths). */
  targetConfig(): TargetConfig;
  resources: Resources;
  /** The audit trail so far (not part of the public API, as the spec says). */
  audit(): readonly AuditRecord[];
  /** What the per-key and per-organization windows counted so far (not part of the public API): for benchmarks. */
  rateCounts(): RateCounts;
}

/** A window's ceiling, the most requests it held at once, and the requests it refused. */
export interface RateCount {
  limit: number;
  peak: number;
  refused: number;
}

export interface RateCounts {
  keys: Record<string, RateCount>;
  organizations: Record<string, RateCount>;
}

export interface TargetConfig {
  baseUrl: string;
  tokenUrl: string;
  clients: Array<{
    role: string;
    clientId: string;
    alg: string;
    kid: string;
    keyKind: 'sandbox' | 'production';
    scopes: string[];
    privateKey: { file: string };
  }>;
  fixtures: Record<string, string>;
}

type RouteKind = 'token' | 'openapi' | 'metadata' | 'definition' | 'profile' | 'smart' | 'jwks' | 'fhir';
interface Route {
  kind: RouteKind;
  method: string;
  pattern: RegExp;
  op?: OperationDef;
  release?: 'R4' | 'R5';
}
interface Reply {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}
/** Per-request state the error path needs too. */
interface Exchange {
  ip: string;
  now: number;
  headers: Record<string, string>;
  op?: OperationDef;
  caller?: Caller;
  resourceId?: string;
  query?: URLSearchParams;
}

function templatePattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace('{id}', '([^/]+)');
  return new RegExp(`^${escaped}$`);
}

function buildRoutes(modes: ReferenceModes): Route[] {
  const fixed = (kind: RouteKind, method: string, path: string, release?: 'R4' | 'R5'): Route => ({ kind, method, pattern: templatePattern(path), release });
  return [
    fixed('token', 'POST', '/auth/token'),
    ...(modes.tokenEndpointForm === 'trailing-slash' ? [fixed('token', 'POST', '/auth/token/')] : []),
    fixed('openapi', 'GET', '/openapi.json'),
    fixed('metadata', 'GET', '/fhir/R4/metadata', 'R4'),
    fixed('metadata', 'GET', '/fhir/R5/metadata', 'R5'),
    fixed('definition', 'GET', OPERATION_DEFINITION_PATH, 'R5'),
    ...(modes.r4Observation === 'writes' ? [fixed('profile', 'GET', OBSERVATION_PROFILE_PATH, 'R4')] : []),
    fixed('smart', 'GET', '/fhir/.well-known/smart-configuration'),
    fixed('jwks', 'GET', '/fhir/.well-known/jwks.json'),
    ...servedOperations(modes).map((op): Route => ({ kind: 'fhir', method: op.method, pattern: templatePattern(operationPath(op, modes)), op })),
  ];
}

function mediaType(headers: IncomingHttpHeaders): string {
  return (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

function pickCorrelationId(value: string | string[] | undefined): string {
  return typeof value === 'string' && CORRELATION_ID_PATTERN.test(value) ? value : randomUUID();
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Discovery documents are kept serialized; faults see them parsed (a fresh copy). */
function parsedBody(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

/** Mode `tokenRequestParsing: lenient` only: the string members of a JSON object read as form fields. */
function jsonAsForm(text: string): URLSearchParams {
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    return new URLSearchParams(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return new URLSearchParams();
  }
}

/** Reads and discards the rest of a refused body (see DRAIN_LIMIT_BYTES); closes the connection past the limit. */
function discardRest(req: HandlerRequest, alreadyRead: number): void {
  let drained = alreadyRead;
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_LIMIT_BYTES) {
      req.off('data', onData);
      req.socket.destroy();
    }
  };
  req.on('data', onData);
  req.on('error', () => undefined);
  req.resume();
}

/** Reads a request body up to `max` bytes; beyond that it throws `tooLarge` and discards the rest. */
function readBody(req: HandlerRequest, max: number, tooLarge: () => FhirError): Promise<Buffer> {
  if (Number(req.headers['content-length']) > max) {
    discardRest(req, 0);
    return Promise.reject(tooLarge());
  }
  return new Promise((resolvePromise, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        req.off('data', onData);
        discardRest(req, size);
        reject(tooLarge());
      } else {
        chunks.push(chunk);
      }
    };
    req.on('data', onData);
    req.on('end', () => resolvePromise(Buffer.concat(chunks)));
    req.on('error', reject);
    req.on('close', () => reject(plainError(400, 'request body incomplete')));
  });
}

class HttpCore {
  private readonly audit = new AuditLog();
  private readonly routes: Route[];
  private readonly keyWindows: SlidingWindowLog;
  /** What the per-key and per-organization windows counted (ReferenceServer.rateCounts). */
  readonly counts: RateCounts = { keys: {}, organizations: {} };
  private readonly orgWindows: SlidingWindowLog;
  private readonly anonymousWindows: SlidingWindowLog;
  /** Fault rate-limit-remaining-per-surface only: the windows its headers count (per key, release and resource type). */
  private readonly surfaceWindows: SlidingWindowLog;
  private readonly issuance: FixedWindowCounter;
  private readonly openApi: string;
  private readonly capability: Record<'R4' | 'R5', string>;
  private readonly smart: string;
  private readonly jwks: string;

  constructor(
    private readonly cfg: {
      limits: ReferenceLimits;
      modes: ReferenceModes;
      faults: ReadonlySet<string>;
      faultDefs: FaultDef[];
      now: () => number;
      authority: Authority;
      resources: Resources;
      discovery: DiscoveryInit;
      baseUrl: string;
    },
  ) {
    const { limits, modes } = cfg;
    this.routes = buildRoutes(modes);
    this.keyWindows = keyWindowLog(cfg.faults, limits.windowMs, {
      reset: modes.rateLimitReset,
      retryAfterPadS: modes.retryAfter === 'plus-one' ? 1 : 0,
      holdUnrounded: modes.retryAfter === 'rounded-up',
      wholeSeconds: modes.keyWindowAccounting === 'coarse',
      ...(modes.keyWindowAtStart === 'earlier-run' ? { earlierUse: 0.3 } : {}),
    });
    this.keyWindows.prematureRetry = modes.prematureRetry;
    this.orgWindows = new SlidingWindowLog(limits.windowMs);
    this.anonymousWindows = new SlidingWindowLog(limits.windowMs);
    this.surfaceWindows = new SlidingWindowLog(limits.windowMs);
    this.issuance = issuanceCounter(cfg.faults, limits.tokenWindowMs, limits.tokenIssuancePerWindow, modes.issuanceWindow, modes.issuancePrematureRetry);
    this.openApi = JSON.stringify(openApiDocument(cfg.discovery));
    this.capability = { R4: JSON.stringify(capabilityStatement('R4', cfg.discovery)), R5: JSON.stringify(capabilityStatement('R5', cfg.discovery)) };
    this.smart = JSON.stringify(smartConfiguration(cfg.discovery));
    this.jwks = JSON.stringify(jwks(cfg.authority.publicJwk));
  }

  readonly handle = (req: HandlerRequest, res: HandlerResponse): void => {
    void this.respond(req, res);
  };

  private async respond(req: HandlerRequest, res: HandlerResponse): Promise<void> {
    const correlationId = pickCorrelationId(req.headers['x-correlation-id']);
    const ex: Exchange = { ip: req.socket.remoteAddress ?? 'unknown', now: this.cfg.now(), headers: {} };
    const rawUrl = req.url ?? '/';
    const queryAt = rawUrl.indexOf('?');
    const path = queryAt < 0 ? rawUrl : rawUrl.slice(0, queryAt);
    let reply: Reply;
    try {
      reply = await this.dispatch(req, ex, path, new URLSearchParams(queryAt < 0 ? '' : rawUrl.slice(queryAt + 1)));
    } catch (e) {
      reply = this.errorReply(e, req.method ?? '', path);
    }
    reply.headers = { ...ex.headers, ...reply.headers, 'X-Correlation-Id': correlationId };
    if (ex.caller && ex.op) this.recordAudit(ex, reply, correlationId);
    const transforms = this.cfg.faultDefs.filter((f) => f.transformResponse);
    if (transforms.length > 0) {
      let faulty: FaultResponse = { ...reply, body: parsedBody(reply.body) };
      for (const fault of transforms) faulty = fault.transformResponse!(faulty, { method: req.method ?? '', path, op: ex.op });
      reply = faulty;
    }
    this.write(res, reply, req.headers['accept-encoding']);
  }

  auditRecords(): readonly AuditRecord[] {
    return this.audit.all();
  }

  /** Every authenticated request writes an immutable audit record. */
  private recordAudit(ex: Exchange, reply: Reply, correlationId: string): void {
    const op = ex.op!;
    const created = (parsedBody(reply.body) as { id?: unknown } | undefined)?.id;
    this.audit.append({
      timestamp: new Date(ex.now).toISOString(),
      resourceType: op.resource,
      ...((ex.resourceId ?? (typeof created === 'string' && op.interaction === 'create' ? created : undefined))
        ? { resourceId: ex.resourceId ?? (created as string) }
        : {}),
      apiKey: ex.caller!.clientId,
      organization: ex.caller!.org,
      ...(op.interaction === 'search-type' && ex.query ? { query: Object.fromEntries(ex.query) } : {}),
      returned: returnedCount(reply.status, reply.body),
      clientIp: ex.ip,
      correlationId,
      status: reply.status,
    });
  }

  private write(res: HandlerResponse, reply: Reply, acceptEncoding?: string | string[]): void {
    if (res.destroyed) return;
    const indent = this.cfg.modes.jsonLayout === 'pretty' ? 2 : undefined;
    let payload = Buffer.isBuffer(reply.body)
      ? reply.body
      : Buffer.from(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body, null, indent));
    let headers = reply.headers;
    // Mode contentEncoding=gzip: a body the client accepts gzipped goes gzipped (HTTP content coding; the meaning is the same).
    if (this.cfg.modes.contentEncoding === 'gzip' && payload.length > 0 && acceptsGzip(acceptEncoding)) {
      payload = gzipSync(payload);
      headers = { ...headers, 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' };
    }
    res.writeHead(reply.status, { ...headers, 'Content-Length': String(payload.length) });
    res.end(payload);
  }

  private errorReply(e: unknown, method: string, path: string): Reply {
    const err = e instanceof FhirError ? e : catalogError('SVC-00001');
    if (!(e instanceof FhirError)) {
      console.error(`[reference] internal error on ${method} ${path}: ${e instanceof Error ? e.message : String(e)}`);
    }
    return { status: err.status, headers: { 'Content-Type': FHIR_JSON, ...err.headers }, body: operationOutcome(styledError(err, this.cfg.modes)) };
  }

  private async dispatch(req: HandlerRequest, ex: Exchange, path: string, query: URLSearchParams): Promise<Reply> {
    const candidates = this.routes.filter((r) => r.pattern.test(path));
    const route = candidates.find((r) => r.method === req.method);
    if (!route) {
      this.gateAnonymous(ex);
      if (candidates.length === 0) throw catalogError('SVC-00002', { message: `Resource not found: no endpoint at ${path.slice(0, 200)}` });
      const allow = [...new Set(candidates.map((r) => r.method))].join(', ');
      throw plainError(405, `Method ${String(req.method).slice(0, 20)} not allowed; allowed: ${allow}`, 'not-supported', { Allow: allow });
    }
    switch (route.kind) {
      case 'token':
        return this.token(req, ex);
      case 'openapi':
        return this.discovery(req, ex, this.openApi, `${this.cfg.modes.openapiMediaType}; charset=utf-8`);
      case 'smart':
        return this.discovery(req, ex, this.smart, PLAIN_JSON);
      case 'jwks':
        return this.discovery(req, ex, this.jwks, PLAIN_JSON);
      case 'metadata':
        if (this.cfg.faults.has('metadata-requires-auth')) await this.authenticate(req, ex);
        else this.gateAnonymous(ex);
        if (route.release === 'R5' && this.cfg.modes.r5Capability === 'none')
          throw catalogError('SVC-00002', { message: `Resource not found: no endpoint at ${path}` });
        return { status: 200, headers: { 'Content-Type': FHIR_JSON }, body: this.capability[route.release!] };
      case 'definition': {
        this.gateAnonymous(ex);
        const definition = operationDefinition(this.cfg.discovery);
        if (!definition) throw catalogError('SVC-00002', { message: `Resource not found: no endpoint at ${path}` });
        return { status: 200, headers: { 'Content-Type': FHIR_JSON }, body: definition };
      }
      case 'profile':
        this.gateAnonymous(ex);
        return { status: 200, headers: { 'Content-Type': FHIR_JSON }, body: observationProfile(this.cfg.baseUrl) };
      case 'fhir':
        return this.fhir(req, ex, route, path, query);
    }
  }

  /** A discovery document whose authentication is not stated: open, or behind a bearer (mode discoveryAuth). */
  private async discovery(req: HandlerRequest, ex: Exchange, body: string, contentType: string): Promise<Reply> {
    if (this.cfg.modes.discoveryAuth === 'required') await this.authenticate(req, ex);
    else this.gateAnonymous(ex);
    return { status: 200, headers: { 'Content-Type': contentType }, body };
  }

  // ---- rate limits ----------------------------------------------------

  private refuse(decision: RateDecision, ex: Exchange, message: string): never {
    throw catalogError('HPB-00105', {
      message: `Rate limit exceeded: ${message}`,
      headers: { 'Retry-After': String(retryAfterSeconds(decision.retryAtMs ?? decision.resetMs, ex.now)) },
    });
  }

  private gateAnonymous(ex: Exchange): void {
    const d = this.anonymousWindows.hit(ex.ip, ANONYMOUS_PER_WINDOW, ex.now);
    ex.headers = { ...ex.headers, ...rateLimitHeaders(d) };
    if (!d.allowed && this.cfg.limits.enforceRateLimits) this.refuse(d, ex, 'too many unauthenticated requests from this address');
  }

  private gateKey(caller: Caller, client: ClientRecord | undefined, ex: Exchange, authorization?: string): void {
    const { limits } = this.cfg;
    const keyed = keyWindowKey(this.cfg.faults, caller.clientId, authorization);
    const key = this.keyWindows.hit(keyed, client?.rateLimitPerMinute ?? limits.perKeyPerWindow, ex.now);
    const org = this.orgWindows.hit(caller.org, limits.perOrgPerWindow, ex.now);
    if (limits.enforceRateLimits) {
      tally(this.counts.keys, caller.clientId, key);
      tally(this.counts.organizations, caller.org, org);
    }
    // Fault rate-limit-remaining-per-surface: the headers count the key's requests of this release and resource type
    // only (a gateway's counter per route), while the key's limit holds over all its requests.
    const shown =
      this.cfg.faults.has('rate-limit-remaining-per-surface') && ex.op
        ? this.surfaceWindows.hit(`${keyed} ${ex.op.release} ${ex.op.resource}`, key.limit, ex.now)
        : key;
    // Fault rate-limit-headers-missing-production: a production key's responses carry no X-RateLimit-* headers.
    if (caller.keyKind !== 'production' || !this.cfg.faults.has('rate-limit-headers-missing-production'))
      ex.headers = { ...ex.headers, ...rateLimitHeaders(shown) };
    // Fault rate-limit-remaining-stuck-production: a production key's X-RateLimit-Remaining is its limit, whatever it sent.
    if (caller.keyKind === 'production' && this.cfg.faults.has('rate-limit-remaining-stuck-production'))
      ex.headers = { ...ex.headers, 'X-RateLimit-Remaining': String(key.limit) };
    // Fault rate-limit-limit-header-wrong-production: a production key's X-RateLimit-Limit is twice its ceiling.
    if (caller.keyKind === 'production' && this.cfg.faults.has('rate-limit-limit-header-wrong-production'))
      ex.headers = { ...ex.headers, 'X-RateLimit-Limit': String(key.limit * 2) };
    if (!limits.enforceRateLimits) return;
    // Fault rate-limit-writes-not-throttled: creates and updates count against the key but are never refused.
    const writeBypass = this.cfg.faults.has('rate-limit-writes-not-throttled') && (ex.op?.interaction === 'create' || ex.op?.interaction === 'update');
    // Fault rate-limit-r5-not-throttled: the R5 surface's requests count against the key but are never refused.
    const r5Bypass = this.cfg.faults.has('rate-limit-r5-not-throttled') && ex.op?.release === 'R5';
    if (!key.allowed && !writeBypass && !r5Bypass) this.refuse(key, ex, 'per-key limit');
    if (!org.allowed) this.refuse(org, ex, 'per-organization limit');
  }

  // ---- token endpoint ---------------------------------------------------

  private async token(req: HandlerRequest, ex: Exchange): Promise<Reply> {
    ex.headers = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };
    const json = mediaType(req.headers) === 'application/json' && this.cfg.modes.tokenRequestParsing === 'lenient';
    const readable = json || mediaType(req.headers) === 'application/x-www-form-urlencoded';
    const readForm = async () => {
      const body = await readBody(req, this.cfg.limits.maxBodyBytes, () => plainError(413, 'Token request body too large', 'too-long', afterRefusal(req)));
      const text = body.toString('utf8');
      return json ? jsonAsForm(text) : new URLSearchParams(text);
    };
    // Mode issuancePrematureRetry=same-client: the counter needs the client first (a body that cannot be read still counts).
    const read =
      this.cfg.modes.issuancePrematureRetry === 'same-client' && readable
        ? await readForm().then(
            (form) => ({ form }),
            (error: unknown) => ({ error }),
          )
        : undefined;
    const d = this.issuance.hit(issuanceKey(this.cfg.faults, ex.ip, req.headers), ex.now, read && 'form' in read ? assertedClient(read.form) : undefined);
    ex.headers = { ...ex.headers, ...rateLimitHeaders(d) };
    if (!d.allowed && this.cfg.limits.enforceRateLimits && !this.cfg.faults.has('issuance-limit-not-enforced')) {
      this.refuse(d, ex, 'token issuance limit for this address');
    }
    if (!readable) {
      throw catalogError('HPB-00101', { status: 400, message: 'Validation error: the token request must be application/x-www-form-urlencoded' });
    }
    if (read && 'error' in read) throw read.error;
    const form = read && 'form' in read ? read.form : await readForm();
    const response = await this.cfg.authority.issue(form);
    return { status: 200, headers: { 'Content-Type': PLAIN_JSON }, body: response };
  }

  // ---- FHIR calls -------------------------------------------------------

  /** 401 first; unauthenticated requests count against the anonymous window. */
  private async authenticate(
    req: HandlerRequest,
    ex: Exchange,
    verify: { acceptExpired?: boolean; release?: 'R4' | 'R5'; expiresEarlyMs?: number; operation?: boolean } = {},
  ): Promise<Caller> {
    try {
      const caller = await this.cfg.authority.authenticate(req.headers.authorization, {
        ...verify,
        write: req.method !== 'GET' && req.method !== 'HEAD',
        update: req.method === 'PUT',
      });
      ex.caller = caller; // authenticated: audited, even when throttled or refused below
      this.gateKey(caller, this.cfg.authority.client(caller.clientId), ex, req.headers.authorization);
      return caller;
    } catch (e) {
      if (e instanceof FhirError && e.status === 401) this.gateAnonymous(ex);
      throw e;
    }
  }

  private async fhir(req: HandlerRequest, ex: Exchange, route: Route, path: string, query: URLSearchParams): Promise<Reply> {
    const op = route.op!;
    ex.op = op;
    const { faults } = this.cfg;
    // Fault token-refused-before-expiry-r5: on R5 paths a token counts as expired once half its lifetime has passed.
    const earlyMs = op.release === 'R5' && faults.has('token-refused-before-expiry-r5') ? this.cfg.limits.tokenLifetimeSec * 500 : 0;
    const verify = {
      acceptExpired: op.release === 'R5' && faults.has('expired-token-accepted-r5'),
      release: op.release,
      expiresEarlyMs: earlyMs,
      operation: op.interaction === 'operation',
    };
    const caller = await this.authenticate(req, ex, verify).catch((e: unknown) => {
      // Fault invalid-bearer-403-encounter: a bearer token that is not valid gets 403 on the Encounter paths only.
      const invalid = e instanceof FhirError && e.status === 401 && req.headers.authorization !== undefined && op.resource === 'Encounter';
      throw invalid && faults.has('invalid-bearer-403-encounter') ? catalogError('SVC-00005') : e;
    });
    ex.caller = caller;
    ex.query = query;
    const fromBrowser = req.headers.origin !== undefined;
    const originEnforced = !faults.has('production-origin-not-enforced') && !(op.release === 'R5' && faults.has('production-origin-not-enforced-r5'));
    if (fromBrowser && (caller.keyKind === 'production' ? originEnforced : faults.has('sandbox-origin-refused'))) {
      throw catalogError('HPB-00124');
    }
    if (!(scopeOverride(this.cfg.faults, caller.scopes, op) ?? hasScope(caller.scopes, op.scope))) {
      throw catalogError('HPB-00104', { message: `Insufficient scope: ${op.operationId} needs ${op.scope}` });
    }
    if (op.interaction === 'search-type') this.checkSearchParams(op, query);

    const idMatch = route.pattern.exec(path);
    const params: Record<string, string> = idMatch?.[1] !== undefined ? { id: safeDecode(idMatch[1]) } : {};
    ex.resourceId = params.id;
    let body: unknown;
    let rawBody: Buffer | undefined;
    if (op.interaction === 'operation') {
      rawBody = await readBody(req, uploadBodyCap(this.cfg), () => catalogError('HPB-00119', { headers: afterRefusal(req) }));
    } else if (op.method !== 'GET') {
      body = await this.readResource(req, op);
    }
    const handler = this.cfg.resources.handlers[op.operationId];
    if (!handler) throw plainError(501, `${op.operationId} is not implemented`, 'not-supported');
    const out = await handler({ op, caller, params, query, headers: req.headers, body, rawBody, baseUrl: this.cfg.baseUrl, now: ex.now });
    return { status: out.status, headers: { 'Content-Type': FHIR_JSON, ...out.headers }, body: renderBody(out.body, this.cfg.modes) };
  }

  /** Reference choice: unknown search parameters are refused (400 HPB-00101). */
  private checkSearchParams(op: OperationDef, query: URLSearchParams): void {
    const known = new Set((op.searchParams ?? []).map((p) => p.name));
    const unknown = [...new Set(query.keys())].filter((k) => !known.has(k));
    if (unknown.length > 0) {
      throw catalogError('HPB-00101', {
        status: 400,
        message: `Validation error: unknown search parameter ${unknown
          .map((k) => JSON.stringify(k.slice(0, 50)))
          .slice(0, 5)
          .join(', ')}`,
      });
    }
  }

  /** A JSON write: media type (415), size (413), JSON syntax and resourceType (400 HPB-00101). */
  private async readResource(req: HandlerRequest, op: OperationDef): Promise<unknown> {
    const type = mediaType(req.headers);
    if (type !== 'application/fhir+json' && type !== 'application/json') {
      throw plainError(415, 'Unsupported media type: send Content-Type: application/fhir+json', 'not-supported');
    }
    // A DocumentReference may carry a document inline: its body may be as large as one, and beyond that it is one too large.
    const raw =
      op.resource === 'DocumentReference'
        ? await readBody(req, documentBodyCap(this.cfg.limits, this.cfg.faults), () => catalogError('HPB-00119', { headers: afterRefusal(req) }))
        : await readBody(req, this.cfg.limits.maxBodyBytes, () =>
            plainError(413, `Request body exceeds ${this.cfg.limits.maxBodyBytes} bytes`, 'too-long', afterRefusal(req)),
          );
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.toString('utf8'));
    } catch {
      throw catalogError('HPB-00101', { status: 400, message: 'Validation error: the body is not valid JSON' });
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw catalogError('HPB-00101', { status: 400, message: 'Validation error: the body must be a JSON object' });
    }
    const resourceType = (parsed as { resourceType?: unknown }).resourceType;
    // Generated faults body-{missing,wrong}-resource-type-accepted-<operation>: the URL gives the type.
    if (resourceType !== op.resource && !bodyLeniency(this.cfg.faults, op.operationId).skips('resourceType', resourceType)) {
      throw catalogError('HPB-00101', { status: 400, message: `Validation error: resourceType must be ${op.resource}` });
    }
    return parsed;
  }

  /** Malformed HTTP that node:http rejects before routing still gets an OperationOutcome. */
  readonly clientError = (err: NodeJS.ErrnoException, socket: Socket): void => {
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const ex: Exchange = { ip: socket.remoteAddress ?? 'unknown', now: this.cfg.now(), headers: {} };
    const d = this.anonymousWindows.hit(ex.ip, ANONYMOUS_PER_WINDOW, ex.now);
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    const body = JSON.stringify(
      operationOutcome(
        status === 431
          ? plainError(431, 'Request header fields too large', 'too-long')
          : catalogError('SVC-00003', { message: 'Bad request: malformed HTTP request' }),
      ),
    );
    const headers = {
      'Content-Type': FHIR_JSON,
      'Content-Length': String(Buffer.byteLength(body)),
      'X-Correlation-Id': randomUUID(),
      ...rateLimitHeaders(d),
      Connection: 'close',
    };
    socket.end(
      `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
        Object.entries(headers)
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('') +
        `\r\n${body}`,
    );
  };
}

/** How long the server keeps an idle connection (node announces it in Keep-Alive). */
const KEEP_ALIVE_MS = 65_000;

/** Starts the reference server with the given resource module. */
export async function startReferenceServer(opts: ReferenceOptions, createResources: CreateResources): Promise<ReferenceServer> {
  const limits: ReferenceLimits = resolveLimits(opts.limits);
  const faultNames = [...new Set(opts.faults ?? [])];
  const faultDefs = resolveFaults(faultNames);
  // A fault planted on a surface only some conformant choices have brings those choices (FaultDef.modes).
  const modes: ReferenceModes = resolveModes({ ...Object.assign({}, ...faultDefs.map((f) => f.modes ?? {})), ...opts.modes });
  const faults: ReadonlySet<string> = new Set(faultNames);
  const now = opts.now ?? Date.now;
  const fixturesDir = resolve(opts.fixturesDir ?? DEFAULT_FIXTURES_DIR);
  const host = opts.host ?? '127.0.0.1';

  const [clients, fixtureIds] = await Promise.all([
    loadClients(fixturesDir)
      .then((c) => withMainKeyAlg(c, modes, fixturesDir))
      .then((c) => configureClients(c, modes, opts.clientJwksUris))
      // The extra resource types a mode serves are granted to every fixture client.
      .then((c) => c.map((x) => ({ ...x, scopes: [...new Set([...x.scopes, ...extraScopes(modes)])] }))),
    readFile(join(fixturesDir, 'fixture-ids.json'), 'utf8').then((t) => JSON.parse(t) as Record<string, string>),
  ]);
  // Before listening: a client that cannot be registered leaves no server behind.
  const registered = (opts.extraClients ?? []).map((c, i, all) => {
    if (all.findIndex((x) => x.clientId === c.clientId) !== i) throw new Error(`client ${c.clientId} is registered twice`);
    return toClientRecord(c, clients);
  });
  const resources = await createResources({ fixturesDir, limits, modes, faults, now });

  let core: HttpCore | undefined;
  const handler = (req: HandlerRequest, res: HandlerResponse) => {
    if (core) return core.handle(req, res);
    res.writeHead(503, { 'Content-Type': FHIR_JSON, 'X-Correlation-Id': randomUUID(), 'Retry-After': '1' });
    res.end(JSON.stringify(operationOutcome(catalogError('SVC-00007'))));
  };
  const tls = opts.tls;
  const server = tls
    ? createHttpsServer({ cert: tls.cert, key: tls.key, ...(tls.requestCert ? { ca: tls.ca, requestCert: true, rejectUnauthorized: true } : {}) }, handler)
    : createServer(handler);
  // Long keep-alive so clients that reuse sockets do not race the server closing them.
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.headersTimeout = KEEP_ALIVE_MS + 1000;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => (core ? core.clientError(err, socket) : socket.destroy()));
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(opts.port ?? 0, host, () => ok());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const baseUrl = `${tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;

  const authority = await Authority.create({ clients: [...clients, ...registered], baseUrl, limits, modes, faults, now });
  const discovery: DiscoveryInit = {
    baseUrl,
    tokenUrl: authority.tokenUrl,
    modes,
    scopesSupported: authority.scopesSupported(),
    startedAt: new Date(now()).toISOString(),
  };
  core = new HttpCore({ limits, modes, faults, faultDefs, now, authority, resources, discovery, baseUrl });

  const { orgA: _orgA, orgB: _orgB, ...fixtures } = fixtureIds;
  return {
    url: baseUrl,
    port,
    options: { limits, modes, faults: faultNames },
    fixtureIds,
    resources,
    inProcess: { origin: new URL(baseUrl).origin, handle: handler, keepAliveS: KEEP_ALIVE_MS / 1000 },
    audit: () => core!.auditRecords(),
    rateCounts: () => structuredClone(core!.counts),
    targetConfig: () => ({
      baseUrl,
      tokenUrl: authority.tokenUrl,
      clients: clients.map((c) => ({
        role: c.role,
        clientId: c.clientId,
        alg: c.alg,
        kid: String(c.jwks?.keys[0]?.kid ?? ''),
        keyKind: c.keyKind,
        scopes: [...c.scopes],
        privateKey: { file: join(fixturesDir, 'keys', c.testKeyFile ?? `${c.clientId}.test-key.private.jwk.json`) },
      })),
      fixtures: { ...fixtures },
    }),
    close: () =>
      new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
      }),
  };
}

/** Adds a window's decision to its count: the requests it held (allowed) or one more refusal. */
function tally(counts: Record<string, RateCount>, name: string, d: RateDecision): void {
  const c = (counts[name] ??= { limit: d.limit, peak: 0, refused: 0 });
  if (d.allowed) c.peak = Math.max(c.peak, d.limit - d.remaining);
  else c.refused++;
}

/** The client a token request names (its client_id, else its client assertion's unverified `sub`), for counting only. */
function assertedClient(form: URLSearchParams): string | undefined {
  const id = form.get('client_id');
  if (id) return id;
  const assertion = form.get('client_assertion');
  if (!assertion) return undefined;
  try {
    return decodeJwt(assertion).sub;
  } catch {
    return undefined;
  }
}
