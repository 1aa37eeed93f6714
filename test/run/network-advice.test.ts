/**
 * The preflight's advice per network failure, on the errors the HTTP client makes of what undici
 * and Node report: each kind names the config field (or the proxy URL) to fix, and says
 * something else once that field is already set.
 */
import { describe, expect, it } from 'vitest';
import { toConformanceError } from '../../src/http/failures.js';
import { classifyNetworkFailure, networkFix } from '../../src/run/network-advice.js';

const URL_ = new URL('https://fhir.staging.example.com/fhir/.well-known/smart-configuration');
const BASE = 'https://fhir.staging.example.com';

function failure(code: string, message: string, proxy?: string) {
  const e = Object.assign(new Error(message), { code });
  return toConformanceError(Object.assign(new TypeError('fetch failed'), { cause: e }), { url: URL_, inBody: false, timeoutMs: 1000, bytesReceived: 0, proxy });
}

describe('classifyNetworkFailure', () => {
  it('maps Node and undici codes to the field that fixes them', () => {
    expect(classifyNetworkFailure(failure('UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'unable to verify the first certificate'), BASE)).toBe('unknown-ca');
    expect(classifyNetworkFailure(failure('DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate'), BASE)).toBe('unknown-ca');
    expect(classifyNetworkFailure(failure('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', 'tlsv13 alert certificate required'), BASE)).toBe('client-cert');
    expect(classifyNetworkFailure(failure('UND_ERR_SOCKET', 'other side closed'), BASE)).toBe('client-cert');
    expect(classifyNetworkFailure(failure('UND_ERR_SOCKET', 'other side closed'), 'http://plain.example')).toBeUndefined();
    expect(classifyNetworkFailure(failure('ERR_TLS_CERT_ALTNAME_INVALID', "Hostname/IP does not match certificate's altnames"), BASE)).toBe('hostname');
    expect(classifyNetworkFailure(failure('CERT_HAS_EXPIRED', 'certificate has expired'), BASE)).toBe('expired');
    expect(classifyNetworkFailure(failure('UND_ERR_ABORTED', 'Proxy response (407) !== 200 when HTTP Tunneling', 'http://[redacted]@p:3128/'), BASE)).toBe(
      'proxy-auth',
    );
    expect(classifyNetworkFailure(failure('UND_ERR_ABORTED', 'Proxy response (502) !== 200 when HTTP Tunneling', 'http://p:3128'), BASE)).toBe('proxy');
    expect(classifyNetworkFailure(failure('ECONNREFUSED', 'connect ECONNREFUSED'), BASE)).toBeUndefined();
  });

  it('a proxy that refuses the tunnel is ERR_PROXY naming the proxy, redacted', () => {
    const e = failure('UND_ERR_ABORTED', 'Proxy response (407) !== 200 when HTTP Tunneling', 'http://[redacted]@p:3128/');
    expect({ code: e.code, message: e.message }).toEqual({
      code: 'ERR_PROXY',
      message:
        'the proxy http://[redacted]@p:3128/ asked for credentials (407 Proxy Authentication Required) instead of opening a tunnel to fhir.staging.example.com:443',
    });
  });
});

describe('networkFix', () => {
  const config = { source: 'target.json', baseUrl: BASE };
  it('once the field is set, says what is wrong with its value', () => {
    const withCert = { ...config, tlsSources: { cert: { file: 'client.pem' }, key: { file: 'client.key.pem' } } };
    expect(networkFix('client-cert', withCert, failure('UND_ERR_SOCKET', 'other side closed'))).toBe(
      'The target refused the TLS connection after the handshake: it did not accept the client certificate tls.cert in target.json (file client.pem). Check that it is the certificate the target expects, signed by a CA the target trusts and not expired, and that tls.key is its key.',
    );
    const withCa = { ...config, tlsSources: { ca: { env: 'STAGING_CA' } } };
    expect(networkFix('unknown-ca', withCa, failure('SELF_SIGNED_CERT_IN_CHAIN', 'x'))).toBe(
      "The target's certificate is not signed by a CA this run trusts: tls.ca in target.json (environment variable STAGING_CA) is not the CA that issued it. Give the certificate of the CA that signed the target's certificate (with any intermediate) as tls.ca.",
    );
    expect(networkFix('expired', config, failure('CERT_HAS_EXPIRED', 'x'))).toBe(
      "The target's certificate is expired or not yet valid: the target must renew it (nothing in target.json can accept it), or check this machine's clock.",
    );
  });
});
