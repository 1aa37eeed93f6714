/**
 * Tokens for chosen scopes, judged against what the client is declared to hold
 * (config clients[].scopes) and what the token states it grants.
 */
import { decodeJwt } from 'jose';
import type { CheckContext } from '../engine/context.js';
import { isConformanceError } from '../errors.js';
import { parseScope } from './scope-letters.js';

/**
 * A cached token for exactly these scopes (client `main`). When the token endpoint refuses
 * them, or grants fewer (a `scope` claim of a JWT access token without one of them): a failure
 * when the config declares the client holds them (clients[].scopes), else a skip (the grant is
 * unknown, and whether a scope outside it is refused or narrowed is open).
 */
export async function tokenFor(ctx: CheckContext, scopes: string[]): Promise<string> {
  const grant = ctx.client('main').scopes;
  const held = grant !== undefined && scopes.every((s) => grant.includes(s));
  let token: string;
  try {
    token = await ctx.token(scopes);
  } catch (e) {
    if (!isConformanceError(e) || e.code !== 'ERR_TOKEN') throw e;
    if (held) {
      ctx.fail(`the token endpoint refused a token for ${scopes.join(' ')}, which the client holds (clients[].scopes): ${e.message}`, {
        requirement: 'auth.token-scope-parameter',
        expected: `a token for ${scopes.join(' ')}`,
        actual: e.message,
      });
    }
    ctx.skip(
      `no token for ${scopes.join(' ')}: ${e.message} (${grant ? 'the client is not declared to hold them' : "the client's grant, clients[].scopes, is not declared"})`,
    );
  }
  const granted = grantedScopes(token);
  const missing = granted ? scopes.filter((s) => !granted.some((g) => covers(g, s))) : [];
  if (missing.length) {
    const what = `the token for ${scopes.join(' ')} grants ${granted!.join(' ') || 'no scope'}`;
    if (held)
      ctx.fail(`${what}, not ${missing.join(' ')}, which the client holds (clients[].scopes)`, {
        requirement: 'auth.token-scope-parameter',
        expected: scopes,
        actual: granted,
      });
    ctx.skip(
      `${what} (${grant ? 'the client is not declared to hold' : "the client's grant, clients[].scopes, is not declared; the target narrowed to its grant"} ${missing.join(' ')})`,
    );
  }
  return token;
}

/** `held` is `wanted`, or a scope of the same resource with every letter of it (`.cruds` covers `.rs`). */
function covers(held: string, wanted: string): boolean {
  if (held === wanted) return true;
  const [h, w] = [parseScope(held), parseScope(wanted)];
  return h !== undefined && w !== undefined && h.resource === w.resource && [...w.letters].every((l) => h.letters.includes(l));
}

/** The scopes a JWT access token states (`scope` string or `scp` list), when it states them. */
export function grantedScopes(token: string): string[] | undefined {
  try {
    const claims = decodeJwt(token);
    if (typeof claims.scope === 'string') return claims.scope.split(' ').filter((s) => s !== '');
    if (Array.isArray(claims.scp) && claims.scp.every((s) => typeof s === 'string')) return claims.scp as string[];
  } catch {
    // an opaque token states nothing
  }
  return undefined;
}
