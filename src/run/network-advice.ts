/**
 * What to fix when the preflight cannot reach the target for a TLS or proxy reason: the config
 * field (`tls.ca`, `tls.cert`/`tls.key`, `tls.servername`) or the proxy variable that would
 * make it work. One sentence per failure kind; the first line of the failure is quoted before it.
 */
import type { ResolvedConfig } from '../config/index.js';
import type { ConformanceError } from '../errors.js';
import { codesOf } from '../http/failures.js';

export type NetworkFailure = 'unknown-ca' | 'client-cert' | 'hostname' | 'expired' | 'proxy-auth' | 'proxy' | 'tls';

const UNKNOWN_CA = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
]);
const CLIENT_CERT = new Set([
  'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
  'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE',
  'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE',
  'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA',
  'ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN',
  'ERR_SSL_TLSV1_ALERT_ACCESS_DENIED',
]);
const HOSTNAME = new Set(['ERR_TLS_CERT_ALTNAME_INVALID', 'HOSTNAME_MISMATCH']);
const EXPIRED = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);
/** A connection closed before any HTTP answer: over HTTPS, how a TLS 1.3 server refuses a missing client certificate. */
const CLOSED = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/** The kind of a network failure the config can fix (or that names the target), if it is one. */
export function classifyNetworkFailure(error: ConformanceError, url: string): NetworkFailure | undefined {
  const codes = codesOf(error.cause);
  const has = (set: Set<string>) => codes.some((c) => set.has(c));
  if (error.code === 'ERR_PROXY') return /\(407 /.test(error.message) ? 'proxy-auth' : 'proxy';
  if (has(UNKNOWN_CA)) return 'unknown-ca';
  if (has(HOSTNAME)) return 'hostname';
  if (has(EXPIRED)) return 'expired';
  if (has(CLIENT_CERT)) return 'client-cert';
  if (error.code === 'ERR_TLS') return 'tls';
  if (error.code === 'ERR_PROTOCOL' && url.startsWith('https:') && has(CLOSED) && /no valid HTTP response/.test(error.message)) return 'client-cert';
  return undefined;
}

/** The sentence that names the fix for `kind`, in terms of the config's own fields. */
export function networkFix(kind: NetworkFailure, config: Pick<ResolvedConfig, 'source' | 'tlsSources' | 'baseUrl'>, error: ConformanceError): string {
  const tls = config.tlsSources;
  const where = `in ${config.source}`;
  const host = safeHost(config.baseUrl);
  switch (kind) {
    case 'unknown-ca':
      return tls?.ca
        ? `The target's certificate is not signed by a CA this run trusts: tls.ca ${where} (${describeSource(tls.ca)}) is not the CA that issued it. Give the certificate of the CA that signed the target's certificate (with any intermediate) as tls.ca.`
        : `The target's certificate is signed by a CA this run does not trust (a private CA). Set tls.ca ${where} to that CA's certificate: "tls": {"ca": {"file": "ca.pem"}} (or {"env": "VARIABLE"}). Certificate checking cannot be turned off.`;
    case 'client-cert':
      return tls?.cert
        ? `The target refused the TLS connection after the handshake: it did not accept the client certificate tls.cert ${where} (${describeSource(tls.cert)}). Check that it is the certificate the target expects, signed by a CA the target trusts and not expired, and that tls.key is its key.`
        : `The target closed the TLS connection after the handshake: it requires a client certificate (mutual TLS). Set tls.cert and tls.key ${where} to the client certificate the target trusts and its private key ("tls": {"cert": {"file": "client.pem"}, "key": {"file": "client.key.pem"}}; tls.passphrase if the key is encrypted).`;
    case 'hostname':
      return tls?.servername
        ? `The target's certificate is not issued for tls.servername "${tls.servername}" ${where}: ${certNames(error)}. Set tls.servername to a name the certificate names.`
        : `The target's certificate is not issued for ${host}, the host of baseUrl: ${certNames(error)}. Use a host name the certificate names in baseUrl, or, when the target is reached by another name (an IP address, a tunnel), set tls.servername ${where} to the name the certificate is issued for.`;
    case 'expired':
      return `The target's certificate is expired or not yet valid: the target must renew it (nothing in ${config.source} can accept it), or check this machine's clock.`;
    case 'proxy-auth':
      return 'The proxy asked for credentials (407) or refused the ones given. Put the proxy user and password in the proxy URL: HTTPS_PROXY=http://USER:PASSWORD@proxy.example:3128 (HTTP_PROXY for http:// targets; percent-encode special characters). They are never printed or written to the report.';
    case 'proxy':
      return 'The proxy named by HTTPS_PROXY/HTTP_PROXY did not open a tunnel to the target. Check the proxy URL and that the proxy lets this machine reach the target; set NO_PROXY=host for a target that must be reached directly.';
    case 'tls':
      return `Check that ${host} serves HTTPS with a valid certificate; tls.ca, tls.cert/tls.key, tls.servername and tls.minVersion ${where} set what this run uses (see docs/config.md).`;
  }
}

function describeSource(s: { file: string } | { env: string }): string {
  return 'file' in s ? `file ${s.file}` : `environment variable ${s.env}`;
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** `the certificate names IP Address:127.0.0.1, DNS:localhost` from Node's altname message. */
function certNames(error: ConformanceError): string {
  const m = /altnames: (?:Host: .*? is not in the cert's altnames: )?(.*?)(?: \(|$)/.exec(error.message);
  return m?.[1] ? `the certificate names ${m[1].replace(/\.$/, '')}` : 'its names differ';
}
