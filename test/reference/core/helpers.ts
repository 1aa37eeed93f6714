/** Shared helpers of the reference HTTP-core tests: a stub resource module, client keys, assertions, requests. */
import { readFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { importJWK, SignJWT } from 'jose';
import type { JWK, CryptoKey } from 'jose';
import { OPERATIONS } from '../../../src/service/api.js';
import { catalogError } from '../../../src/reference/outcome.js';
import { startReferenceServer } from '../../../src/reference/server.js';
import type { ReferenceServer } from '../../../src/reference/server.js';
import type { Resources } from '../../../src/reference/resources/index.js';
import type { Handler, ReferenceOptions } from '../../../src/reference/types.js';

export const FORM = 'application/x-www-form-urlencoded';
export const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
export const ALL_SCOPES =
  'system/MedicationRequest.rs system/MedicationRequest.cru system/MedicationRequest.c system/Encounter.rs system/Encounter.cru system/DocumentReference.rs system/DocumentReference.cru';

/** A stub of src/reference/resources: echoes what the core passes in. Id `missing` -> 404, `boom` -> a crash. */
export function stubResources(): Resources {
  const handler: Handler = (ctx) => {
    if (ctx.params.id === 'missing') throw catalogError('HPB-00102');
    if (ctx.params.id === 'boom') throw new Error('stub crash');
    if (ctx.op.interaction === 'search-type') {
      return {
        status: 200,
        body: { resourceType: 'Bundle', type: 'searchset', total: 0, link: [{ relation: 'self', url: `${ctx.baseUrl}${ctx.op.path}` }], entry: [] },
      };
    }
    if (ctx.op.interaction === 'operation')
      return { status: 200, body: { resourceType: 'Parameters', size: ctx.rawBody?.length, type: ctx.headers['content-type'] } };
    const status = ctx.op.interaction === 'create' ? 201 : 200;
    return {
      status,
      headers: { ETag: 'W/"1"' },
      body: { ...(ctx.body as object), resourceType: ctx.op.resource, id: ctx.params.id ?? randomUUID(), caller: ctx.caller.clientId },
    };
  };
  return { handlers: Object.fromEntries(OPERATIONS.map((o) => [o.operationId, handler])), snapshot: () => ({}) };
}

export function startStub(opts: ReferenceOptions = {}): Promise<ReferenceServer> {
  return startReferenceServer(opts, async () => stubResources());
}

export interface ClientKey {
  clientId: string;
  kid: string;
  alg: string;
  key: CryptoKey;
  jwk: JWK;
}

export async function clientKey(server: ReferenceServer, role: string): Promise<ClientKey> {
  const c = server.targetConfig().clients.find((x) => x.role === role)!;
  const jwk = JSON.parse(await readFile(c.privateKey.file, 'utf8')) as JWK;
  return { clientId: c.clientId, kid: c.kid, alg: c.alg, key: (await importJWK(jwk, c.alg)) as CryptoKey, jwk };
}

export interface AssertionClaims {
  iss?: string;
  sub?: string;
  aud?: string;
  exp?: number;
  jti?: string | null;
}

export async function signAssertion(
  server: ReferenceServer,
  k: ClientKey,
  claims: AssertionClaims = {},
  header: Record<string, unknown> = {},
  now = Date.now(),
): Promise<string> {
  const sec = Math.floor(now / 1000);
  const payload: Record<string, unknown> = {
    iss: claims.iss ?? k.clientId,
    sub: claims.sub ?? k.clientId,
    aud: claims.aud ?? `${server.url}/auth/token`,
    iat: sec,
    exp: claims.exp ?? sec + 60,
    jti: claims.jti === undefined ? randomUUID() : claims.jti,
  };
  if (payload.jti === null) delete payload.jti;
  return new SignJWT(payload).setProtectedHeader({ alg: k.alg, kid: k.kid, ...header }).sign(k.key);
}

export interface Res {
  status: number;
  headers: Record<string, string>;
  json: any;
  text: string;
}

export async function call(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<Res> {
  const r = await request(url, { method: (opts.method ?? 'GET') as 'GET', headers: opts.headers, body: opts.body });
  const text = await r.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const headers = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
  return { status: r.statusCode, headers, json, text };
}

export function tokenRequest(server: ReferenceServer, fields: Record<string, string>): Promise<Res> {
  return call(`${server.url}/auth/token`, { method: 'POST', headers: { 'content-type': FORM }, body: new URLSearchParams(fields).toString() });
}

export async function getToken(server: ReferenceServer, role = 'main', scope?: string, now = Date.now()): Promise<Res> {
  const k = await clientKey(server, role);
  const fields: Record<string, string> = {
    grant_type: 'client_credentials',
    client_assertion_type: ASSERTION_TYPE,
    client_assertion: await signAssertion(server, k, {}, {}, now),
  };
  if (scope !== undefined) fields.scope = scope;
  return tokenRequest(server, fields);
}

export async function accessToken(server: ReferenceServer, role = 'main', scope?: string, now?: number): Promise<string> {
  const r = await getToken(server, role, scope, now);
  if (r.status !== 200) throw new Error(`token request failed: ${r.status} ${r.text}`);
  return r.json.access_token as string;
}

/** The catalog code of an OperationOutcome response. */
export function codeOf(r: Res): string | undefined {
  return r.json?.issue?.[0]?.details?.coding?.[0]?.code;
}

/** A settable clock for the server. */
export function fakeClock(start = Date.UTC(2030, 0, 1, 0, 0, 0)) {
  let t = start;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
    set: (ms: number) => {
      t = ms;
    },
  };
}
