/** Auth layer: client assertions, the token broker, the token endpoint and the clients' JWKS. */
export { createAssertion, foreignKey, publicKeyPem, ASSERTION_LIFETIME_SEC } from './assertion.js';
export { TokenBroker, CLIENT_ASSERTION_TYPE, type TokenBrokerOptions } from './broker.js';
export { IssuanceLimiter, safetyMarginMs } from './issuance-limiter.js';
export { resolveTokenUrl, tokenEndpointFrom, SMART_CONFIGURATION_PATH } from './token-url.js';
export { publicJwks, serveJwks, setKeySetReachable, keySetState, EMBEDDED_JWKS_PATH, type JwksServer, type JwksControl, type JwksState } from './jwks.js';
export type { AssertionOverrides, TokenBrokerApi, TokenRequestOptions } from './types.js';
