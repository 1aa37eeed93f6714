/**
 * The config's `tls` block: a private CA, a client certificate and its key (mutual TLS), the key's
 * passphrase, SNI, the lowest TLS version. Certificates, keys and passphrases come from files or
 * environment variables, like the clients' private keys, never from the config text; the key and
 * the passphrase are registered as secrets as soon as they are read.
 */
import { readFile } from 'node:fs/promises';
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { resolve } from 'node:path';
import { ConformanceError } from '../errors.js';
import type { TlsSettings } from '../http/dispatcher.js';
import { registerSecret } from '../redact.js';
import type { KeySource, RawConfig } from './validate.js';

export type RawTls = NonNullable<RawConfig['tls']>;

/** Where each piece came from (never the piece itself): what reports show. */
export interface TlsSources {
  ca?: KeySource;
  cert?: KeySource;
  key?: KeySource;
  passphrase?: KeySource;
  servername?: string;
  minVersion?: TlsSettings['minVersion'];
}

function invalid(field: string, message: string, fix: string): ConformanceError {
  return new ConformanceError('ERR_CONFIG_INVALID', `${field} ${message}`, { field, fix });
}

async function readSource(source: KeySource, baseDir: string, field: string, what: string, env: NodeJS.ProcessEnv): Promise<string> {
  if ('file' in source) {
    const path = resolve(baseDir, source.file);
    try {
      return await readFile(path, 'utf8');
    } catch (e) {
      const reason = (e as NodeJS.ErrnoException).code ?? 'unreadable';
      throw invalid(`${field}.file`, `cannot be read (${reason}: ${path})`, `give a path, relative to the config file, of a readable file holding ${what}`);
    }
  }
  const value = env[source.env];
  if (value === undefined || value === '') {
    throw invalid(`${field}.env`, `names the environment variable ${source.env}, which is not set`, `export ${source.env} with ${what}`);
  }
  return value;
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The PEM certificates of `text`; throws naming `field` when there is none or one does not parse. */
function certificates(text: string, field: string): X509Certificate[] {
  const blocks = text.match(PEM_CERT) ?? [];
  if (blocks.length === 0) throw invalid(field, 'does not hold a PEM certificate', 'give a PEM file with "-----BEGIN CERTIFICATE-----" blocks');
  return blocks.map((b) => {
    try {
      return new X509Certificate(b);
    } catch {
      throw invalid(field, 'holds a certificate that does not parse', 'give PEM certificates (openssl x509 -in FILE -text shows whether they read)');
    }
  });
}

function privateKey(text: string, passphrase: string | undefined): KeyObject {
  if (!text.includes('PRIVATE KEY-----'))
    throw invalid('tls.key', 'does not hold a PEM private key', 'give the client certificate\'s private key as PEM ("-----BEGIN PRIVATE KEY-----")');
  const encrypted = /ENCRYPTED/.test(text);
  if (encrypted && passphrase === undefined) throw invalid('tls.key', 'is encrypted and no passphrase is given', 'add tls.passphrase ({"env": "VARIABLE"})');
  try {
    return createPrivateKey({ key: text, format: 'pem', ...(passphrase !== undefined ? { passphrase } : {}) });
  } catch {
    if (encrypted) throw invalid('tls.passphrase', 'does not decrypt tls.key', 'give the passphrase the key was encrypted with');
    throw invalid('tls.key', 'does not hold a private key that parses', 'give a PEM private key (PKCS#8, PKCS#1 or SEC1)');
  }
}

/** Reads and checks the `tls` block; undefined when the config has none. */
export async function loadTls(
  raw: RawTls | undefined,
  baseDir: string,
  env: NodeJS.ProcessEnv,
): Promise<{ settings: TlsSettings; sources: TlsSources } | undefined> {
  if (!raw) return undefined;
  if (raw.cert && !raw.key) throw invalid('tls.key', 'is required with tls.cert', "add tls.key: where the client certificate's private key is read from");
  if (raw.key && !raw.cert) throw invalid('tls.cert', 'is required with tls.key', 'add tls.cert: where the client certificate is read from');
  if (raw.passphrase && !raw.key) throw invalid('tls.passphrase', 'is given without tls.key', 'remove tls.passphrase, or add tls.cert and tls.key');
  const settings: TlsSettings = {};
  if (raw.passphrase) {
    settings.passphrase = (await readSource(raw.passphrase, baseDir, 'tls.passphrase', 'the key passphrase', env)).replace(/\r?\n$/, '');
    registerSecret(settings.passphrase);
  }
  if (raw.ca) {
    settings.ca = await readSource(raw.ca, baseDir, 'tls.ca', 'the CA certificate (PEM)', env);
    certificates(settings.ca, 'tls.ca');
  }
  if (raw.cert && raw.key) {
    settings.key = await readSource(raw.key, baseDir, 'tls.key', "the client certificate's private key (PEM)", env);
    registerSecret(settings.key);
    settings.cert = await readSource(raw.cert, baseDir, 'tls.cert', 'the client certificate (PEM)', env);
    const [leaf] = certificates(settings.cert, 'tls.cert');
    const key = privateKey(settings.key, settings.passphrase);
    if (!leaf!.checkPrivateKey(key)) throw invalid('tls.key', 'is not the private key of tls.cert', 'give the key the client certificate was issued for');
  }
  if (raw.servername) settings.servername = raw.servername;
  if (raw.minVersion) settings.minVersion = raw.minVersion;
  const sources: TlsSources = {
    ...(raw.ca ? { ca: raw.ca } : {}),
    ...(raw.cert ? { cert: raw.cert } : {}),
    ...(raw.key ? { key: raw.key } : {}),
    ...(raw.passphrase ? { passphrase: raw.passphrase } : {}),
    ...(raw.servername ? { servername: raw.servername } : {}),
    ...(raw.minVersion ? { minVersion: raw.minVersion } : {}),
  };
  return { settings, sources };
}
