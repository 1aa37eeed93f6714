/**
 * The one place the run's undici dispatcher is made: every request of a run (FHIR, the token
 * endpoint, discovery, the preflight) goes through an HttpClient, and every HttpClient through
 * a dispatcher from here. TLS settings (a private CA, a client certificate, SNI, the lowest TLS
 * version) apply to every origin connection; the standard proxy variables (HTTPS_PROXY,
 * HTTP_PROXY, NO_PROXY), resolved by the config, route connections through undici's
 * EnvHttpProxyAgent, with the same TLS settings for the origin inside the tunnel. Nothing here
 * turns certificate checking off: a CA is added to Node's own roots, never put in their place.
 */
import { rootCertificates } from 'node:tls';
import type { Dispatcher, EnvHttpProxyAgent as EnvHttpProxyAgentClass } from 'undici';
import { Agent, EnvHttpProxyAgent } from './undici.js';
import { registerSecret } from '../redact.js';
import type { InProcessTarget } from './in-process.js';

/** TLS settings for the target's connections (the config's `tls` block, read). */
export interface TlsSettings {
  /** PEM certificates of CAs trusted besides Node's own roots. */
  ca?: string;
  /** PEM client certificate (chain) and its private key, for mutual TLS. */
  cert?: string;
  key?: string;
  /** Passphrase of an encrypted `key`. */
  passphrase?: string;
  /** Name sent as SNI and checked against the certificate, instead of the URL's host. */
  servername?: string;
  minVersion?: 'TLSv1.2' | 'TLSv1.3';
}

/** The proxy variables, as the environment gave them (upper or lower case; lower case wins, as in undici). */
export interface ProxySettings {
  httpProxy?: string;
  httpsProxy?: string;
  noProxy?: string;
}

export interface NetworkSettings {
  tls?: TlsSettings;
  proxy?: ProxySettings;
  /** The target's origin answered in this process (the embedded reference, `--transport in-process`): no socket, no TLS, no proxy. */
  inProcess?: InProcessTarget;
}

/** The proxy variables of `env`; undefined when neither HTTP_PROXY nor HTTPS_PROXY is set. */
export function proxyFromEnv(env: NodeJS.ProcessEnv): ProxySettings | undefined {
  const pick = (name: string) => {
    const v = env[name.toLowerCase()] ?? env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const httpProxy = pick('HTTP_PROXY');
  const httpsProxy = pick('HTTPS_PROXY');
  if (httpProxy === undefined && httpsProxy === undefined) return undefined;
  const noProxy = pick('NO_PROXY');
  return { ...(httpProxy ? { httpProxy } : {}), ...(httpsProxy ? { httpsProxy } : {}), ...(noProxy ? { noProxy } : {}) };
}

/** A proxy URL with its credentials (userinfo) replaced: what may be printed. */
export function redactProxyUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username === '' && u.password === '') return url;
    u.username = '[redacted]';
    u.password = '';
    return u.toString().replace('%5Bredacted%5D', '[redacted]');
  } catch {
    return '[unparsable proxy URL]';
  }
}

/** Registers a proxy URL's credentials as secrets (in every form undici or a log could show them). */
export function registerProxySecrets(proxy: ProxySettings | undefined): void {
  for (const url of [proxy?.httpProxy, proxy?.httpsProxy]) {
    if (url === undefined) continue;
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      registerSecret(url);
      continue;
    }
    if (u.username === '' && u.password === '') continue;
    const user = decodeURIComponent(u.username);
    const password = decodeURIComponent(u.password);
    registerSecret(password);
    registerSecret(u.password);
    registerSecret(`${u.username}:${u.password}`);
    registerSecret(`${user}:${password}`);
    registerSecret(Buffer.from(`${user}:${password}`).toString('base64'));
  }
}

/** The proxy a request to `url` goes through, redacted; undefined when it goes direct (no proxy, or NO_PROXY). */
export function proxyFor(proxy: ProxySettings | undefined, url: URL): string | undefined {
  if (!proxy) return undefined;
  const chosen = url.protocol === 'https:' ? (proxy.httpsProxy ?? proxy.httpProxy) : proxy.httpProxy;
  if (chosen === undefined || bypassed(proxy.noProxy, url)) return undefined;
  return redactProxyUrl(chosen);
}

/** NO_PROXY as undici reads it: `*`, or host[:port] entries matching the host or a subdomain of it. */
function bypassed(noProxy: string | undefined, url: URL): boolean {
  if (!noProxy) return false;
  if (noProxy === '*') return true;
  const host = url.host.replace(/:\d*$/, '').toLowerCase();
  const port = Number.parseInt(url.port, 10) || (url.protocol === 'https:' ? 443 : 80);
  return noProxy
    .split(/[,\s]/)
    .filter(Boolean)
    .some((entry) => {
      const parsed = /^(.+):(\d+)$/.exec(entry);
      const name = (parsed ? parsed[1]! : entry).replace(/^\*?\./, '').toLowerCase();
      if (parsed && Number.parseInt(parsed[2]!, 10) !== port) return false;
      return host === name || host.endsWith(`.${name}`);
    });
}

/** Node's TLS connection options for the settings: the CA beside Node's roots, never instead of them. */
export function tlsConnectOptions(tls: TlsSettings | undefined): Record<string, unknown> {
  if (!tls) return {};
  return {
    ...(tls.ca ? { ca: [...rootCertificates, tls.ca] } : {}),
    ...(tls.cert ? { cert: tls.cert } : {}),
    ...(tls.key ? { key: tls.key } : {}),
    ...(tls.passphrase ? { passphrase: tls.passphrase } : {}),
    ...(tls.servername ? { servername: tls.servername } : {}),
    ...(tls.minVersion ? { minVersion: tls.minVersion } : {}),
  };
}

/**
 * The dispatcher of one HttpClient. `capMs` bounds connecting, headers and body (the client's
 * own timers are the request timeout proper). Idle sockets are dropped 2 s before the
 * server's keep-alive hint, so a reused socket is rarely a closed one.
 */
export function createDispatcher(network: NetworkSettings | undefined, capMs: number): Dispatcher {
  const tls = tlsConnectOptions(network?.tls);
  const common = { headersTimeout: capMs, bodyTimeout: capMs, keepAliveTimeoutThreshold: 2000 };
  const proxy = network?.proxy;
  if (!proxy) return new Agent({ ...common, connect: { timeout: capMs, ...tls } });
  registerProxySecrets(proxy);
  // Explicit values ('' for unset) so undici does not read the environment again behind the config's back.
  return new EnvHttpProxyAgent({
    ...common,
    connect: { timeout: capMs, ...tls },
    httpProxy: proxy.httpProxy ?? '',
    httpsProxy: proxy.httpsProxy ?? proxy.httpProxy ?? '',
    noProxy: proxy.noProxy ?? '',
    // The origin's TLS inside the tunnel; the proxy's own TLS (an https:// proxy) trusts the same CAs.
    requestTls: { timeout: capMs, ...tls },
    proxyTls: { timeout: capMs, ...(network?.tls?.ca ? { ca: [...rootCertificates, network.tls.ca] } : {}) },
  } as EnvHttpProxyAgentClass.Options);
}
