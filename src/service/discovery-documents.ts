/**
 * The discovery documents whose authentication the spec leaves open: "GET `/openapi.json` |
 * not stated", smart-configuration and jwks.json likewise. A target may serve them to anyone or
 * only with a token; either conforms. They are read without a token first and, on 401/403, once
 * more with the main client's bearer (the suite's `discovery.*-auth` observations record which).
 */
import type { CheckContext } from '../engine/context.js';
import type { HttpResponse } from '../http/types.js';
import { scopeOf } from './scopes.js';

/** The scope of the bearer a protected discovery document is read with (the spec's own example scope). */
export const DISCOVERY_SCOPE = scopeOf('MedicationRequest', 'rs');

export interface DiscoveryDocument {
  /** The answer judged: the one with a bearer when the target wanted one, else the first. */
  res: HttpResponse;
  /** The answer without a token. */
  withoutAuth: HttpResponse;
  /** Whether the document answered 401/403 without a token and was read with a bearer. */
  authenticated: boolean;
}

/** GETs a discovery document whose authentication is not stated: without a token, and on 401/403 once more with the main client's bearer. */
export async function discoveryDocument(ctx: CheckContext, url: string, accept = 'application/json'): Promise<DiscoveryDocument> {
  const withoutAuth = await ctx.request({ url, headers: { accept } });
  if (withoutAuth.status !== 401 && withoutAuth.status !== 403) return { res: withoutAuth, withoutAuth, authenticated: false };
  const res = await ctx.fhir({ scopes: [DISCOVERY_SCOPE], url, headers: { accept } });
  return { res, withoutAuth, authenticated: true };
}
