/**
 * The JWS algorithms a client key may sign its assertions with (the spec names none): which key
 * each needs, how Node signs with it, and which of them a given key can use.
 */
import { constants, type KeyObject, type SignKeyObjectInput } from 'node:crypto';

export const SIGNING_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];

/** An RSA key signs with this one unless the config, the JWK or the target says otherwise. */
export const DEFAULT_RSA_ALG: SigningAlg = 'RS384';
/** The algorithms of an RSA key, in the order the suite prefers them when nothing else decides. */
const RSA_ALGS: readonly SigningAlg[] = ['RS384', 'RS256', 'RS512', 'PS256', 'PS384', 'PS512'];
/** Node's names of the curves of ES256, ES384, ES512. */
const EC_ALG_BY_CURVE: Record<string, SigningAlg> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };
/** JWK `crv` names of the same curves. */
export const JWK_CURVE_BY_ALG: Partial<Record<SigningAlg, string>> = { ES256: 'P-256', ES384: 'P-384', ES512: 'P-521', EdDSA: 'Ed25519' };
const MIN_RSA_BITS = 2048;

export function isSigningAlg(value: unknown): value is SigningAlg {
  return typeof value === 'string' && (SIGNING_ALGS as readonly string[]).includes(value);
}

/** `RSA 2048-bit`, `EC P-384`, `Ed25519`: the key as a message may name it (never its material). */
export function describeKey(key: KeyObject): string {
  const d = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'rsa') return `RSA ${d.modulusLength ?? '?'}-bit`;
  if (key.asymmetricKeyType === 'ec') {
    const alg = EC_ALG_BY_CURVE[d.namedCurve ?? ''];
    return `EC ${alg ? JWK_CURVE_BY_ALG[alg] : (d.namedCurve ?? '')}`.trim();
  }
  if (key.asymmetricKeyType === 'ed25519') return 'Ed25519';
  return key.asymmetricKeyType ?? 'unknown';
}

/**
 * The algorithms `key` (private or public) can sign with, the suite's preference first:
 * EC P-256/P-384/P-521 one each, Ed25519 EdDSA, RSA (at least 2048 bits) RS* and PS*; none for anything else.
 */
export function algsForKey(key: KeyObject): SigningAlg[] {
  const d = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return (d.modulusLength ?? 0) >= MIN_RSA_BITS ? [...RSA_ALGS] : [];
    case 'ec': {
      const alg = EC_ALG_BY_CURVE[d.namedCurve ?? ''];
      return alg ? [alg] : [];
    }
    case 'ed25519':
      return ['EdDSA'];
    default:
      return [];
  }
}

/** What a key must be to sign with `alg`, for messages. */
export function keyNeededFor(alg: SigningAlg): string {
  if (alg.startsWith('RS') || alg.startsWith('PS')) return `an RSA key of at least ${MIN_RSA_BITS} bits`;
  return alg === 'EdDSA' ? 'an Ed25519 (OKP) key' : `an EC ${JWK_CURVE_BY_ALG[alg]} key`;
}

/** The hash and options Node's `crypto.sign` takes for `alg` (a JWS signature: raw r||s for ECDSA, PSS salt = hash length). */
export function nodeSignParams(alg: SigningAlg, key: KeyObject): { hash: string | null; key: KeyObject | SignKeyObjectInput } {
  if (alg === 'EdDSA') return { hash: null, key };
  const bits = alg.slice(2);
  const hash = `sha${bits}`;
  if (alg.startsWith('ES')) return { hash, key: { key, dsaEncoding: 'ieee-p1363' } };
  if (alg.startsWith('PS')) return { hash, key: { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: Number(bits) / 8 } };
  return { hash, key };
}

/**
 * The algorithm to sign with, from what the key allows (`candidates`, the preferred first) and,
 * when the target publishes `token_endpoint_auth_signing_alg_values_supported`, what it lists:
 * the first algorithm of the target's list that the key allows (its order is its preference).
 * Undefined when the two have nothing in common; the first candidate when the target lists nothing.
 */
export function chooseSigningAlg(candidates: readonly SigningAlg[], published: readonly string[] | undefined): SigningAlg | undefined {
  if (published === undefined) return candidates[0];
  return published.find((a): a is SigningAlg => isSigningAlg(a) && candidates.includes(a));
}

/** The target's published list, when smart-configuration has one (an array of strings), else undefined. */
export function publishedSigningAlgs(smartConfiguration: unknown): string[] | undefined {
  const list = (smartConfiguration as { token_endpoint_auth_signing_alg_values_supported?: unknown } | undefined)
    ?.token_endpoint_auth_signing_alg_values_supported;
  return Array.isArray(list) && list.length > 0 && list.every((a) => typeof a === 'string') ? list : undefined;
}
