/**
 * The service's protocol as the HTTP client needs it (src/http/types.ts HttpProtocol):
 * the token endpoint is limited per source IP, not per key; the rate-limit headers pace
 * a key; Retry-After is in seconds; 401 `HPB-00107` refuses an expired access token.
 */
import type { HttpProtocol, HttpResponse } from '../http/types.js';
import { catalogCodeOf } from './errors.js';
import { isTokenEndpointPath } from './paths.js';
import { rateLimitHints, retryAfterMs } from './rate-limit.js';

/** The catalog code of a 401 for an expired access token. */
export const TOKEN_EXPIRED_CODE = 'HPB-00107';

export function isTokenExpired(res: HttpResponse): boolean {
  return res.status === 401 && catalogCodeOf(res) === TOKEN_EXPIRED_CODE;
}

export const SERVICE_HTTP: HttpProtocol = {
  perSource: isTokenEndpointPath,
  rateLimit: rateLimitHints,
  retryAfterMs,
  tokenExpired: isTokenExpired,
};
