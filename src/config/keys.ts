/** Reads a client's private key (JWK JSON or PKCS#8 PEM) from a file or an environment variable. */
import { readFile } from 'node:fs/promises';
import { createPrivateKey, createPublicKey, type JsonWebKey as NodeJwk, type KeyObject } from 'node:crypto';
import { resolve } from 'node:path';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { ConformanceError } from '../errors.js';
import type { KeySource } from './validate.js';

export type SigningAlg = 'RS384' | 'ES384';

export interface LoadedKey {
  privateKey: KeyObject;
  /** Public JWK with `kid`, `alg` and `use: "sig"`. */
  publicJwk: JWK;
  kid: string;
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

/** Checks that the key can sign with `alg` (ES384: EC P-384; RS384: RSA >= 2048 bits). */
function checkKeyType(key: KeyObject, alg: SigningAlg, field: string, algField: string): void {
  const details = key.asymmetricKeyDetails ?? {};
  const kind = key.asymmetricKeyType === 'ec' ? `EC ${details.namedCurve ?? ''}`.trim() : (key.asymmetricKeyType ?? 'unknown');
  if (alg === 'ES384' && !(key.asymmetricKeyType === 'ec' && details.namedCurve === 'secp384r1')) {
    throw invalid(field, `is a ${kind} key, which cannot sign ES384`, `give an EC P-384 key, or set ${algField} to the key's algorithm`);
  }
  if (alg === 'RS384') {
    if (key.asymmetricKeyType !== 'rsa') {
      throw invalid(field, `is a ${kind} key, which cannot sign RS384`, `give an RSA key, or set ${algField} to the key's algorithm`);
    }
    if ((details.modulusLength ?? 0) < 2048) {
      throw invalid(field, `is an RSA key of ${details.modulusLength} bits`, 'give an RSA key of at least 2048 bits');
    }
  }
}

/**
 * Loads and checks one client's key. `field` is the config path of the client, e.g. `clients[0]`.
 * The kid is the configured one, else the JWK's own `kid`, else the RFC 7638 thumbprint.
 */
export async function loadClientKey(source: KeySource, alg: SigningAlg, configuredKid: string | undefined, baseDir: string, field: string): Promise<LoadedKey> {
  const keyField = `${field}.privateKey`;
  const text = await readKeyText(source, baseDir, keyField);
  const { key, jwkKid, jwkAlg } = parseKey(text, keyField);
  checkKeyType(key, alg, keyField, `${field}.alg`);
  if (jwkAlg !== undefined && jwkAlg !== alg) {
    throw invalid(`${field}.alg`, `is ${alg} but the key's JWK declares "alg": "${jwkAlg}"`, `set ${field}.alg to "${jwkAlg}" or use a key for ${alg}`);
  }
  if (configuredKid !== undefined && jwkKid !== undefined && configuredKid !== jwkKid) {
    throw invalid(`${field}.kid`, `is "${configuredKid}" but the key's JWK has kid "${jwkKid}"`, `set ${field}.kid to "${jwkKid}" or remove it`);
  }
  const exported = createPublicKey(key).export({ format: 'jwk' }) as JWK;
  for (const m of PRIVATE_JWK_MEMBERS) delete (exported as Record<string, unknown>)[m];
  const kid = configuredKid ?? jwkKid ?? (await calculateJwkThumbprint(exported));
  return { privateKey: key, kid, publicJwk: { ...exported, kid, alg, use: 'sig' } };
}
