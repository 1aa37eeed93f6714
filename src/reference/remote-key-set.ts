/**
 * A client's key set fetched from its jwks_uri and kept for a while, as jose's createRemoteJWKSet
 * keeps it, without Node's global `fetch` (its first use costs about 0.1 s of every run that
 * verifies an assertion, README "Speed"). Errors are jose's, so the token endpoint tells an
 * unreachable key set from a bad signature as before: a timeout is JWKSTimeout, a non-200 or
 * non-JSON answer the base JOSEError, a connection failure the network's own error.
 */
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { FetchJsonError, fetchJson } from '../http/fetch-json.js';

export interface RemoteKeySetOptions {
  timeoutMs: number;
  /** The fetched set is used this long, then fetched again. */
  cacheMaxAgeMs: number;
}

/**
 * The key set at `url`: fetched at first use, again once older than `cacheMaxAgeMs`, and again at
 * once when it has no key for a token's kid and alg (no cool-down: a rotated key works at its first
 * use). Concurrent uses share one fetch.
 */
export function remoteKeySet(url: URL, options: RemoteKeySetOptions): JWTVerifyGetKey {
  let local: ReturnType<typeof createLocalJWKSet> | undefined;
  let fetchedAt = Number.NEGATIVE_INFINITY;
  let pending: Promise<void> | undefined;
  const reload = (): Promise<void> => {
    pending ??= fetchKeySet(url, options)
      .then((json) => {
        local = createLocalJWKSet(json);
        fetchedAt = Date.now();
      })
      .finally(() => {
        pending = undefined;
      });
    return pending;
  };
  return async (protectedHeader, token) => {
    if (local === undefined || Date.now() >= fetchedAt + options.cacheMaxAgeMs) await reload();
    try {
      return await (local as NonNullable<typeof local>)(protectedHeader, token);
    } catch (e) {
      if (!(e instanceof errors.JWKSNoMatchingKey)) throw e;
      await reload();
      return (local as NonNullable<typeof local>)(protectedHeader, token);
    }
  };
}

async function fetchKeySet(url: URL, options: RemoteKeySetOptions): Promise<JSONWebKeySet> {
  let answer: Awaited<ReturnType<typeof fetchJson>>;
  try {
    answer = await fetchJson(url, { timeoutMs: options.timeoutMs, headers: { accept: 'application/json, application/jwk-set+json' } });
  } catch (e) {
    if (e instanceof FetchJsonError && e.code === 'TIMEOUT') throw new errors.JWKSTimeout(undefined, { cause: e });
    if (e instanceof FetchJsonError && e.code === 'TOO_LARGE') throw new errors.JOSEError('The JSON Web Key Set HTTP response is too large', { cause: e });
    throw e;
  }
  if (answer.status !== 200) throw new errors.JOSEError('Expected 200 OK from the JSON Web Key Set HTTP response');
  if (answer.json === undefined) throw new errors.JOSEError('Failed to parse the JSON Web Key Set HTTP response as JSON');
  return answer.json as JSONWebKeySet;
}
