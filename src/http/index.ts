/**
 * The HTTP layer's public surface: the client, what it records and the contract
 * callers inject (HttpProtocol: what it must know of the service it talks to).
 */
export { HttpClient, type Unjudgeable } from './client.js';
export { MAX_429_RETRIES, MAX_5XX_RETRIES, backoffDelayMs, parseRetryAfterMs, retryKind, type RetryKind } from './retry.js';
export { proxyFromEnv, redactProxyUrl, type NetworkSettings, type ProxySettings, type TlsSettings } from './dispatcher.js';
export type {
  Exchange,
  ExchangeFacts,
  HttpClientOptions,
  HttpProtocol,
  HttpResponse,
  HttpStats,
  RateLimitHints,
  RequestOptions,
  TokenRenewal,
  TokenReissue,
  TokenSource,
} from './types.js';
