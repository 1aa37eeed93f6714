/**
 * Clients registered with the reference besides its fixture clients
 * (fixtures/reference/clients.json): a vendor's own key from `fhir-conformance init`,
 * so the onboarding path can be walked locally. `serve --client ID=JWKS_FILE_OR_URL`
 * and `serve --clients FILE` end up here. Unset fields take the fixture clients'
 * defaults (organization org-a, a sandbox key, the fixture `main` client's scopes).
 */
import { createPublicKey, type JsonWebKey as NodeJwk } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { JWK } from 'jose';
import { algsForKey, DEFAULT_RSA_ALG, isSigningAlg, SIGNING_ALGS, type SigningAlg } from '../auth/algorithms.js';
import type { ClientRecord } from './auth.js';
import type { ExtraClient } from './types.js';

export type { ExtraClient } from './types.js';

/** The spec's per-key ceiling per window. */
const SPEC_KEY_CEILING = 60;

export const EXTRA_CLIENT_DEFAULTS = { org: 'org-a', keyKind: 'sandbox' as const };

/** Why `c` cannot be registered, or undefined. */
function problemOf(c: Partial<ExtraClient>): string | undefined {
  if (typeof c.clientId !== 'string' || !/^\S{1,200}$/.test(c.clientId)) return 'clientId must be a non-empty string without spaces';
  if (!c.jwks && !c.jwksUri) return 'needs jwks (a public JWK set) or jwksUri';
  if (c.jwks && (!Array.isArray(c.jwks.keys) || c.jwks.keys.length === 0)) return 'jwks must be { "keys": [ ...public JWKs ] } with at least one key';
  if (c.jwks?.keys.some((k) => 'd' in k)) return 'jwks holds a private key: register the public key set only';
  for (const [i, k] of (c.jwks?.keys ?? []).entries()) {
    const problem = keyProblem(k);
    if (problem) return `jwks.keys[${i}] ${problem}`;
  }
  if (c.jwksUri !== undefined && !/^https?:\/\//.test(c.jwksUri)) return 'jwksUri must be an http(s) URL';
  if (c.keyKind !== undefined && c.keyKind !== 'sandbox' && c.keyKind !== 'production') return 'keyKind must be sandbox or production';
  if (c.scopes !== undefined && (!Array.isArray(c.scopes) || c.scopes.some((s) => typeof s !== 'string'))) return 'scopes must be a list of scope strings';
  return undefined;
}

/** The algorithms a registered public JWK verifies: its `alg`, else those of its kind of key (empty: none the reference verifies). */
export function algsForJwk(jwk: JWK): SigningAlg[] {
  if (jwk.alg !== undefined) return isSigningAlg(jwk.alg) ? [jwk.alg] : [];
  try {
    return algsForKey(createPublicKey({ key: jwk as NodeJwk, format: 'jwk' }));
  } catch {
    return [];
  }
}

function keyProblem(jwk: JWK): string | undefined {
  if (jwk.alg !== undefined && !isSigningAlg(jwk.alg)) return `has "alg": "${String(jwk.alg)}"; the reference verifies ${SIGNING_ALGS.join(', ')}`;
  if (algsForJwk(jwk).length === 0)
    return `(kty ${String(jwk.kty)}${jwk.crv ? `, crv ${jwk.crv}` : ''}) is not a key of ${SIGNING_ALGS.join(', ')} (RSA >= 2048 bits, EC P-256/P-384/P-521, OKP Ed25519)`;
  if (jwk.alg !== undefined && algsForJwk({ ...jwk, alg: undefined }).every((a) => a !== jwk.alg))
    return `has "alg": "${jwk.alg}", which its key (kty ${String(jwk.kty)}${jwk.crv ? `, crv ${jwk.crv}` : ''}) cannot sign`;
  return undefined;
}

/** A client record for the authority, with the fixture clients' defaults filled in. */
export function toClientRecord(c: ExtraClient, fixtureClients: readonly ClientRecord[]): ClientRecord {
  const problem = problemOf(c);
  if (problem) throw new Error(`client ${c.clientId ?? '(no id)'}: ${problem}`);
  if (fixtureClients.some((f) => f.clientId === c.clientId))
    throw new Error(`client ${c.clientId} is already a fixture client of the reference; pick another id`);
  const main = fixtureClients.find((f) => f.role === 'main');
  // The first key's algorithm (an RSA key without alg: the suite's default); verification goes by the whole key set.
  const first = c.jwks?.keys[0];
  const algs = first ? algsForJwk(first) : [];
  const alg = algs.length > 1 ? DEFAULT_RSA_ALG : (algs[0] ?? 'ES384');
  return {
    clientId: c.clientId,
    role: 'registered',
    org: c.org ?? EXTRA_CLIENT_DEFAULTS.org,
    keyKind: c.keyKind ?? EXTRA_CLIENT_DEFAULTS.keyKind,
    alg,
    scopes: c.scopes ?? [...(main?.scopes ?? [])],
    ...(c.jwks ? { jwks: c.jwks } : { jwksUri: c.jwksUri! }),
    // The spec's default ceiling, which a config that declares none (init's) assumes.
    rateLimitPerMinute: c.rateLimitPerMinute ?? SPEC_KEY_CEILING,
  };
}

/** Reads a public JWK set file (what `init` writes as keys/main.public.jwks.json; a single JWK is accepted too). */
export async function readJwksFile(path: string): Promise<{ keys: JWK[] }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new Error(`cannot read the key set ${path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (e as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error(`${path} is not JSON (expected a public JWK set { "keys": [...] })`);
  }
  const d = doc as { keys?: unknown; kty?: unknown };
  if (Array.isArray(d.keys)) return { keys: d.keys as JWK[] };
  if (typeof d.kty === 'string') return { keys: [d as JWK] };
  throw new Error(`${path} is not a JWK set (expected { "keys": [...] })`);
}

/** `ID=JWKS_FILE_OR_URL` (the `serve --client` flag), with scopes/org defaults for every such flag. */
export async function parseClientFlag(flag: string, defaults: Pick<ExtraClient, 'org' | 'scopes' | 'keyKind'> = {}, cwd = process.cwd()): Promise<ExtraClient> {
  const eq = flag.indexOf('=');
  const clientId = eq === -1 ? '' : flag.slice(0, eq).trim();
  const source = eq === -1 ? '' : flag.slice(eq + 1).trim();
  if (!clientId || !source) throw new Error(`--client takes ID=JWKS_FILE_OR_URL (e.g. my-client=keys/main.public.jwks.json), got "${flag}"`);
  const keys = /^https?:\/\//.test(source) ? { jwksUri: source } : { jwks: await readJwksFile(resolve(cwd, source)) };
  return { clientId, ...keys, ...defaults };
}

/**
 * A clients file: `{ "clients": [ { "clientId", "jwks" | "jwksFile" | "jwksUri", "org"?, "keyKind"?, "scopes"? } ] }`
 * (the fixture registry's format; `jwksFile` is resolved against the file's folder).
 */
export async function loadClientsFile(path: string): Promise<ExtraClient[]> {
  let doc: { clients?: unknown };
  try {
    doc = JSON.parse(await readFile(path, 'utf8')) as { clients?: unknown };
  } catch (e) {
    throw new Error(`cannot read the clients file ${path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (e as Error).message}`);
  }
  if (!Array.isArray(doc.clients)) throw new Error(`${path}: expected { "clients": [ ... ] }`);
  const out: ExtraClient[] = [];
  for (const [i, raw] of (doc.clients as Array<ExtraClient & { jwksFile?: string }>).entries()) {
    const { jwksFile, ...c } = raw;
    const client = jwksFile ? { ...c, jwks: await readJwksFile(resolve(path, '..', jwksFile)) } : c;
    const problem = problemOf(client);
    if (problem) throw new Error(`${path}: clients[${i}]: ${problem}`);
    out.push(client);
  }
  return out;
}
