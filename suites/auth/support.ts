/**
 * Helpers shared by the auth checks: token requests with deliberate defects,
 * the "no token, error in the spec's format" assertions, and forged bearer tokens.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, decodeJwt, decodeProtectedHeader, generateKeyPair, type JWTPayload } from 'jose';
import type { CheckContext } from '../../src/engine/index.js';
import { catalogCodeOf, expectError, isObject } from '../../src/service/index.js';
import type { HttpResponse } from '../../src/http/index.js';
import type { TokenRequestOptions } from '../../src/auth/types.js';
import { registerSecret } from '../../src/redact.js';

/** A scope every configured client is expected to hold (the spec's MedicationRequest read scope). */
export const READ_SCOPE = 'system/MedicationRequest.rs';

/** Any client error: the spec leaves the exact status of a malformed token request open. */
export const ANY_4XX: readonly number[] = Array.from({ length: 100 }, (_, i) => 400 + i);

/** The two codes the spec gives a missing or invalid bearer token (Using a token; the endpoint tables). */
export const BEARER_401_CODES = ['SVC-00004', 'HPB-00106'] as const;

export const ASSERTION_RULE =
  "The server checks the assertion's `iss`, `sub`, `aud`, `exp` and signature, and needs the client's key-set endpoint to be reachable. On failure: 401 `HPB-00106`.";

/** A token request for the main client with one deliberate defect (paced by the broker). */
export function tokenRequest(ctx: CheckContext, opts: TokenRequestOptions = {}): Promise<HttpResponse> {
  return ctx.tokens.request('main', { scopes: [READ_SCOPE], ...opts });
}

export function accessTokenOf(res: HttpResponse): string | undefined {
  const token = isObject(res.json) ? res.json.access_token : undefined;
  return typeof token === 'string' && token !== '' ? token : undefined;
}

export function issued(res: HttpResponse): boolean {
  return res.status >= 200 && res.status < 300 && accessTokenOf(res) !== undefined;
}

/** Soft: the response carries no access token. */
export function expectNoToken(ctx: CheckContext, res: HttpResponse, requirement: string): void {
  ctx.check(accessTokenOf(res) === undefined, `the token endpoint issued an access token (HTTP ${res.status})`, {
    requirement,
    expected: 'no access_token',
    actual: 'an access_token',
    exchange: res.exchange.id,
  });
}

/** A refused assertion: no token, 401 HPB-00106 in the spec's error format. */
export function expectAssertionRefused(ctx: CheckContext, res: HttpResponse, requirement: string): void {
  expectNoToken(ctx, res, requirement);
  expectError(res, { status: 401, code: 'HPB-00106', requirement });
}

/** How the target answered a request the spec leaves open, for an observation. */
export function answer(res: HttpResponse): { status: number; issued: boolean; code?: string } {
  const code = catalogCodeOf(res);
  return { status: res.status, issued: issued(res), ...(code ? { code } : {}) };
}

/** An authenticated-looking URL that needs a token: the target's MedicationRequest read of a random id. */
export function protectedUrl(ctx: CheckContext): string {
  const op = ctx.operation('MedicationRequest', 'read', 'R4');
  return ctx.path(op.path, { id: randomUUID() });
}

const SIGNABLE_ALGS = new Set(['ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'EdDSA']);

/**
 * A bearer token signed by a key the target never issued: a copy of a genuine access token
 * (header and claims) re-signed with a fresh key when the genuine one is a JWT, otherwise a
 * plausible JWT. Registered as a secret before it is returned.
 */
export async function forgedAccessToken(ctx: CheckContext): Promise<string> {
  const genuine = await ctx.token([READ_SCOPE]);
  let header: Record<string, unknown> = { alg: 'ES256', typ: 'JWT', kid: randomUUID() };
  let claims: JWTPayload = {};
  try {
    header = { ...decodeProtectedHeader(genuine) };
    claims = decodeJwt(genuine);
  } catch {
    // an opaque token: forge plausible claims instead
  }
  const alg = typeof header.alg === 'string' && SIGNABLE_ALGS.has(header.alg) ? header.alg : 'ES256';
  const now = Math.floor(Date.now() / 1000);
  const { privateKey } = await generateKeyPair(alg);
  const forged = await new SignJWT({
    iss: ctx.config.baseUrl,
    sub: ctx.client('main').clientId,
    scope: READ_SCOPE,
    ...claims,
    iat: now,
    exp: now + ctx.limits.tokenLifetimeSec,
    jti: randomUUID(),
  })
    .setProtectedHeader({ ...header, alg })
    .sign(privateKey);
  registerSecret(forged);
  return forged;
}
