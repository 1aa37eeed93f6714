/**
 * Signed client assertions (private_key_jwt) and their deliberate corruptions for negative checks,
 * in whichever algorithm the client signs with (src/auth/algorithms.ts: RS*, PS*, ES*, EdDSA).
 * The JWS is assembled by hand so header overrides (even `alg`) reach the wire unchanged, which
 * jose's signers cannot do (they sign with the algorithm the header names); the signature itself
 * is always computed with the algorithm named by `signWith` (the tests verify each with jose).
 */
import { createHmac, createPublicKey, generateKeyPair, KeyObject, randomUUID, sign, type webcrypto } from 'node:crypto';
import { promisify } from 'node:util';
import type { ResolvedClient } from '../config/index.js';
import { registerSecret } from '../redact.js';
import { JWK_CURVE_BY_ALG, nodeSignParams, type SigningAlg } from './algorithms.js';
import type { AssertionOverrides } from './types.js';

/** Assertion lifetime: short, the token request follows at once. */
export const ASSERTION_LIFETIME_SEC = 60;

type AssertionClient = Pick<ResolvedClient, 'clientId' | 'kid' | 'alg' | 'privateKey'>;

const generateKeyPairAsync = promisify(generateKeyPair);
const foreignKeys = new Map<SigningAlg, Promise<KeyObject>>();

/** A key of the same algorithm (RSA 2048, EC on its curve, Ed25519) the target has never seen; generated once per alg and process. */
export function foreignKey(alg: SigningAlg): Promise<KeyObject> {
  let key = foreignKeys.get(alg);
  if (!key) {
    key = (
      alg === 'EdDSA'
        ? generateKeyPairAsync('ed25519')
        : alg.startsWith('ES')
          ? generateKeyPairAsync('ec', { namedCurve: JWK_CURVE_BY_ALG[alg]! })
          : generateKeyPairAsync('rsa', { modulusLength: 2048 })
    ).then((p) => p.privateKey);
    foreignKeys.set(alg, key);
  }
  return key;
}

function toKeyObject(key: webcrypto.CryptoKey | KeyObject): KeyObject {
  return key instanceof KeyObject ? key : KeyObject.from(key);
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

function signAsymmetric(alg: SigningAlg, key: KeyObject, input: string): Buffer {
  const params = nodeSignParams(alg, key);
  return sign(params.hash, Buffer.from(input), params.key);
}

/**
 * The HMAC secret of the key-confusion attack: the client's public key as SPKI PEM text,
 * which is what a verifier that trusts the header's `alg` would feed to HS256.
 */
export function publicKeyPem(client: AssertionClient): string {
  return createPublicKey(toKeyObject(client.privateKey)).export({ type: 'spki', format: 'pem' }).toString();
}

function corrupt(signature: Buffer): Buffer {
  if (signature.length === 0) return Buffer.from('corrupt');
  const out = Buffer.from(signature);
  out[out.length >> 1] ^= 0xff;
  return out;
}

/**
 * A client assertion: `iss` = `sub` = clientId, `aud` = token URL, `iat`, `exp` = iat + 60 s,
 * random `jti`; header `alg` + `kid` + `typ`. Overrides replace claims/header fields or sign
 * wrongly on purpose. The result is registered as a secret before it is returned.
 */
export async function createAssertion(
  client: AssertionClient,
  audience: string,
  overrides: AssertionOverrides = {},
  nowMs: number = Date.now(),
): Promise<string> {
  const iat = Math.floor(nowMs / 1000);
  const claims: Record<string, unknown> = {
    iss: overrides.iss ?? client.clientId,
    sub: overrides.sub ?? client.clientId,
    aud: overrides.aud ?? audience,
    iat: overrides.iat ?? iat,
    exp: overrides.exp ?? iat + ASSERTION_LIFETIME_SEC,
    jti: overrides.jti ?? randomUUID(),
  };
  for (const name of overrides.omit ?? []) delete claims[name];

  const signWith = overrides.signWith ?? 'client';
  const alg = signWith === 'none' ? 'none' : signWith === 'hs256-public-key' ? 'HS256' : client.alg;
  const header = { alg, kid: client.kid, typ: 'JWT', ...overrides.header };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;

  let signature: Buffer;
  switch (signWith) {
    case 'none':
      signature = Buffer.alloc(0);
      break;
    case 'hs256-public-key':
      signature = createHmac('sha256', publicKeyPem(client)).update(input).digest();
      break;
    case 'foreign':
      signature = signAsymmetric(client.alg, await foreignKey(client.alg), input);
      break;
    case 'client':
      signature = signAsymmetric(client.alg, toKeyObject(client.privateKey), input);
      break;
  }
  if (overrides.corruptSignature) signature = corrupt(signature);

  const jwt = `${input}.${b64url(signature)}`;
  registerSecret(jwt);
  return jwt;
}
