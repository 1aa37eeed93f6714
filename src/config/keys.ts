/** Reads a client's private key (JWK JSON or PKCS#8 PEM) from a file or an environment variable. */
import { readFile } from 'node:fs/promises';
import { createPrivateKey, createPublicKey, type JsonWebKey as NodeJwk, type KeyObject } from 'node:crypto';
import { resolve } from 'node:path';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { algsForKey, describeKey, isSigningAlg, keyNeededFor, SIGNING_ALGS, type SigningAlg } from '../auth/algorithms.js';
import { ConformanceError } from '../errors.js';
import type { KeySource } from './validate.js';

export type { SigningAlg } from '../auth/algorithms.js';

/** Where a client's algorithm came from: the config's `alg`, the private JWK's `alg`, or the kind of key. */
export type AlgSource = 'config' | 'jwk' | 'key';

export interface LoadedKey {
  privateKey: KeyObject;
  /** Public JWK with `kid`, `alg` (the first of `algs`) and `use: "sig"`. */
  publicJwk: JWK;
  kid: string;
  /** The algorithms the client may sign with, the preferred first (one, unless an RSA key leaves the choice open). */
  algs: SigningAlg[];
  algSource: AlgSource;
}

const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

function invalid(field: string, message: string, fix: string): ConformanceError {
  return new ConformanceError('ERR_CONFIG_INVALID', `${field} ${message}`, { field, fix });
}

async function readKeyText(source: KeySource, baseDir: string, field: string): Promise<string> {
  if ('file' in source) {
    const path = resolve(baseDir, source.file);
    try {
      return await readFile(path, 'utf8');
    } catch (e) {
      const reason = (e as NodeJS.ErrnoException).code ?? 'unreadable';
      throw invalid(`${field}.file`, `cannot be read (${reason}: ${path})`, 'give a path, relative to the config file, of a readable key file');
    }
  }
  const value = process.env[source.env];
  if (value === undefined || value.trim() === '') {
    throw invalid(
      `${field}.env`,
      `names the environment variable ${source.env}, which is not set`,
      `export ${source.env} with the private key (JWK JSON or PKCS#8 PEM)`,
    );
  }
  return value;
}

/** Parses key text; never echoes it. Returns the private KeyObject and, for a JWK, the JWK's own kid/alg. */
function parseKey(text: string, field: string): { key: KeyObject; jwkKid?: string; jwkAlg?: string } {
  const trimmed = text.trim();
  const unparsable = () =>
    invalid(field, 'does not hold a private key that parses', 'give a private JWK (JSON with "d") or a PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----")');
  if (trimmed.startsWith('{')) {
    let jwk: Record<string, unknown>;
    try {
      jwk = JSON.parse(trimmed);
    } catch {
      throw unparsable();
    }
    if (typeof jwk.d !== 'string') {
      throw invalid(field, 'holds a JWK without private material', 'give the private JWK (with "d"), not the public one');
    }
    try {
      const key = createPrivateKey({ key: jwk as NodeJwk, format: 'jwk' });
      return { key, jwkKid: typeof jwk.kid === 'string' ? jwk.kid : undefined, jwkAlg: typeof jwk.alg === 'string' ? jwk.alg : undefined };
    } catch {
      throw unparsable();
    }
  }
  if (!trimmed.startsWith('-----BEGIN')) throw unparsable();
  if (trimmed.includes('ENCRYPTED')) {
    throw invalid(field, 'holds an encrypted PEM', 'give an unencrypted PKCS#8 PEM (openssl pkcs8 -topk8 -nocrypt)');
  }
  try {
    return { key: createPrivateKey({ key: trimmed, format: 'pem' }) };
  } catch {
    throw unparsable();
  }
}

/** Checks that the key can sign with `alg` (docs/config.md: the key each algorithm needs). */
function checkKeyType(key: KeyObject, alg: SigningAlg, field: string, algField: string): void {
  if (algsForKey(key).includes(alg)) return;
  const d = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'rsa' && (d.modulusLength ?? 0) < 2048 && keyNeededFor(alg).startsWith('an RSA')) {
    throw invalid(field, `is an RSA key of ${d.modulusLength} bits`, 'give an RSA key of at least 2048 bits');
  }
  const a = /^[aeiou]/i.test(describeKey(key)) ? 'an' : 'a';
  throw invalid(field, `is ${a} ${describeKey(key)} key, which cannot sign ${alg}`, `give ${keyNeededFor(alg)}, or set ${algField} to the key's algorithm`);
}

/**
 * Loads and checks one client's key. `field` is the config path of the client, e.g. `clients[0]`.
 * The kid is the configured one, else the JWK's own `kid`, else the RFC 7638 thumbprint.
 * The algorithms: the configured `alg`, else the JWK's own `alg`, else those the kind of key signs
 * (an RSA key: RS* and PS*, RS384 first; the run may pick another the target lists, see chooseSigningAlg).
 */
export async function loadClientKey(
  source: KeySource,
  alg: SigningAlg | undefined,
  configuredKid: string | undefined,
  baseDir: string,
  field: string,
): Promise<LoadedKey> {
  const keyField = `${field}.privateKey`;
  const text = await readKeyText(source, baseDir, keyField);
  const { key, jwkKid, jwkAlg } = parseKey(text, keyField);
  if (alg !== undefined) checkKeyType(key, alg, keyField, `${field}.alg`);
  if (alg !== undefined && jwkAlg !== undefined && jwkAlg !== alg) {
    throw invalid(`${field}.alg`, `is ${alg} but the key's JWK declares "alg": "${jwkAlg}"`, `set ${field}.alg to "${jwkAlg}" or use a key for ${alg}`);
  }
  if (alg === undefined && jwkAlg !== undefined) {
    if (!isSigningAlg(jwkAlg)) {
      throw invalid(
        keyField,
        `is a JWK whose "alg" is "${jwkAlg}", which is not a signing algorithm the suite supports`,
        `use a key for one of ${SIGNING_ALGS.join(', ')}`,
      );
    }
    checkKeyType(key, jwkAlg, keyField, `${field}.alg`);
  }
  const algs = alg !== undefined ? [alg] : jwkAlg !== undefined ? [jwkAlg as SigningAlg] : algsForKey(key);
  if (algs.length === 0) {
    const d = key.asymmetricKeyDetails ?? {};
    throw invalid(
      keyField,
      key.asymmetricKeyType === 'rsa'
        ? `is an RSA key of ${d.modulusLength} bits`
        : `is ${/^[aeiou]/i.test(describeKey(key)) ? 'an' : 'a'} ${describeKey(key)} key, which signs none of ${SIGNING_ALGS.join(', ')}`,
      key.asymmetricKeyType === 'rsa' ? 'give an RSA key of at least 2048 bits' : 'give an RSA (>= 2048 bits), EC P-256, P-384 or P-521, or Ed25519 key',
    );
  }
  if (configuredKid !== undefined && jwkKid !== undefined && configuredKid !== jwkKid) {
    throw invalid(`${field}.kid`, `is "${configuredKid}" but the key's JWK has kid "${jwkKid}"`, `set ${field}.kid to "${jwkKid}" or remove it`);
  }
  const exported = createPublicKey(key).export({ format: 'jwk' }) as JWK;
  for (const m of PRIVATE_JWK_MEMBERS) delete (exported as Record<string, unknown>)[m];
  const kid = configuredKid ?? jwkKid ?? (await calculateJwkThumbprint(exported));
  return {
    privateKey: key,
    kid,
    publicJwk: { ...exported, kid, alg: algs[0], use: 'sig' },
    algs,
    algSource: alg !== undefined ? 'config' : jwkAlg !== undefined ? 'jwk' : 'key',
  };
}
