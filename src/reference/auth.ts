/**
 * Authentication of the reference server (spec "Authentication"):
 * the client registry, the token endpoint's assertion verification and
 * issuance, access-token verification, and the scope letter rule.
 * Error messages name the failed rule, never a token or assertion.
 */
import { createPrivateKey, createPublicKey, createSecretKey, KeyObject, randomBytes, randomUUID, type JsonWebKey as NodeJwk } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  SignJWT,
  jwtVerify,
  decodeProtectedHeader,
  decodeJwt,
  createLocalJWKSet,
  generateKeyPair,
  exportJWK,
  calculateJwkThumbprint,
  errors as joseErrors,
  UnsecuredJWT,
  base64url,
  EmbeddedJWK,
  CompactSign,
  compactVerify,
} from 'jose';
import type { JWK, JWTVerifyGetKey, CryptoKey, JWTPayload, JWTVerifyOptions } from 'jose';
import { SIGNING_ALGS, type SigningAlg } from '../auth/algorithms.js';
import { catalogError } from './outcome.js';
import { remoteKeySet } from './remote-key-set.js';
import type { Caller, FhirError, ReferenceLimits, ReferenceModes } from './types.js';

export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** Every algorithm the spec leaves open for client keys; `none` and HS* never (a registered key must verify the assertion). */
export const ASSERTION_ALGS: readonly SigningAlg[] = SIGNING_ALGS;
const ALGS_RULE = `alg must be one of ${ASSERTION_ALGS.join(', ')}, signed by a registered key of that algorithm`;
/** Reference choice: an assertion may not expire more than 5 minutes ahead (plus 10 s clock skew). */
const MAX_ASSERTION_AHEAD_SEC = 300 + 10;
const ACCESS_TOKEN_ALG = 'ES256';
const REMOTE_JWKS_TIMEOUT_MS = 2_000;
const REMOTE_JWKS_CACHE_MS = 5 * 60_000;
const CACHE_SWEEP_THRESHOLD = 10_000;

export interface ClientRecord {
  clientId: string;
  role: string;
  org: string;
  keyKind: 'sandbox' | 'production';
  /** The algorithm of its key (a key's JWK `alg`, else its kind: the registry's documentation; verification goes by the key set). */
  alg: SigningAlg;
  /** The client's grant. */
  scopes: string[];
  /** Registered public keys. */
  jwks?: { keys: JWK[] };
  /**
   * Alternatively, the client's key-set endpoint (fetched with a 2 s timeout, cached 5 minutes,
   * fetched again for a kid the cached set lacks). Wins over `jwks` when both are present.
   */
  jwksUri?: string;
  /** Per-key rate ceiling per window, overriding `limits.perKeyPerWindow`. */
  rateLimitPerMinute?: number;
  /** The file (under the fixtures' keys/) of its private test key, when not `<clientId>.test-key.private.jwk.json` (mode mainKeyAlg). */
  testKeyFile?: string;
}

export async function loadClients(fixturesDir: string): Promise<ClientRecord[]> {
  const file = join(fixturesDir, 'clients.json');
  const parsed = JSON.parse(await readFile(file, 'utf8')) as { clients?: unknown };
  if (!Array.isArray(parsed.clients)) throw new Error(`${file}: expected { "clients": [...] }`);
  parsed.clients.forEach((c: Partial<ClientRecord>, i) => {
    if (
      typeof c.clientId !== 'string' ||
      typeof c.org !== 'string' ||
      !Array.isArray(c.scopes) ||
      (c.keyKind !== 'sandbox' && c.keyKind !== 'production') ||
      (!c.jwks && !c.jwksUri)
    ) {
      throw new Error(`${file}: clients[${i}] needs clientId, org, keyKind (sandbox|production), scopes and jwks or jwksUri`);
    }
  });
  return parsed.clients as ClientRecord[];
}

/** The registry as a run configures it: the main key's kind (mode `mainKeyKind`) and key-set URLs by role. */
export function configureClients(clients: ClientRecord[], modes: Pick<ReferenceModes, 'mainKeyKind'>, jwksUris: Record<string, string> = {}): ClientRecord[] {
  return clients.map((c) => ({
    ...c,
    ...(c.role === 'main' ? { keyKind: modes.mainKeyKind } : {}),
    ...(jwksUris[c.role] ? { jwksUri: jwksUris[c.role] } : {}),
  }));
}

/**
 * Mode `mainKeyAlg`: the main client registered with the test key of that algorithm
 * (`keys/<clientId>.<alg>.test-key.private.jwk.json`, its public half derived here) instead of its fixture key.
 */
export async function withMainKeyAlg(clients: ClientRecord[], modes: Pick<ReferenceModes, 'mainKeyAlg'>, fixturesDir: string): Promise<ClientRecord[]> {
  return Promise.all(
    clients.map(async (c) => {
      if (c.role !== 'main' || c.alg === modes.mainKeyAlg) return c;
      const testKeyFile = `${c.clientId}.${modes.mainKeyAlg.toLowerCase()}.test-key.private.jwk.json`;
      const priv = JSON.parse(await readFile(join(fixturesDir, 'keys', testKeyFile), 'utf8')) as JWK;
      const pub = createPublicKey(createPrivateKey({ key: priv as NodeJwk, format: 'jwk' })).export({ format: 'jwk' }) as JWK;
      return { ...c, alg: modes.mainKeyAlg, testKeyFile, jwks: { keys: [{ ...pub, kid: priv.kid!, alg: modes.mainKeyAlg, use: 'sig' }] } };
    }),
  );
}

// ---- scopes -------------------------------------------------------------

const SCOPE_PATTERN = /^system\/([A-Za-z]+)\.([a-z]+)$/;

/**
 * The letter rule (reference choice): `held` covers `required` when both name
 * the same resource and held's letters include every required letter.
 */
export function scopeCovers(held: string, required: string): boolean {
  const h = SCOPE_PATTERN.exec(held);
  const r = SCOPE_PATTERN.exec(required);
  if (!h || !r || h[1] !== r[1]) return false;
  return [...r[2]!].every((letter) => h[2]!.includes(letter));
}

export function hasScope(held: readonly string[], required: string): boolean {
  return held.some((s) => scopeCovers(s, required));
}

// ---- the authority ------------------------------------------------------

export interface AuthorityInit {
  clients: ClientRecord[];
  baseUrl: string;
  limits: ReferenceLimits;
  modes: ReferenceModes;
  faults: ReadonlySet<string>;
  now: () => number;
}

export interface TokenResponse {
  access_token: string;
  token_type?: 'bearer';
  expires_in?: number;
  scope?: string;
}

interface VerifiedToken {
  caller: Caller;
  expMs: number;
  /** The audiences the token was issued for. */
  aud: string[];
}

function assertionInvalid(reason: string) {
  return catalogError('HPB-00106', { message: `Authentication failed (assertion invalid): ${reason}` });
}

function unauthorized(reason: string) {
  return catalogError('SVC-00004', { message: `Unauthorized: ${reason}` });
}

function badRequest(reason: string) {
  return catalogError('HPB-00101', { status: 400, message: `Validation error: ${reason}` });
}

export class Authority {
  readonly tokenUrl: string;
  /** `aud` of issued access tokens. */
  readonly audience: string;
  private readonly clients: Map<string, ClientRecord>;
  private readonly keySets = new Map<string, JWTVerifyGetKey>();
  private readonly usedJtis = new Map<string, number>();
  private readonly verified = new Map<string, VerifiedToken>();
  /** Mode accessTokenClaims `minimal`: issued tokens' grants by jti; mode accessTokenFormat `opaque`: by handle. */
  private readonly grants = new Map<string, VerifiedToken>();
  /** Faults `bearer-signature-not-checked-r5`, `bearer-not-verified-on-writes`, `-on-updates`, `-on-upload` only: tokens served unverified (never cached for the other routes). */
  private readonly unverifiedR5 = new Set<string>();
  /** Fault `new-token-refused-after-expiry` only: clients that presented an expired token. */
  private readonly expiredClients = new Set<string>();

  private constructor(
    private readonly init: AuthorityInit,
    private readonly signingKey: CryptoKey,
    private readonly verifyKey: CryptoKey,
    readonly publicJwk: JWK,
  ) {
    this.tokenUrl = `${init.baseUrl}/auth/token${init.modes.tokenEndpointForm === 'trailing-slash' ? '/' : ''}`;
    this.audience = `${init.baseUrl}/fhir`;
    this.clients = new Map(init.clients.map((c) => [c.clientId, c]));
  }

  /** Generates the server's access-token signing key pair. */
  static async create(init: AuthorityInit): Promise<Authority> {
    const { publicKey, privateKey } = await generateKeyPair(ACCESS_TOKEN_ALG);
    const jwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(jwk);
    return new Authority(init, privateKey, publicKey, { ...jwk, kid, alg: ACCESS_TOKEN_ALG, use: 'sig' });
  }

  client(clientId: string): ClientRecord | undefined {
    return this.clients.get(clientId);
  }

  /** Every scope some client may be granted. */
  scopesSupported(): string[] {
    return [...new Set(this.init.clients.flatMap((c) => c.scopes))].sort();
  }

  /** Handles the token endpoint's form (already checked to be form-encoded). */
  async issue(form: URLSearchParams): Promise<TokenResponse> {
    // Mode `tokenRequestParsing: lenient`: grant_type and client_assertion_type are not looked at (the spec does not say they are refused).
    const paramsChecked = this.init.modes.tokenRequestParsing !== 'lenient';
    // Fault token-missing-assertion-type-500: the missing parameter is read as if present (a crash, 500 SVC-00001).
    if (paramsChecked && !form.has('client_assertion_type') && this.init.faults.has('token-missing-assertion-type-500')) throw catalogError('SVC-00001');
    for (const name of paramsChecked ? ['grant_type', 'client_assertion_type', 'client_assertion'] : ['client_assertion']) {
      if (form.getAll(name).length !== 1 || !form.get(name)) throw badRequest(`form parameter ${name} is required once`);
    }
    if (paramsChecked && form.get('grant_type') !== 'client_credentials') throw badRequest('grant_type must be client_credentials');
    if (paramsChecked && form.get('client_assertion_type') !== CLIENT_ASSERTION_TYPE)
      throw badRequest(`client_assertion_type must be ${CLIENT_ASSERTION_TYPE}`);
    if (form.getAll('scope').length > 1) throw badRequest('scope may be given once (space separated)');

    const asserted = await this.verifyAssertion(form.get('client_assertion')!);
    // Fault token-client-id-from-form: the identity comes from the client_id form parameter, not the verified assertion.
    const named = this.init.faults.has('token-client-id-from-form') ? this.clients.get(form.get('client_id') ?? '') : undefined;
    const client = named ?? asserted;
    const scopes = this.grantedScopes(client, form.get('scope'));
    const audience = this.audienceFor(form.get('resource'));
    const iat = Math.floor(this.init.now() / 1000);
    const lifetime = this.init.limits.tokenLifetimeSec;
    const caller: Caller = { clientId: client.clientId, org: client.org, keyKind: client.keyKind, scopes };
    // Fault: tokens die at a third of the announced lifetime.
    const expSec = iat + (this.init.faults.has('access-token-dies-early') ? Math.max(1, Math.floor(lifetime / 3)) : lifetime);
    const accessToken =
      this.init.modes.accessTokenFormat === 'opaque' ? await this.opaqueToken(caller, expSec, audience) : await this.jwt(caller, iat, expSec, audience);
    if (!this.init.modes.tokenResponseExtras) return { access_token: accessToken };
    return { access_token: accessToken, token_type: 'bearer', expires_in: lifetime, scope: scopes.join(' ') };
  }

  /** A JWT access token; mode accessTokenClaims `minimal`: only registered claims, the grant kept on the server by jti. */
  private async jwt(caller: Caller, iat: number, expSec: number, audience: string): Promise<string> {
    const jti = randomUUID();
    const minimal = this.init.modes.accessTokenClaims === 'minimal';
    if (minimal) this.rememberGrant(jti, { caller, expMs: expSec * 1000, aud: [audience] });
    const claims = minimal ? {} : { scope: caller.scopes.join(' '), client_id: caller.clientId, org: caller.org, key_kind: caller.keyKind };
    return new SignJWT(claims)
      .setProtectedHeader({ alg: ACCESS_TOKEN_ALG, kid: this.publicJwk.kid!, typ: 'at+jwt' })
      .setIssuer(this.init.baseUrl)
      .setSubject(caller.clientId)
      .setAudience(audience)
      .setIssuedAt(iat)
      .setExpirationTime(expSec)
      .setJti(jti)
      .sign(this.signingKey);
  }

  /** Mode accessTokenFormat `opaque`: a JWS over a random handle (no claim set), the grant kept on the server by the handle. */
  private async opaqueToken(caller: Caller, expSec: number, audience: string): Promise<string> {
    const handle = randomBytes(32);
    this.rememberGrant(handle.toString('base64url'), { caller, expMs: expSec * 1000, aud: [audience] });
    return new CompactSign(handle).setProtectedHeader({ alg: ACCESS_TOKEN_ALG, kid: this.publicJwk.kid! }).sign(this.signingKey);
  }

  /** The base of one release, an audience of its own (mode resourceIndicator `release`). */
  releaseAudience(release: 'R4' | 'R5'): string {
    return `${this.init.baseUrl}/fhir/${release}`;
  }

  /** The audience of a token requested with this `resource` (RFC 8707): a release's base in mode `release`, else the service. */
  private audienceFor(resource: string | null): string {
    if (this.init.modes.resourceIndicator !== 'release' || !resource) return this.audience;
    const wanted = resource.replace(/\/+$/, '');
    return (['R4', 'R5'] as const).map((r) => this.releaseAudience(r)).find((a) => a === wanted) ?? this.audience;
  }

  /**
   * Whether a token issued for `aud` serves a call on `release` (undefined: not a FHIR call, any of
   * the server's audiences). Fault bearer-audience-not-checked: any of the server's audiences serves any release.
   */
  private audienceServes(aud: readonly string[], release: 'R4' | 'R5' | undefined): boolean {
    if (aud.includes(this.audience)) return true;
    const releases = release === undefined || this.init.faults.has('bearer-audience-not-checked') ? (['R4', 'R5'] as const) : [release];
    return releases.some((r) => aud.includes(this.releaseAudience(r)));
  }

  /** Verifies a client assertion (RFC 7523); any failure is 401 HPB-00106. */
  private async verifyAssertion(assertion: string): Promise<ClientRecord> {
    let alg: unknown;
    let kid: unknown;
    let iss: unknown;
    let sub: unknown;
    try {
      ({ alg, kid } = decodeProtectedHeader(assertion));
      ({ iss, sub } = decodeJwt(assertion));
    } catch {
      throw assertionInvalid('not a signed JWT');
    }
    const { faults } = this.init;
    const unsignedAccepted = (alg === 'none' && faults.has('assertion-alg-none-accepted')) || (alg === 'HS256' && faults.has('assertion-hs256-accepted'));
    if (!unsignedAccepted && !ASSERTION_ALGS.includes(alg as SigningAlg)) throw assertionInvalid(ALGS_RULE);
    if (typeof kid !== 'string' || kid === '') throw assertionInvalid('kid header is required');
    const named = faults.has('assertion-iss-not-checked') ? sub : iss;
    const client = typeof named === 'string' ? this.clients.get(named) : undefined;
    // Fault unregistered-client-generic-401: an unknown client is refused by the generic 401 (SVC-00004), not HPB-00106.
    if (!client && faults.has('unregistered-client-generic-401')) throw unauthorized('unknown client');
    if (!client) throw assertionInvalid('iss is not a registered client');
    // Fault assertion-sub-optional: sub is compared with the client only when the assertion has one.
    const subOptional = sub === undefined && faults.has('assertion-sub-optional');
    // Fault assertion-identity-from-sub: verified with iss's key, issued to the registered client sub names.
    const subClient = faults.has('assertion-identity-from-sub') && typeof sub === 'string' && sub !== client.clientId ? this.clients.get(sub) : undefined;

    const now = this.init.now();
    let exp: number;
    let jti: unknown;
    try {
      const payload = await this.verifyAssertionJwt(assertion, client, unsignedAccepted, {
        algorithms: [...ASSERTION_ALGS],
        issuer: faults.has('assertion-iss-not-checked') ? undefined : client.clientId,
        subject: faults.has('assertion-sub-not-checked') || subOptional || subClient ? undefined : client.clientId,
        audience: faults.has('aud-not-checked') ? undefined : [...new Set([this.tokenUrl, `${this.init.baseUrl}/auth/token`])],
        requiredClaims: [...(faults.has('assertion-exp-not-required') ? [] : ['exp']), 'jti', ...(subOptional ? [] : ['sub'])],
        clockTolerance: faults.has('assertion-exp-not-checked') ? Number.MAX_SAFE_INTEGER : undefined,
        currentDate: new Date(now),
      });
      exp = payload.exp!;
      jti = payload.jti;
    } catch (e) {
      throw assertionInvalid(describeVerifyFailure(e));
    }
    if (exp > now / 1000 + MAX_ASSERTION_AHEAD_SEC) throw assertionInvalid('exp is more than 5 minutes ahead');
    if (typeof jti !== 'string' || jti === '') throw assertionInvalid('jti must be a non-empty string');
    this.consumeJti(`${client.clientId} ${jti}`, exp * 1000, now);
    return subClient ?? client;
  }

  /** jose verification; planted faults skip the signature (the claims are still validated). */
  private async verifyAssertionJwt(assertion: string, client: ClientRecord, unsignedAccepted: boolean, options: JWTVerifyOptions): Promise<JWTPayload> {
    if (unsignedAccepted) return claimsOnly(assertion, options);
    try {
      return (await jwtVerify(assertion, this.keySetFor(client), options)).payload;
    } catch (e) {
      const { faults } = this.init;
      const skipped =
        (e instanceof joseErrors.JWSSignatureVerificationFailed && faults.has('assertion-signature-not-checked')) ||
        (e instanceof joseErrors.JWKSNoMatchingKey && faults.has('assertion-unknown-kid-accepted')) ||
        (keySetUnreachable(e) && faults.has('key-set-unreachable-token-issued'));
      if (!skipped) throw e;
      return claimsOnly(assertion, options);
    }
  }

  private keySetFor(client: ClientRecord): JWTVerifyGetKey {
    let set = this.keySets.get(client.clientId);
    if (!set) {
      // A kid the cached set lacks is looked up again at once (no cool-down): a rotated key works at its first use.
      set = client.jwksUri
        ? remoteKeySet(new URL(client.jwksUri), { timeoutMs: REMOTE_JWKS_TIMEOUT_MS, cacheMaxAgeMs: REMOTE_JWKS_CACHE_MS })
        : createLocalJWKSet(client.jwks!);
      this.keySets.set(client.clientId, set);
    }
    return set;
  }

  /** Reference choice: a jti may be used once until the assertion's exp. */
  private consumeJti(key: string, expMs: number, now: number): void {
    const until = this.usedJtis.get(key);
    if (until !== undefined && until > now) throw assertionInvalid('jti was already used');
    if (this.usedJtis.size >= CACHE_SWEEP_THRESHOLD) {
      for (const [k, t] of this.usedJtis) if (t <= now) this.usedJtis.delete(k);
    }
    this.usedJtis.set(key, expMs);
  }

  /**
   * No scope parameter: the full grant (reference choice). Otherwise every
   * requested scope must be covered by the grant; mode `narrow` keeps the
   * covered ones instead of refusing (and refuses when none is left).
   */
  private grantedScopes(client: ClientRecord, requested: string | null): string[] {
    const wanted = (requested ?? '')
      .split(' ')
      .filter((s) => s !== '')
      .slice(0, this.init.faults.has('only-first-scope-granted') ? 1 : undefined);
    if (wanted.length === 0) return [...client.scopes];
    // Fault token-excess-scope-granted: every requested scope is granted, held or not.
    if (this.init.faults.has('token-excess-scope-granted')) return [...new Set(wanted)];
    const covered = [...new Set(wanted)].filter((s) => hasScope(client.scopes, s));
    const excess = covered.length < new Set(wanted).size;
    if (excess && (this.init.modes.excessScope === 'refuse' || covered.length === 0)) {
      throw catalogError('HPB-00104', { message: "Insufficient scope: requested scope is outside the client's grant" });
    }
    return covered;
  }

  /**
   * Verifies `Authorization: Bearer <token>`. Missing, malformed or unknown
   * tokens: 401 SVC-00004; expired: 401 HPB-00107. Verified tokens are cached
   * by their string until they expire.
   */
  async authenticate(
    authorization: string | undefined,
    opts: { acceptExpired?: boolean; release?: 'R4' | 'R5'; expiresEarlyMs?: number; write?: boolean; update?: boolean; operation?: boolean } = {},
  ): Promise<Caller> {
    const match = authorization ? /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization) : null;
    if (!match) throw unauthorized('send Authorization: Bearer <ACCESS_TOKEN>');
    const token = match[1]!;
    const now = this.init.now();
    const cached = this.verified.get(token);
    if (cached) {
      if ((now >= cached.expMs - (opts.expiresEarlyMs ?? 0) && !opts.acceptExpired) || this.expiredClients.has(cached.caller.clientId))
        throw this.expired(cached.caller.clientId);
      if (!this.audienceServes(cached.aud, opts.release)) throw unauthorized('the access token was issued for another audience');
      return cached.caller;
    }
    let entry: VerifiedToken;
    if (this.init.modes.accessTokenFormat === 'opaque') {
      entry = await this.introspect(token);
      if (now >= entry.expMs && !opts.acceptExpired) throw this.expired(entry.caller.clientId);
    } else
      try {
        const minimal = this.init.modes.accessTokenClaims === 'minimal';
        const options: JWTVerifyOptions = {
          algorithms: [ACCESS_TOKEN_ALG],
          issuer: this.init.baseUrl,
          audience: [this.audience, this.releaseAudience('R4'), this.releaseAudience('R5')],
          requiredClaims: minimal ? ['exp', 'sub', 'jti'] : ['exp', 'sub', 'scope', 'org', 'key_kind'],
          currentDate: new Date(now),
        };
        // Fault expired-token-accepted-r5: the caller asks to verify the token as if its exp were still ahead.
        const payload = await this.verifyAccessToken(
          token,
          opts.acceptExpired ? { ...options, currentDate: new Date(0), clockTolerance: Number.MAX_SAFE_INTEGER } : options,
          opts.release,
          { write: opts.write === true, update: opts.update === true, operation: opts.operation === true },
        );
        const kept = minimal && typeof payload.jti === 'string' ? this.grants.get(payload.jti) : undefined;
        // Minimal claims: a token whose jti names no grant of its subject was not issued here.
        if (minimal && payload.scope === undefined && (!kept || kept.caller.clientId !== payload.sub)) throw unauthorized('the access token is not valid');
        entry = {
          caller: kept
            ? { ...kept.caller, scopes: [...kept.caller.scopes] }
            : {
                clientId: String(payload.sub),
                org: String(payload.org),
                keyKind: payload.key_kind === 'production' ? 'production' : 'sandbox',
                scopes: String(payload.scope)
                  .split(' ')
                  .filter((s) => s !== ''),
              },
          expMs: payload.exp! * 1000,
          aud: Array.isArray(payload.aud) ? payload.aud : [String(payload.aud)],
        };
      } catch (e) {
        if (e instanceof joseErrors.JWTExpired) throw this.expired(e.payload.sub);
        throw unauthorized('the access token is not valid');
      }
    if (this.expiredClients.has(entry.caller.clientId)) throw this.expired(entry.caller.clientId);
    if (!this.audienceServes(entry.aud, opts.release)) throw unauthorized('the access token was issued for another audience');
    // Fault token-refused-before-expiry-r5: the token counts as expired this long before its exp.
    if (opts.expiresEarlyMs && now >= entry.expMs - opts.expiresEarlyMs) throw this.expired(entry.caller.clientId);
    if (this.unverifiedR5.delete(token)) return entry.caller;
    if (this.verified.size >= CACHE_SWEEP_THRESHOLD) {
      for (const [k, v] of this.verified) if (v.expMs <= now) this.verified.delete(k);
    }
    this.verified.set(token, entry);
    return entry.caller;
  }

  /** The grant of an issued token (by jti, mode accessTokenClaims `minimal`; by handle, mode accessTokenFormat `opaque`) until it expires. */
  private rememberGrant(key: string, grant: VerifiedToken): void {
    const now = this.init.now();
    if (this.grants.size >= CACHE_SWEEP_THRESHOLD) {
      for (const [k, v] of this.grants) if (v.expMs <= now) this.grants.delete(k);
    }
    this.grants.set(key, grant);
  }

  /** Mode accessTokenFormat `opaque`: the server's signature over a handle it issued, and the grant kept for it. */
  private async introspect(token: string): Promise<VerifiedToken> {
    let handle: string;
    try {
      const { payload } = await compactVerify(token, this.verifyKey, { algorithms: [ACCESS_TOKEN_ALG] });
      handle = Buffer.from(payload).toString('base64url');
    } catch {
      throw unauthorized('the access token is not valid');
    }
    const kept = this.grants.get(handle);
    if (!kept) throw unauthorized('the access token is not valid');
    return { ...kept, caller: { ...kept.caller, scopes: [...kept.caller.scopes] } };
  }

  /**
   * The server's own signature check of an access token; planted faults accept forgeries:
   * an unverified signature, alg none, HS256 keyed with the server's public key, a kid the key
   * set lacks, a key embedded in the header, a client's registered key.
   */
  private async verifyAccessToken(
    token: string,
    options: JWTVerifyOptions,
    release: 'R4' | 'R5' | undefined,
    route: { write: boolean; update: boolean; operation: boolean },
  ): Promise<JWTPayload> {
    const { faults } = this.init;
    if (faults.has('bearer-signature-not-checked')) return claimsOnly(token, options);
    // Fault bearer-signature-not-checked-r5: the R5 surface checks the claims only (R4 verifies the signature).
    // Fault bearer-not-verified-on-writes: so do the write routes (POST, PUT: reads verify it); bearer-not-verified-on-updates:
    // the update route (PUT) only; bearer-not-verified-on-upload: the operation route ($upload) only.
    if (
      (release === 'R5' && faults.has('bearer-signature-not-checked-r5')) ||
      (route.write && faults.has('bearer-not-verified-on-writes')) ||
      (route.update && faults.has('bearer-not-verified-on-updates')) ||
      (route.operation && faults.has('bearer-not-verified-on-upload'))
    ) {
      try {
        await jwtVerify(token, this.verifyKey, options);
      } catch (e) {
        if (e instanceof joseErrors.JWTExpired) throw e;
        this.unverifiedR5.add(token);
      }
      return claimsOnly(token, options);
    }
    try {
      return (await jwtVerify(token, this.verifyKey, options)).payload;
    } catch (e) {
      if (e instanceof joseErrors.JWTExpired || faults.size === 0) throw e;
      const forged = await this.forgeryAccepted(token, options).catch(() => undefined);
      if (!forged) throw e;
      return forged;
    }
  }

  /** Planted faults only: the forged token's claims when a fault lets it through, else undefined. */
  private async forgeryAccepted(token: string, options: JWTVerifyOptions): Promise<JWTPayload | undefined> {
    const { faults } = this.init;
    const header = decodeProtectedHeader(token);
    const anyAlg = { ...options, algorithms: undefined };
    if (header.alg === 'none' && faults.has('bearer-alg-none-accepted')) return claimsOnly(token, options);
    if (header.alg === 'HS256' && faults.has('bearer-hs256-public-key-accepted')) {
      // Key confusion: the header's alg is trusted and the server's public key (SPKI PEM) fed to HMAC.
      const pem = KeyObject.from(this.verifyKey).export({ type: 'spki', format: 'pem' }).toString();
      return (await jwtVerify(token, createSecretKey(Buffer.from(pem)), { ...options, algorithms: ['HS256'] })).payload;
    }
    if (header.kid !== this.publicJwk.kid && faults.has('bearer-unknown-kid-accepted')) return claimsOnly(token, options);
    if (header.jwk !== undefined && faults.has('bearer-embedded-jwk-accepted')) return (await jwtVerify(token, EmbeddedJWK, anyAlg)).payload;
    // Fault bearer-jku-followed: the key set the header's jku names is fetched and trusted.
    if (typeof header.jku === 'string' && faults.has('bearer-jku-followed')) {
      const keys = remoteKeySet(new URL(header.jku), { timeoutMs: REMOTE_JWKS_TIMEOUT_MS, cacheMaxAgeMs: REMOTE_JWKS_CACHE_MS });
      return (await jwtVerify(token, keys, anyAlg)).payload;
    }
    if (faults.has('bearer-client-key-accepted')) {
      // A key the server trusts for something else: any registered client's. The grant is the claim's, else the client's.
      const { iss, sub } = decodeJwt(token);
      const client = this.clients.get(String(sub ?? iss));
      if (!client) return undefined;
      const payload = (await jwtVerify(token, this.keySetFor(client), { currentDate: options.currentDate })).payload;
      return {
        ...payload,
        sub: client.clientId,
        // The key is trusted, whatever the token names as its audience (a client assertion names the token endpoint).
        aud: this.audience,
        org: payload.org ?? client.org,
        key_kind: payload.key_kind ?? client.keyKind,
        scope: payload.scope ?? client.scopes.join(' '),
      };
    }
    return undefined;
  }

  /** 401 HPB-00107. Fault `new-token-refused-after-expiry` remembers the client and refuses its later tokens too. */
  private expired(clientId: unknown): FhirError {
    if (this.init.faults.has('new-token-refused-after-expiry') && typeof clientId === 'string') this.expiredClients.add(clientId);
    return catalogError('HPB-00107');
  }
}

/** Claim validation without any signature (planted faults only): the payload re-wrapped as an unsecured JWT. */
function claimsOnly(jwt: string, options: JWTVerifyOptions): JWTPayload {
  return UnsecuredJWT.decode(`${base64url.encode('{"alg":"none"}')}.${jwt.split('.')[1] ?? ''}.`, options).payload;
}

/** The client's key set could not be fetched: no connection, a timeout, a non-200 or non-JSON answer. */
function keySetUnreachable(e: unknown): boolean {
  if (e instanceof joseErrors.JWKSTimeout) return true;
  if (!(e instanceof joseErrors.JOSEError)) return true;
  // jose raises the base class itself only for a key-set answer that is not a 200 JSON document.
  return Object.getPrototypeOf(e) === joseErrors.JOSEError.prototype;
}

function describeVerifyFailure(e: unknown): string {
  if (e instanceof joseErrors.JWKSNoMatchingKey) return 'no key of the client has this kid and this alg';
  if (e instanceof joseErrors.JWKSTimeout) return "the client's key set is not reachable (timeout)";
  if (e instanceof joseErrors.JWSSignatureVerificationFailed) return 'signature verification failed';
  if (e instanceof joseErrors.JWTExpired) return 'assertion expired';
  if (e instanceof joseErrors.JWTClaimValidationFailed) return `claim ${e.claim} is missing or invalid`;
  if (e instanceof joseErrors.JOSEAlgNotAllowed) return ALGS_RULE;
  if (keySetUnreachable(e)) return "the client's key set is not reachable";
  if (e instanceof joseErrors.JOSEError) return `assertion rejected (${e.code})`;
  return "the client's key set is not reachable";
}
