/**
 * Forged access tokens (spec: Endpoints > Discovery and token endpoints, "POST `/auth/token` |
 * client assertion | Issues access tokens"; jwks.json, "Public key set for verifying issued access
 * tokens"; Authentication > Using a token, "A missing or invalid bearer token gives 401"). Every
 * bearer token an attacker with a registered client can mint without the token endpoint is
 * presented on one R4 and one R5 operation of the target's model: each must get 401.
 *
 * Forgeries that copy the server's own tokens (alg none, an unknown kid, a changed claim) need a
 * JWS to copy: a target whose tokens are not JWS already fails discovery.jwks-verifies-access-tokens,
 * and these checks skip saying so. A JWS without a claim set (an opaque token the server signs) is
 * copied as it is; its claims cannot be changed (an observation). A claim the target's tokens do not
 * carry is not changed.
 */
import { createPublicKey, type JsonWebKey, randomUUID } from 'node:crypto';
import { CompactSign, calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import { publicKeyPem } from '../../src/auth/assertion.js';
import type { ResolvedClient } from '../../src/config/index.js';
import type { ModelOperation } from '../../src/discovery/model.js';
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import type { HttpResponse } from '../../src/http/index.js';
import {
  catalogCodeOf,
  createdIdOf,
  createResource,
  describeForm,
  discoveryDocument,
  isObject,
  requireContract,
  sendUpload,
  smallDocument,
  uploadTarget,
  writeBody,
} from '../../src/service/index.js';
import { OpenChoiceSignal, SkipSignal } from '../../src/errors.js';
import { registerSecret } from '../../src/redact.js';
import { onLoopback, serveAttackerKeys } from './attacker-keys.js';
import { accessTokenOf, answer, READ_SCOPE } from './support.js';

const area = 'auth';
const FHIR_JSON = { accept: 'application/fhir+json' };
const ISSUED_ONLY = 'auth.access-token-issued-only';
const QUOTE = 'POST `/auth/token` | client assertion | Issues access tokens (see Authentication).';
const REQUIREMENTS = [ISSUED_ONLY, 'auth.invalid-bearer-401'];
const SHAPE_SKIP = "the target's access token is not a JWS, so there is no header or payload to copy (see discovery.jwks-verifies-access-tokens)";
/** An address no target can reach: a key set an attacker would host there. */
const ATTACKER_KEYS_URL = 'https://keys.attacker.invalid/jwks.json';
/** Where each forgery is presented: one GET of each release (the rule governs every FHIR call). */
const SURFACES = {
  release: 'R4 and R5: one GET operation of each (from the operation model)',
  resource: 'one per release: a read of a random id the copied grant covers first (else another read, else a search)',
  leftOut: [
    'the other resource families: an invalid bearer token on every family is auth.invalid-bearer-401-every-surface',
    "writes: auth.forged-tokens-on-writes presents each forgery's first token on a create of each release",
  ],
};
const SIGNABLE = new Set(['ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'EdDSA']);

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

interface Jws {
  header: Record<string, unknown>;
  /** Its claim set, when it is a JWT (a JWS over an opaque handle has none). */
  claims?: JWTPayload;
  /** The encoded parts as issued. */
  parts: [string, string, string];
}

/** The token's JWS parts, when it is a compact JWS with a JSON header; its claims when it is a JWT. */
export function jwsOf(token: string): Jws | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  let header: Record<string, unknown>;
  try {
    header = { ...decodeProtectedHeader(token) };
  } catch {
    return undefined;
  }
  try {
    return { header, claims: decodeJwt(token), parts: parts as [string, string, string] };
  } catch {
    return { header, parts: parts as [string, string, string] };
  }
}

/** A genuine access token of the main client (the run's cached one) and its JWS parts when it is a JWS. */
async function genuine(ctx: CheckContext): Promise<{ token: string; jws?: Jws }> {
  const token = await ctx.token([READ_SCOPE]);
  const jws = jwsOf(token);
  return { token, ...(jws ? { jws } : {}) };
}

/** Claims of the server's shape: the genuine token's when it is a JWT, else plausible ones. Fresh iat, exp and jti. */
function claimsLike(ctx: CheckContext, jws: Jws | undefined): JWTPayload {
  const now = Math.floor(Date.now() / 1000);
  const plausible = { iss: ctx.config.baseUrl, aud: `${ctx.config.baseUrl}/fhir`, sub: ctx.client('main').clientId, scope: READ_SCOPE };
  return { ...plausible, ...jws?.claims, iat: now, exp: now + ctx.limits.tokenLifetimeSec, jti: randomUUID() };
}

/** Every scope the target's operations name, with the read scope: what a client forging its own grant would write. */
function widenedScope(ctx: CheckContext): string {
  return [...new Set([READ_SCOPE, ...ctx.model.operations.map((o) => o.scope).filter((s): s is string => typeof s === 'string')])].join(' ');
}

function secret(token: string): string {
  registerSecret(token);
  return token;
}

/**
 * One operation per release, from the model: a read of a random id (else a search), R4 and R5; one the
 * copied grant covers (the read scope) first, so an accepted forgery shows as a 404, not a 403.
 */
function targets(ctx: CheckContext): Array<{ op: ModelOperation; url: string }> {
  const out: Array<{ op: ModelOperation; url: string }> = [];
  for (const release of ['R4', 'R5'] as const) {
    const ops = ctx.model.operations
      .filter((o) => o.release === release && o.method === 'GET')
      .sort((a, b) => Number(b.scope === READ_SCOPE) - Number(a.scope === READ_SCOPE));
    const op = ops.find((o) => o.interaction === 'read') ?? ops.find((o) => o.interaction === 'search-type');
    if (op) out.push({ op, url: ctx.path(op.path, { id: randomUUID() }) });
  }
  if (out.length === 0) ctx.skip('the target publishes no GET operation to present a token to');
  return out;
}

/** Presents each forged token on one operation per release: each must get 401. */
async function expectRefused(ctx: CheckContext, forged: Array<{ label: string; token: string }>): Promise<void> {
  const where = targets(ctx);
  const answers: Record<string, unknown> = {};
  for (const { label, token } of forged) {
    for (const { op, url } of where) {
      const res = await ctx.request({ url, token, headers: FHIR_JSON });
      answers[`${label} ${op.release}`] = { status: res.status, ...(catalogCodeOf(res) ? { code: catalogCodeOf(res) } : {}) };
      ctx.check(res.status === 401, `${label}: ${op.method} ${op.path} (${op.release}) answered ${res.status}, not 401: the forged token was accepted`, {
        requirement: ISSUED_ONLY,
        expected: 401,
        actual: res.status,
        exchange: res.exchange.id,
      });
    }
  }
  ctx.observe('forged-token.answers', answers);
}

function forgery(
  slug: string,
  title: string,
  requests: number,
  build: (ctx: CheckContext) => Promise<Array<{ label: string; token: string }>>,
): CheckDefinition {
  return defineCheck({
    id: `auth.forged-${slug}`,
    surfaces: SURFACES,
    title: `${title} is refused with 401 on the FHIR endpoints of both releases`,
    area,
    level: 'MUST',
    requirements: REQUIREMENTS,
    quote: QUOTE,
    requests,
    async run(ctx) {
      await expectRefused(ctx, await build(ctx));
    },
  });
}

type SigningKey = Parameters<SignJWT['sign']>[0];

/** A JWT a client signs with its own registered key (the key the target trusts for its assertions). */
async function signedByClient(client: ResolvedClient, claims: JWTPayload): Promise<string> {
  return secret(
    await new SignJWT(claims).setProtectedHeader({ alg: client.alg, kid: client.kid, typ: 'JWT' }).sign(client.privateKey as unknown as SigningKey),
  );
}

/** The server's public key as SPKI PEM: the one of its published key set that the genuine token names (else the first), or undefined. */
async function serverPublicKeyPem(ctx: CheckContext, kid: unknown): Promise<string | undefined> {
  const { res } = await discoveryDocument(ctx, '/fhir/.well-known/jwks.json');
  const keys = isObject(res.json) && Array.isArray(res.json.keys) ? (res.json.keys as JWK[]) : [];
  const key = keys.find((k) => k.kid === kid) ?? keys[0];
  if (!key) return undefined;
  try {
    return createPublicKey({ key: key as JsonWebKey, format: 'jwk' })
      .export({ type: 'spki', format: 'pem' })
      .toString();
  } catch {
    return undefined;
  }
}

async function hs256(header: Record<string, unknown>, claims: JWTPayload, secretText: string): Promise<string> {
  return secret(await new SignJWT(claims).setProtectedHeader({ ...header, alg: 'HS256' }).sign(new TextEncoder().encode(secretText)));
}

type Forgery = { slug: string; title: string; requests: number; build: (ctx: CheckContext) => Promise<Array<{ label: string; token: string }>> };
const forge = (slug: string, title: string, requests: number, build: Forgery['build']): Forgery => ({ slug, title, requests, build });

/** The forgeries a check each (on GETs) and, their first token each, on writes (auth.forged-tokens-on-writes). */
const FORGERIES: Forgery[] = [
  forge(
    'client-key-signed',
    "a JWT signed with a client's own registered key (every configured client's, in its algorithm; main's also with a scope claim it widened)",
    10,
    async (ctx) => {
      const { jws } = await genuine(ctx);
      const claims = claimsLike(ctx, jws);
      const main = ctx.client('main');
      // One key of each other client id (a key kind or algorithm the target verifies apart).
      const others = ctx.config.clients.filter((c, i, all) => c.clientId !== main.clientId && all.findIndex((x) => x.clientId === c.clientId) === i);
      const asClient = (c: ResolvedClient): JWTPayload => ({
        ...claims,
        sub: c.clientId,
        ...(typeof claims.client_id === 'string' ? { client_id: c.clientId } : {}),
      });
      return [
        { label: `signed with ${main.role}'s key (${main.alg})`, token: await signedByClient(main, claims) },
        {
          label: `signed with ${main.role}'s key (${main.alg}), scope widened by the client`,
          token: await signedByClient(main, { ...claims, scope: widenedScope(ctx) }),
        },
        ...(await Promise.all(others.map(async (c) => ({ label: `signed with ${c.role}'s key (${c.alg})`, token: await signedByClient(c, asClient(c)) })))),
      ];
    },
  ),
  forge('client-assertion-as-bearer', 'the client assertion itself presented as a bearer token', 2, async (ctx) => [
    { label: 'the client assertion', token: secret(await ctx.tokens.assertion('main')) },
  ]),
  forge('alg-none', "an unsigned copy of the server's token (alg none)", 2, async (ctx) => {
    const jws = (await genuine(ctx)).jws ?? ctx.skip(SHAPE_SKIP);
    return [{ label: 'alg none', token: secret(`${b64({ ...jws.header, alg: 'none' })}.${jws.parts[1]}.`) }];
  }),
  forge('hs256-public-key', "a token of the server's shape signed HS256 with the server's public key as the secret", 3, async (ctx) => {
    const { jws } = await genuine(ctx);
    const pem = await serverPublicKeyPem(ctx, jws?.header.kid);
    // No key set to read: the client's public key, which the target also holds.
    const key = pem ?? publicKeyPem(ctx.client('main'));
    ctx.observe(
      'forged-token.hs256-secret',
      pem ? "the server's published key (SPKI PEM)" : "the client's public key (SPKI PEM): the server's key set was not readable",
    );
    return [
      {
        label: `HS256 keyed with ${pem ? "the server's" : "the client's"} public key`,
        token: await hs256(jws?.header ?? { typ: 'JWT' }, claimsLike(ctx, jws), key),
      },
    ];
  }),
  forge('unknown-kid', "a copy of the server's token re-signed by another key under a kid not in its key set", 2, async (ctx) => {
    const jws = (await genuine(ctx)).jws ?? ctx.skip(SHAPE_SKIP);
    const alg = typeof jws.header.alg === 'string' && SIGNABLE.has(jws.header.alg) ? jws.header.alg : 'ES256';
    const { privateKey } = await generateKeyPair(alg);
    const header = { ...jws.header, alg, kid: `unknown-${randomUUID()}` };
    // A JWS without a claim set (an opaque token) is re-signed over the same payload.
    const token = jws.claims
      ? await new SignJWT(jws.claims).setProtectedHeader(header).sign(privateKey)
      : await new CompactSign(Buffer.from(jws.parts[1], 'base64url')).setProtectedHeader(header).sign(privateKey);
    return [{ label: 'unknown kid', token: secret(token) }];
  }),
  forge(
    'claim-changed',
    "the server's own token with one claim changed (scope widened, organization or subject changed, exp extended), its signature kept",
    8,
    async (ctx) => {
      const jws = (await genuine(ctx)).jws ?? ctx.skip(SHAPE_SKIP);
      const { parts } = jws;
      if (!jws.claims) ctx.observe('forged-token.claims-changed', [], "the token's payload is not a claim set (an opaque handle)");
      const claims =
        jws.claims ??
        ctx.openChoice(
          "the target's access token is a JWS without a claim set (an opaque token it signs): there is no claim to change; the other forgeries still judge it",
        );
      const other = ctx.config.clients.find((c) => c.role === 'second-org') ?? ctx.config.clients.find((c) => c.role !== 'main');
      const changes: Array<[string, JWTPayload]> = [
        ['subject changed', { sub: other && other.clientId !== claims.sub ? other.clientId : `other-${randomUUID()}` }],
        ['exp extended by an hour', { exp: (typeof claims.exp === 'number' ? claims.exp : Math.floor(Date.now() / 1000)) + 3600 }],
      ];
      if (typeof claims.scope === 'string') changes.unshift(['scope widened', { scope: widenedScope(ctx) }]);
      else if (Array.isArray(claims.scp)) changes.unshift(['scope widened', { scp: widenedScope(ctx).split(' ') }]);
      const orgClaim = ['org', 'organization', 'tenant', 'org_id'].find((k) => typeof claims[k] === 'string');
      if (orgClaim) changes.push([`${orgClaim} changed`, { [orgClaim]: `${String(claims[orgClaim])}-other` }]);
      ctx.observe(
        'forged-token.claims-changed',
        changes.map(([label]) => label),
        orgClaim ? undefined : 'the token carries no organization claim (org, organization, tenant, org_id): not changed',
      );
      return changes.map(([label, change]) => ({ label, token: secret(`${parts[0]}.${b64({ ...claims, ...change })}.${parts[2]}`) }));
    },
  ),
];

export const forgeryChecks: CheckDefinition[] = [
  ...FORGERIES.map((f) => forgery(f.slug, f.title, f.requests, f.build)),
  embeddedKeyCheck(),
  otherAudienceCheck(),
  writesCheck(),
  updatesCheck(),
  uploadsCheck(),
];

/** A token of the server's shape signed by an attacker key its header carries (jwk) or points to (jku, x5u). */
function embeddedKeyCheck(): CheckDefinition {
  return defineCheck({
    id: 'auth.forged-embedded-key',
    surfaces: SURFACES,
    title:
      "a token of the server's shape signed by an attacker key its header carries (jwk) or points to (jku, x5u; jku also at a key set the suite serves on 127.0.0.1) is refused with 401 on the FHIR endpoints of both releases",
    area,
    level: 'MUST',
    requirements: REQUIREMENTS,
    quote: QUOTE,
    requests: 8,
    async run(ctx) {
      const { jwk, kid, sign } = await attackerSigner(ctx);
      const forged = [
        { label: 'embedded jwk', token: await sign({ jwk }) },
        { label: 'jku to an unreachable attacker key set', token: await sign({ jku: ATTACKER_KEYS_URL }) },
        { label: 'x5u to an attacker certificate', token: await sign({ x5u: ATTACKER_KEYS_URL.replace('jwks.json', 'cert.pem') }) },
      ];
      // A key set the target can fetch: served here, so reachable from a target on this machine only.
      if (!onLoopback(ctx.config.baseUrl)) {
        ctx.observe(
          'forged-token.jku-reachable',
          'not tried',
          'the target is not on this machine: a key set the suite serves on 127.0.0.1 is not reachable from it (whether it would fetch one it can reach is not known)',
        );
        await expectRefused(ctx, forged);
        return;
      }
      const hosted = await serveAttackerKeys({ keys: [{ ...jwk, kid, alg: 'ES256', use: 'sig' }] });
      try {
        forged.push({ label: 'jku to an attacker key set the suite serves (127.0.0.1)', token: await sign({ jku: hosted.url }) });
        await expectRefused(ctx, forged);
      } finally {
        ctx.observe(
          'forged-token.jku-reachable',
          { fetches: hosted.fetches() },
          'how often the target fetched the key set the jku header named (on 127.0.0.1): a fetch is no violation, trusting its key is',
        );
        await hosted.close();
      }
    },
  });
}

/** The audiences a token names (its JWT `aud`), when it is a JWT. */
function audiencesOf(token: string): string[] | undefined {
  const aud = jwsOf(token)?.claims?.aud;
  if (typeof aud === 'string') return [aud];
  return Array.isArray(aud) ? aud : undefined;
}

const trimmed = (url: string) => url.replace(/\/+$/, '');

/**
 * A token the target issued for another audience: a token request naming one release's base as its
 * `resource` (RFC 8707), where the target issues one for that release only (its `aud`), presented on
 * the other release. A target that ignores the parameter, refuses it, or issues tokens whose audience
 * cannot be read publishes no other audience: an observation.
 */
function otherAudienceCheck(): CheckDefinition {
  return defineCheck({
    id: 'auth.forged-other-audience',
    surfaces: SURFACES,
    title: "a token the target issued for one release's base only (a token request's resource) is refused with 401 on the other release",
    area,
    level: 'MUST',
    requirements: REQUIREMENTS,
    quote: QUOTE,
    requests: 4,
    async run(ctx) {
      const where = targets(ctx);
      if (where.length < 2)
        ctx.skip('not applicable: the target publishes GET operations of one release only, so there is no other release to present a token to');
      const base = trimmed(ctx.config.baseUrl);
      const tried: Record<string, unknown> = {};
      let judged = false;
      for (const [i, { op }] of where.entries()) {
        const other = where[1 - i]!;
        const resource = `${base}/fhir/${op.release}`;
        const res = await ctx.tokens.request('main', { scopes: [READ_SCOPE], form: { resource } });
        const token = accessTokenOf(res);
        if (!token) {
          tried[resource] = answer(res);
          continue;
        }
        registerSecret(token);
        const aud = audiencesOf(token);
        tried[resource] = { ...answer(res), aud: aud ?? 'not readable (not a JWT)' };
        if (!aud || aud.length === 0 || !aud.every((a) => trimmed(a) === resource)) continue;
        judged = true;
        const use = await ctx.request({ url: other.url, token, headers: FHIR_JSON });
        tried[`${resource} on ${other.op.release}`] = { status: use.status };
        ctx.check(
          use.status === 401,
          `a token issued for ${resource} only (aud) was presented on ${other.op.method} ${other.op.path} (${other.op.release}) and answered ${use.status}, not 401: a token for another audience was accepted`,
          { requirement: ISSUED_ONLY, expected: 401, actual: use.status, exchange: use.exchange.id },
        );
      }
      ctx.observe('other-audience.tokens', tried);
      if (!judged)
        ctx.openChoice(
          "the target issued no token for one release only (a resource parameter naming a release's base was refused or ignored, or the token's aud cannot be read): it publishes no other audience to try",
        );
    },
  });
}

/**
 * The forgeries on writes: the first token each forgery makes, and one signed by an attacker key its
 * header carries (jwk), presented on one create of each release with a valid body: each must get 401.
 * A target whose write routes only decode the bearer, or verify it otherwise than its reads, passes
 * every GET check above. A forgery the target's tokens give nothing to copy for is left out (listed).
 */
function writesCheck(): CheckDefinition {
  return defineCheck({
    id: 'auth.forged-tokens-on-writes',
    surfaces: {
      release: 'R4 and R5: one create of each (from the operation model)',
      resource: 'one per release: the first create it publishes, with a valid body of its type',
      channel: 'POST with a forged bearer token',
      leftOut: [
        'updates: auth.forged-tokens-on-updates',
        'the $upload operation: auth.forged-tokens-on-upload',
        "a forgery's further tokens (every client's key, every changed claim, jku and x5u): the GET checks above present each",
      ],
    },
    title:
      'one token of each forgery (a client-signed JWT, the client assertion, alg none, HS256 keyed with the public key, an unknown kid, a changed claim, an embedded jwk) is refused with 401 on a create of each release',
    area,
    level: 'MUST',
    requirements: REQUIREMENTS,
    quote: QUOTE,
    // Seven forged tokens on a create of each release.
    requests: 14,
    tags: ['writes'],
    async run(ctx) {
      const creates = (['R4', 'R5'] as const).flatMap((release) => {
        const op = ctx.model.operations.find((o) => o.release === release && o.interaction === 'create');
        return op ? [op] : [];
      });
      if (creates.length === 0) ctx.skip('the target publishes no create to present a token to');
      const { forged, notTried } = await oneOfEachForgery(ctx);
      const answers: Record<string, unknown> = {};
      for (const op of creates) {
        const body = await writeBody(ctx, {
          release: op.release,
          resource: op.resource,
          ...(op.requestSchema ? { requestSchema: op.requestSchema } : {}),
          ...(op.profile ? { profile: op.profile } : {}),
        });
        for (const { label, token } of forged) {
          const res = await ctx.request({ method: 'POST', url: ctx.path(op.path, {}), token, body, headers: FHIR_JSON, retry: 'none' });
          const created = res.status >= 200 && res.status < 300 ? createdIdOf(res) : undefined;
          if (created) ctx.created(op.resource, created);
          judgeForged(ctx, answers, `${label} ${op.release}`, res, `${label}: ${op.method} ${op.path} (${op.release})`, 'a write');
        }
      }
      ctx.observe('forged-token.write-answers', answers);
      if (notTried.length) ctx.observe('forged-token.write-not-tried', notTried);
    },
  });
}

/**
 * A forged token's answer on a write: kept in `answers` under `key`, and 401 required; the finding
 * says whether the token was taken (a 2xx: `for <action>`) or refused otherwise than as invalid.
 */
function judgeForged(ctx: CheckContext, answers: Record<string, unknown>, key: string, res: HttpResponse, what: string, action: string): void {
  answers[key] = { status: res.status, ...(catalogCodeOf(res) ? { code: catalogCodeOf(res) } : {}) };
  const taken = res.status < 300 ? `the forged token was accepted for ${action}` : 'the forged token was not refused as invalid';
  ctx.check(res.status === 401, `${what} answered ${res.status}, not 401: ${taken}`, {
    requirement: ISSUED_ONLY,
    expected: 401,
    actual: res.status,
    exchange: res.exchange.id,
  });
}

/** One token of each forgery (its first), and the forgeries this target leaves no way to make (their reason). */
async function oneOfEachForgery(ctx: CheckContext): Promise<{ forged: Array<{ label: string; token: string }>; notTried: string[] }> {
  const forged: Array<{ label: string; token: string }> = [];
  const notTried: string[] = [];
  for (const f of FORGERIES) {
    try {
      const [first] = await f.build(ctx);
      if (first) forged.push({ label: `${f.slug}: ${first.label}`, token: first.token });
    } catch (e) {
      if (!(e instanceof SkipSignal || e instanceof OpenChoiceSignal)) throw e;
      notTried.push(`${f.slug} (${e.message})`);
    }
  }
  forged.push({ label: 'embedded-key: embedded jwk', token: await embeddedJwkToken(ctx) });
  return { forged, notTried };
}

/**
 * The forgeries on updates: a route may verify tokens where its authors thought of it (reads, creates)
 * and read only the claims elsewhere. Each forged token updates a record the check created with a
 * valid token (its body as read, If-Match its current validator: an update that would succeed with a
 * genuine token), and the record must still be at the version it was.
 */
function updatesCheck(): CheckDefinition {
  return defineCheck({
    id: 'auth.forged-tokens-on-updates',
    surfaces: {
      release: 'R4 and R5: one update of each (from the operation model)',
      resource: 'one per release: the first type it publishes an update of, a record the check creates with a valid token',
      channel: 'PUT with a forged bearer token, then a read with a valid one',
      leftOut: [
        'the $upload operation: auth.forged-tokens-on-upload',
        "a forgery's further tokens: the GET checks above present each",
        "records the check did not create: a forged update of another organization's record is refused first by tenancy (tenancy.foreign-update-404)",
      ],
    },
    title:
      'one token of each forgery (a client-signed JWT, the client assertion, alg none, HS256 keyed with the public key, an unknown kid, a changed claim, an embedded jwk) is refused with 401 on an update of each release, and the record is left at its version',
    area,
    level: 'MUST',
    requirements: REQUIREMENTS,
    quote: QUOTE,
    // Per release: a create, a read, eight forged updates and a read again.
    requests: 22,
    tags: ['writes'],
    async run(ctx) {
      const updates = (['R4', 'R5'] as const).flatMap((release) => {
        const op = ctx.model.operations.find(
          (o) => o.release === release && o.interaction === 'update' && ctx.findOperation(o.resource, 'read', release)?.scope,
        );
        return op ? [op] : [];
      });
      if (updates.length === 0) ctx.skip('the target publishes no update (with a read to see the record) to present a token to');
      const { forged, notTried } = await oneOfEachForgery(ctx);
      const answers: Record<string, unknown> = {};
      for (const op of updates) {
        const read = ctx.findOperation(op.resource, 'read', op.release)!;
        const id = await createResource(ctx, op.resource, op.release);
        const readNow = async () => {
          const r = await ctx.fhir({ scopes: [read.scope!], url: ctx.path(read.path, { id }) });
          if (r.status !== 200 || !isObject(r.json))
            ctx.fail(`${op.release} ${op.resource}: the read of a record the check created answered ${r.status}`, {
              requirement: ISSUED_ONLY,
              expected: 200,
              actual: r.status,
              exchange: r.exchange.id,
            });
          const meta = (r.json as { meta?: { versionId?: unknown } }).meta;
          return { res: r, body: r.json as Record<string, unknown>, version: meta?.versionId, etag: r.headers.etag };
        };
        const before = await readNow();
        const url = ctx.path(op.path, { id });
        for (const { label, token } of forged) {
          const headers = { ...FHIR_JSON, 'content-type': 'application/fhir+json', ...(before.etag ? { 'if-match': before.etag } : {}) };
          const res = await ctx.request({ method: 'PUT', url, token, body: before.body, headers, retry: 'none' });
          judgeForged(ctx, answers, `${label} ${op.release}`, res, `${label}: PUT ${op.path} (${op.release} ${op.resource})`, 'an update');
        }
        const after = await readNow();
        ctx.check(
          after.version === before.version,
          `${op.release} ${op.resource}: after the forged updates the record is at version ${String(after.version)}, not ${String(before.version)}: a forged token wrote to it`,
          { requirement: ISSUED_ONLY, expected: before.version, actual: after.version, exchange: after.res.exchange.id },
        );
      }
      ctx.observe('forged-token.update-answers', answers);
      if (notTried.length) ctx.observe('forged-token.update-not-tried', notTried);
    },
  });
}

/**
 * The forgeries on the `$upload` operation: a route the authors added later may read the token's
 * claims without verifying it. Each forged token sends a small valid document in the upload
 * contract's form (settled once per run with a genuine token: document-reference.upload-contract),
 * to the record a genuine token would upload to.
 */
function uploadsCheck(): CheckDefinition {
  return defineCheck({
    id: 'auth.forged-tokens-on-upload',
    surfaces: {
      release: 'R5: the $upload operation (the spec names it on DocumentReference)',
      resource: 'DocumentReference: its $upload in the contract settled for the run (declared, published or tried)',
      channel: 'POST $upload with a forged bearer token',
      leftOut: ["a forgery's further tokens: the GET checks above present each"],
    },
    title:
      'one token of each forgery (a client-signed JWT, the client assertion, alg none, HS256 keyed with the public key, an unknown kid, a changed claim, an embedded jwk) is refused with 401 on the $upload operation',
    area,
    level: 'MUST',
    requirements: REQUIREMENTS,
    quote: QUOTE,
    // Eight forged uploads and, at instance level, the DocumentReference they go to.
    requests: 9,
    tags: ['writes'],
    async run(ctx) {
      const contract = await requireContract(ctx);
      const { forged, notTried } = await oneOfEachForgery(ctx);
      const target = await uploadTarget(ctx, contract.form);
      const answers: Record<string, unknown> = {};
      const form = describeForm(contract.form);
      for (const { label, token } of forged) {
        const res = await sendUpload(ctx, contract.form, target, smallDocument(contract.contentType), contract.contentType, { token, retry: 'none' });
        judgeForged(ctx, answers, label, res, `${label}: $upload (${form})`, 'an upload');
      }
      ctx.observe('forged-token.upload-answers', answers);
      if (notTried.length) ctx.observe('forged-token.upload-not-tried', notTried);
    },
  });
}

/** A token of the server's shape signed by an attacker key its own header carries (jwk). */
async function embeddedJwkToken(ctx: CheckContext): Promise<string> {
  const { jwk, sign } = await attackerSigner(ctx);
  return sign({ jwk });
}

/**
 * A new ES256 attacker key (its public JWK and thumbprint kid) and a signer of tokens of the server's
 * shape under it: the genuine token's header with alg ES256 and that kid, plus the members given (jwk, jku, x5u).
 */
async function attackerSigner(ctx: CheckContext): Promise<{ jwk: JWK; kid: string; sign: (header: Record<string, unknown>) => Promise<string> }> {
  const { jws } = await genuine(ctx);
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(jwk);
  const claims = claimsLike(ctx, jws);
  const base = { ...jws?.header, alg: 'ES256', kid };
  return { jwk, kid, sign: async (header) => secret(await new SignJWT(claims).setProtectedHeader({ ...base, ...header }).sign(privateKey)) };
}
