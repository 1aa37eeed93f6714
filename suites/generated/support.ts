/**
 * Calling one published operation of the target: its URL (fixture id or a
 * resource the run created), a valid body, and tokens for chosen scopes.
 * Shared by the generated checks and the scopes suite.
 */
import type { CheckContext } from '../../src/engine/context.js';
import type { ModelOperation } from '../../src/discovery/model.js';
import type { HttpResponse } from '../../src/http/types.js';
import { decodeJwt } from 'jose';
import { isConformanceError } from '../../src/errors.js';
import { isObject } from '../../src/engine/expect.js';
import { minimalResource, type Resource } from './bodies.js';
import { parseScope } from './scope-letters.js';

/** `MedicationRequest.read` -> `medication-request-read`. */
export function kebab(text: string): string {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase();
}

/** The fixture key naming an existing record of a resource type (`MedicationRequest` -> `medicationRequest`). */
export function fixtureKeyOf(resource: string): string {
  return resource.charAt(0).toLowerCase() + resource.slice(1);
}

export const hasIdParam = (op: ModelOperation) => op.path.includes('{id}');
export const isWrite = (op: ModelOperation) => op.method !== 'GET';

/**
 * A cached token for exactly these scopes (client `main`). When the token endpoint refuses
 * them, or grants fewer (a `scope` claim of a JWT access token without one of them): a failure
 * when the config declares the client holds them (clients[].scopes), else a skip (the grant is
 * unknown, and whether a scope outside it is refused or narrowed is open).
 */
export async function tokenFor(ctx: CheckContext, scopes: string[]): Promise<string> {
  const grant = ctx.client('main').scopes;
  const held = grant !== undefined && scopes.every((s) => grant.includes(s));
  let token: string;
  try {
    token = await ctx.token(scopes);
  } catch (e) {
    if (!isConformanceError(e) || e.code !== 'ERR_TOKEN') throw e;
    if (held) {
      ctx.fail(`the token endpoint refused a token for ${scopes.join(' ')}, which the client holds (clients[].scopes): ${e.message}`, {
        requirement: 'auth.token-scope-parameter', expected: `a token for ${scopes.join(' ')}`, actual: e.message,
      });
    }
    ctx.skip(`no token for ${scopes.join(' ')}: ${e.message} (${grant ? 'the client is not declared to hold them' : "the client's grant, clients[].scopes, is not declared"})`);
  }
  const granted = grantedScopes(token);
  const missing = granted ? scopes.filter((s) => !granted.some((g) => covers(g, s))) : [];
  if (missing.length) {
    const what = `the token for ${scopes.join(' ')} grants ${granted!.join(' ') || 'no scope'}`;
    if (held) ctx.fail(`${what}, not ${missing.join(' ')}, which the client holds (clients[].scopes)`, { requirement: 'auth.token-scope-parameter', expected: scopes, actual: granted });
    ctx.skip(`${what} (${grant ? 'the client is not declared to hold' : "the client's grant, clients[].scopes, is not declared; the target narrowed to its grant"} ${missing.join(' ')})`);
  }
  return token;
}

/** `held` is `wanted`, or a scope of the same resource with every letter of it (`.cruds` covers `.rs`). */
function covers(held: string, wanted: string): boolean {
  if (held === wanted) return true;
  const [h, w] = [parseScope(held), parseScope(wanted)];
  return h !== undefined && w !== undefined && h.resource === w.resource && [...w.letters].every((l) => h.letters.includes(l));
}

/** The scopes a JWT access token states (`scope` string or `scp` list), when it states them. */
function grantedScopes(token: string): string[] | undefined {
  try {
    const claims = decodeJwt(token);
    if (typeof claims.scope === 'string') return claims.scope.split(' ').filter((s) => s !== '');
    if (Array.isArray(claims.scp) && claims.scp.every((s) => typeof s === 'string')) return claims.scp as string[];
  } catch {
    // an opaque token states nothing
  }
  return undefined;
}

/** Id of a created resource: the body's `id`, else the last segment of `Location`. */
export function createdId(res: HttpResponse): string | undefined {
  if (isObject(res.json) && typeof res.json.id === 'string') return res.json.id;
  const location = res.headers.location;
  return location ? /\/([^/]+?)(?:\/_history\/[^/]+)?$/.exec(location.split('?')[0]!)?.[1] : undefined;
}

/**
 * Creates a minimal valid resource through the target's published create. A create refused
 * for its published scope (401/403), a server error, or a created resource without an id is a
 * failure; another refusal (a 4xx: the fixture patient may not take new records) skips.
 */
export async function createResource(ctx: CheckContext, resource: string, release: 'R4' | 'R5'): Promise<string> {
  const create = ctx.findOperation(resource, 'create', release);
  if (!create) ctx.skip(`the target publishes no ${release} ${resource} create to make a resource this check may write to`);
  if (!create.scope) ctx.skip(`the target publishes no scope for ${create.operationId}`);
  const token = await tokenFor(ctx, [create.scope]);
  const res = await ctx.request({ method: create.method, url: create.path, token, client: 'main', body: minimalResource(ctx, release, resource), headers: FHIR_HEADERS });
  const what = `a valid ${release} ${resource} create with its published scope ${create.scope}`;
  const exchange = res.exchange.id;
  if (res.status === 401 || res.status === 403) {
    ctx.fail(`${what} was refused with ${res.status}`, { requirement: 'discovery.openapi-x-service-scope', expected: 'not refused', actual: res.status, exchange });
  }
  if (res.status >= 500) ctx.fail(`${what} answered ${res.status}`, { expected: '2xx', actual: res.status, exchange });
  if (res.status < 200 || res.status >= 300) ctx.skip(`could not create a ${release} ${resource} to write to (status ${res.status}: the fixture patient may not take new records)`);
  const id = createdId(res) ?? ctx.fail(`${what} answered ${res.status} without the new resource's id (body id or Location)`, { requirement: 'general.id-server-assigned', expected: 'an id', actual: null, exchange });
  ctx.created(resource, id, `${create.path}/${id}`);
  return id;
}

const WRITE_TARGETS = 'generated.write-targets';

/** One resource per type and release created by this run, shared by the checks that write to an existing id. */
async function writeTarget(ctx: CheckContext, op: ModelOperation): Promise<string> {
  const targets = (ctx.shared.get(WRITE_TARGETS) as Map<string, string> | undefined) ?? new Map<string, string>();
  ctx.shared.set(WRITE_TARGETS, targets);
  const key = `${op.release} ${op.resource}`;
  const known = targets.get(key);
  if (known) return known;
  const id = await createResource(ctx, op.resource, op.release);
  targets.set(key, id);
  return id;
}

/** The id an operation with `{id}` is called with: a fixture for reads, a resource of this run for writes. */
export async function targetIdFor(ctx: CheckContext, op: ModelOperation): Promise<string> {
  return isWrite(op) ? writeTarget(ctx, op) : ctx.fixture(fixtureKeyOf(op.resource));
}

/** A search query the target must answer: the fixture patient when `patient` is a parameter, one entry a page. */
function searchQuery(ctx: CheckContext, op: ModelOperation): string {
  const names = new Set(op.searchParams.map((p) => p.name));
  const q = new URLSearchParams();
  if (names.has('patient')) q.set('patient', ctx.fixture('patient'));
  if (names.has('_count')) q.set('_count', '1');
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const FHIR_HEADERS = { accept: 'application/fhir+json' };

export interface PreparedCall {
  method: string;
  url: string;
  body?: unknown;
  headers: Record<string, string>;
}

/**
 * A valid call of the operation. Writes carry a minimal valid resource (with the
 * URL id on update); an operation (e.g. `$upload`, payload not shown) gets a
 * small text/plain body.
 */
export async function prepareCall(ctx: CheckContext, op: ModelOperation, body?: Resource): Promise<PreparedCall> {
  const id = hasIdParam(op) ? await targetIdFor(ctx, op) : undefined;
  const url = ctx.path(op.path, id === undefined ? {} : { id }) + (op.interaction === 'search-type' ? searchQuery(ctx, op) : '');
  if (!isWrite(op)) return { method: op.method, url, headers: FHIR_HEADERS };
  if (op.interaction === 'operation') return { method: op.method, url, body: 'fhir-conformance upload', headers: { ...FHIR_HEADERS, 'content-type': 'text/plain' } };
  const resource = body ?? minimalResource(ctx, op.release, op.resource);
  return { method: op.method, url, body: op.interaction === 'update' && id !== undefined ? { ...resource, id } : resource, headers: FHIR_HEADERS };
}

/** Sends a prepared call with a token (or none). */
export function send(ctx: CheckContext, call: PreparedCall, token: string | undefined, opts: { retry?: 'spec' | 'none' } = {}): Promise<HttpResponse> {
  // A GET with the spec's retries may be answered with the exchange another check made for it (src/engine/exchange-cache.ts).
  return ctx.request({ ...call, ...(token ? { token, client: 'main', share: opts.retry === undefined } : {}), ...opts });
}
