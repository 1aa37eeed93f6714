/**
 * The config's `tls` block and the proxy variables: read from files and environment variables,
 * checked (PEM, the key against the certificate, the passphrase), secrets kept out of the
 * report's config, and every refusal naming the field and the fix.
 */
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { networkOf, redactedConfig, resolveConfig } from '../../src/config/index.js';
import { ConformanceError } from '../../src/errors.js';
import { redactString } from '../../src/redact.js';
import { generateTestPki, type TestPki } from '../../src/reference/tls.js';

let dir: string;
let pki: TestPki;
const PASSPHRASE = 'correct horse battery';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fc-tls-config-'));
  pki = await generateTestPki(join(dir, 'pki'), { host: '127.0.0.1', client: true });
  await writeFile(join(dir, 'main.jwk.json'), JSON.stringify(generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ format: 'jwk' })));
  const encrypted = createPrivateKey(pki.clientKey!).export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: PASSPHRASE });
  await writeFile(join(dir, 'client.enc.key.pem'), encrypted);
  await writeFile(join(dir, 'other.key.pem'), generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
  await writeFile(join(dir, 'not-a-cert.pem'), 'hello');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function config(tls: unknown): Record<string, unknown> {
  return {
    baseUrl: 'https://staging.example.com',
    clients: [{ role: 'main', clientId: 'c-main', alg: 'ES384', privateKey: { file: 'main.jwk.json' } }],
    ...(tls === undefined ? {} : { tls }),
  };
}

async function refusal(raw: unknown, env: NodeJS.ProcessEnv = {}): Promise<{ field?: string; message: string; fix?: string }> {
  try {
    await resolveConfig(raw, dir, { source: 'target.json', env });
  } catch (e) {
    if (!(e instanceof ConformanceError)) throw e;
    expect(e.code).toBe('ERR_CONFIG_INVALID');
    return { field: e.field, message: e.message, fix: e.fix };
  }
  throw new Error('resolved');
}

describe('tls block', () => {
  it('reads the CA, client certificate and encrypted key from files, the passphrase from the environment', async () => {
    const c = await resolveConfig(
      config({
        ca: { file: 'pki/ca.pem' },
        cert: { file: 'pki/client.pem' },
        key: { file: 'client.enc.key.pem' },
        passphrase: { env: 'TLS_KEY_PASSPHRASE' },
        servername: 'fhir.staging.example.com',
        minVersion: 'TLSv1.3',
      }),
      dir,
      { source: 'target.json', env: { TLS_KEY_PASSPHRASE: PASSPHRASE } },
    );
    expect(c.tls?.ca).toBe(pki.ca);
    expect(c.tls?.cert).toBe(pki.clientCert);
    expect(c.tls?.passphrase).toBe(PASSPHRASE);
    expect(c.tls?.servername).toBe('fhir.staging.example.com');
    expect(c.tls?.minVersion).toBe('TLSv1.3');
    expect(networkOf(c)).toEqual({ tls: c.tls });
    expect((redactedConfig(c) as { tls: unknown }).tls).toEqual({
      ca: { file: 'pki/ca.pem' },
      cert: { file: 'pki/client.pem' },
      key: '[redacted]',
      keySource: { file: 'client.enc.key.pem' },
      passphrase: '[redacted]',
      passphraseSource: { env: 'TLS_KEY_PASSPHRASE' },
      servername: 'fhir.staging.example.com',
      minVersion: 'TLSv1.3',
    });
    // Registered as secrets once read: an error or a log line quoting them is redacted.
    expect(redactString(`passphrase ${PASSPHRASE}`)).toBe('passphrase [redacted]');
    expect(JSON.stringify(redactedConfig(c))).not.toContain(PASSPHRASE);
  });

  it('a CA from an environment variable', async () => {
    const c = await resolveConfig(config({ ca: { env: 'STAGING_CA_PEM' } }), dir, { source: 'target.json', env: { STAGING_CA_PEM: pki.ca } });
    expect(c.tls).toEqual({ ca: pki.ca });
  });

  it('refusals name the field and the fix', async () => {
    expect(await refusal(config({ ca: pki.ca }))).toEqual({
      field: 'tls.ca',
      message:
        'invalid config target.json: tls.ca must be an object naming where it is read from (never the PEM or passphrase itself) (fix: use {"file": "path/to/file.pem"} or {"env": "VARIABLE_NAME"})',
      fix: 'use {"file": "path/to/file.pem"} or {"env": "VARIABLE_NAME"}',
    });
    expect(await refusal(config({ key: { pem: 'x' } }))).toMatchObject({
      field: 'tls.key.pem',
      fix: 'use {"file": "path/to/file.pem"} or {"env": "VARIABLE_NAME"}',
    });
    expect(await refusal(config({ cert: { file: 'pki/client.pem' } }))).toEqual({
      field: 'tls.key',
      message: 'tls.key is required with tls.cert',
      fix: "add tls.key: where the client certificate's private key is read from",
    });
    expect(await refusal(config({ ca: { file: 'not-a-cert.pem' } }))).toEqual({
      field: 'tls.ca',
      message: 'tls.ca does not hold a PEM certificate',
      fix: 'give a PEM file with "-----BEGIN CERTIFICATE-----" blocks',
    });
    expect(await refusal(config({ ca: { file: 'missing.pem' } }))).toMatchObject({ field: 'tls.ca.file' });
    expect(await refusal(config({ ca: { env: 'NOT_SET_ANYWHERE' } }))).toEqual({
      field: 'tls.ca.env',
      message: 'tls.ca.env names the environment variable NOT_SET_ANYWHERE, which is not set',
      fix: 'export NOT_SET_ANYWHERE with the CA certificate (PEM)',
    });
    expect(await refusal(config({ cert: { file: 'pki/client.pem' }, key: { file: 'other.key.pem' } }))).toEqual({
      field: 'tls.key',
      message: 'tls.key is not the private key of tls.cert',
      fix: 'give the key the client certificate was issued for',
    });
    expect(await refusal(config({ cert: { file: 'pki/client.pem' }, key: { file: 'client.enc.key.pem' } }))).toEqual({
      field: 'tls.key',
      message: 'tls.key is encrypted and no passphrase is given',
      fix: 'add tls.passphrase ({"env": "VARIABLE"})',
    });
    const wrong = await refusal(config({ cert: { file: 'pki/client.pem' }, key: { file: 'client.enc.key.pem' }, passphrase: { env: 'P' } }), {
      P: 'not the passphrase',
    });
    expect(wrong).toEqual({
      field: 'tls.passphrase',
      message: 'tls.passphrase does not decrypt tls.key',
      fix: 'give the passphrase the key was encrypted with',
    });
    expect(await refusal(config({ minVersion: 'TLSv1.1' }))).toMatchObject({ field: 'tls.minVersion', fix: 'use "TLSv1.2" or "TLSv1.3"' });
    expect(await refusal(config({ rejectUnauthorized: false }))).toMatchObject({
      field: 'tls.rejectUnauthorized',
      message: expect.stringContaining('is not a known field'),
    });
  });
});

describe('proxy variables', () => {
  it('are read from the environment loadConfig passes, lower case first; credentials redacted in the report', async () => {
    const env = { HTTPS_PROXY: 'http://upper.example:1', https_proxy: 'http://ci:pr0xy-passw0rd@proxy.example:3128', NO_PROXY: 'internal.example' };
    const c = await resolveConfig(config(undefined), dir, { source: 'target.json', env });
    expect(c.proxy).toEqual({ httpsProxy: 'http://ci:pr0xy-passw0rd@proxy.example:3128', noProxy: 'internal.example' });
    expect((redactedConfig(c) as { proxy: unknown }).proxy).toEqual({ httpsProxy: 'http://[redacted]@proxy.example:3128/', noProxy: 'internal.example' });
    expect(networkOf(c)).toEqual({ proxy: c.proxy });
  });

  it('a proxy variable that is not an http(s) URL is refused, naming the variable, never echoing its value', async () => {
    expect(await refusal(config(undefined), { https_proxy: 'proxy.example:3128' })).toEqual({
      field: 'HTTPS_PROXY',
      message:
        'invalid config target.json: HTTPS_PROXY is not an http(s) URL (environment variable; upper or lower case) (fix: set HTTPS_PROXY to http://[USER:PASSWORD@]proxy.example:3128, or unset it)',
      fix: 'set HTTPS_PROXY to http://[USER:PASSWORD@]proxy.example:3128, or unset it',
    });
  });

  it('do not apply without an environment (the embedded reference)', async () => {
    const c = await resolveConfig(config(undefined), dir, { source: 'embedded' });
    expect(c.proxy).toBeUndefined();
    expect(networkOf(c)).toBeUndefined();
  });
});
