/**
 * A throw-away PKI for `serve --tls`: a CA, a server certificate it signs (for 127.0.0.1,
 * localhost and the served host), and with `--mtls` a client certificate it signs. RSA keys come
 * from Node's crypto; node-forge builds and signs the X.509 certificates (Node can parse
 * certificates but not issue them). Written as PEM files in one directory, the keys readable by
 * their owner only.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import forge from 'node-forge';

export interface TestPki {
  /** PEM texts. */
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert?: string;
  clientKey?: string;
  /** Where each was written. */
  files: { ca: string; serverCert: string; serverKey: string; clientCert?: string; clientKey?: string };
}

const VALID_DAYS = 30;
const CA_NAME = 'fhir-conformance serve test CA';

interface KeyPair {
  pem: string;
  forgePublic: forge.pki.PublicKey;
  forgePrivate: forge.pki.rsa.PrivateKey;
}

function keyPair(): KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    pem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    forgePublic: forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }) as string),
    forgePrivate: forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }) as string) as forge.pki.rsa.PrivateKey,
  };
}

function certificate(subject: string, keys: KeyPair, issuer: { name: string; key: forge.pki.rsa.PrivateKey } | undefined, extensions: object[]): string {
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.forgePublic;
  // A positive serial: the first byte's high bit clear.
  cert.serialNumber = `0${randomBytes(15).toString('hex')}`;
  const now = Date.now();
  cert.validity.notBefore = new Date(now - 60_000);
  cert.validity.notAfter = new Date(now + VALID_DAYS * 86_400_000);
  cert.setSubject([{ name: 'commonName', value: subject }]);
  cert.setIssuer([{ name: 'commonName', value: issuer?.name ?? subject }]);
  cert.setExtensions(extensions);
  cert.sign(issuer?.key ?? keys.forgePrivate, forge.md.sha256.create());
  return forge.pki.certificateToPem(cert);
}

/** Subject alternative names for a server reached at `host`: 127.0.0.1, localhost and `host` itself. */
function altNames(host: string): object[] {
  const names = new Set(['127.0.0.1', 'localhost', host.replace(/^\[|\]$/g, '')]);
  return [...names].map((n) => (isIP(n) ? { type: 7, ip: n } : { type: 2, value: n }));
}

/** Generates the CA, the server certificate and (with `client`) a client certificate, and writes them to `dir`. */
export async function generateTestPki(dirPath: string, opts: { host: string; client: boolean }): Promise<TestPki> {
  const dir = resolve(dirPath);
  await mkdir(dir, { recursive: true });
  const caKeys = keyPair();
  const ca = certificate(CA_NAME, caKeys, undefined, [
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  const issuer = { name: CA_NAME, key: caKeys.forgePrivate };
  const serverKeys = keyPair();
  const serverCert = certificate(opts.host, serverKeys, issuer, [
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: altNames(opts.host) },
  ]);
  const pki: TestPki = {
    ca,
    serverCert,
    serverKey: serverKeys.pem,
    files: { ca: join(dir, 'ca.pem'), serverCert: join(dir, 'server.pem'), serverKey: join(dir, 'server.key.pem') },
  };
  if (opts.client) {
    const clientKeys = keyPair();
    pki.clientCert = certificate('fhir-conformance client', clientKeys, issuer, [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', clientAuth: true },
    ]);
    pki.clientKey = clientKeys.pem;
    pki.files.clientCert = join(dir, 'client.pem');
    pki.files.clientKey = join(dir, 'client.key.pem');
  }
  const writes: Array<[string | undefined, string | undefined, boolean]> = [
    [pki.files.ca, pki.ca, false],
    [pki.files.serverCert, pki.serverCert, false],
    [pki.files.serverKey, pki.serverKey, true],
    [pki.files.clientCert, pki.clientCert, false],
    [pki.files.clientKey, pki.clientKey, true],
  ];
  for (const [file, text, secret] of writes) {
    if (file === undefined || text === undefined) continue;
    await writeFile(file, text, { mode: secret ? 0o600 : 0o644 });
    if (secret) await chmod(file, 0o600);
  }
  return pki;
}

/** The target config's `tls` block for a server of this PKI: the CA, and the client certificate when there is one. */
export function tlsConfigBlock(pki: TestPki): Record<string, { file: string }> {
  return {
    ca: { file: pki.files.ca },
    ...(pki.files.clientCert && pki.files.clientKey ? { cert: { file: pki.files.clientCert }, key: { file: pki.files.clientKey } } : {}),
  };
}
