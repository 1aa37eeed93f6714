/**
 * The run's dispatcher settings: which proxy a URL goes through (NO_PROXY as undici reads it),
 * proxy credentials redacted, the proxy variables read lower case first, and a configured CA
 * added to Node's roots, never put in their place.
 */
import { rootCertificates } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { proxyFor, proxyFromEnv, redactProxyUrl, registerProxySecrets, tlsConnectOptions } from '../../src/http/dispatcher.js';
import { redactString } from '../../src/redact.js';

describe('proxy variables', () => {
  it('lower case wins; nothing set gives no proxy', () => {
    expect(proxyFromEnv({ HTTPS_PROXY: 'http://a:1', https_proxy: 'http://b:2', NO_PROXY: 'x' })).toEqual({ httpsProxy: 'http://b:2', noProxy: 'x' });
    expect(proxyFromEnv({ HTTP_PROXY: ' http://a:1 ' })).toEqual({ httpProxy: 'http://a:1' });
    expect(proxyFromEnv({ NO_PROXY: 'x', HTTPS_PROXY: '' })).toBeUndefined();
  });

  it('the proxy of a URL: HTTPS_PROXY for https (else HTTP_PROXY), NO_PROXY hosts, subdomains and ports direct', () => {
    const proxy = { httpProxy: 'http://p:1', httpsProxy: 'http://u:pw-secret@s:2', noProxy: 'internal.example, .corp.example,127.0.0.1:8080' };
    expect(proxyFor(proxy, new URL('https://fhir.example/x'))).toBe('http://[redacted]@s:2/');
    expect(proxyFor(proxy, new URL('http://fhir.example/x'))).toBe('http://p:1');
    expect(proxyFor(proxy, new URL('https://internal.example/'))).toBeUndefined();
    expect(proxyFor(proxy, new URL('https://api.internal.example/'))).toBeUndefined();
    expect(proxyFor(proxy, new URL('https://a.corp.example/'))).toBeUndefined();
    expect(proxyFor(proxy, new URL('http://127.0.0.1:8080/'))).toBeUndefined();
    expect(proxyFor(proxy, new URL('http://127.0.0.1:8081/'))).toBe('http://p:1');
    expect(proxyFor({ httpProxy: 'http://p:1' }, new URL('https://fhir.example/'))).toBe('http://p:1');
    expect(proxyFor({ httpProxy: 'http://p:1', noProxy: '*' }, new URL('https://fhir.example/'))).toBeUndefined();
    expect(proxyFor(undefined, new URL('https://fhir.example/'))).toBeUndefined();
  });

  it('credentials are redacted in the URL and registered as secrets in every form', () => {
    expect(redactProxyUrl('http://ci:p%40ss-word-1@proxy.example:3128')).toBe('http://[redacted]@proxy.example:3128/');
    expect(redactProxyUrl('http://proxy.example:3128')).toBe('http://proxy.example:3128');
    registerProxySecrets({ httpsProxy: 'http://ci:p%40ss-word-1@proxy.example:3128' });
    const basic = Buffer.from('ci:p@ss-word-1').toString('base64');
    expect(redactString(`pw p@ss-word-1 raw p%40ss-word-1 basic ${basic}`)).toBe('pw [redacted] raw [redacted] basic [redacted]');
  });
});

describe('TLS options', () => {
  it('a CA is added to Node roots; the other settings pass through; no setting turns checking off', () => {
    const ca = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const opts = tlsConnectOptions({ ca, cert: 'C', key: 'K', passphrase: 'P', servername: 'fhir.example', minVersion: 'TLSv1.3' });
    expect(opts).toEqual({ ca: [...rootCertificates, ca], cert: 'C', key: 'K', passphrase: 'P', servername: 'fhir.example', minVersion: 'TLSv1.3' });
    expect(opts).not.toHaveProperty('rejectUnauthorized');
    expect(tlsConnectOptions(undefined)).toEqual({});
  });
});
