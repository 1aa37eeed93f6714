/**
 * Limits of the embedded reference for everyday runs: the spec's rules with
 * shorter windows and higher ceilings, so a full run with its waits (token
 * expiry, window recovery) finishes in seconds. The generated config declares
 * them, so every report states the deviation. `certification` runs the
 * reference at the spec's defaults instead.
 */
import type { ReferenceLimits, ReferenceOptions } from '../reference/types.js';
import { createReferenceServer, type ReferenceServer } from '../reference/index.js';
import { EMBEDDED_JWKS_PATH, serveJwks, type JwksServer } from '../auth/jwks.js';

export const EMBEDDED_LIMITS: Partial<ReferenceLimits> = {
  perKeyPerWindow: 1000,
  perOrgPerWindow: 5000,
  windowMs: 5000,
  tokenIssuancePerWindow: 100,
  tokenWindowMs: 5000,
  tokenLifetimeSec: 10,
};

/**
 * The quick profile's reference on top of EMBEDDED_LIMITS: a document maximum of 64 KiB instead of
 * the reference's 1 MiB (the spec shows no value: "Document size maximum | value: not shown"), so
 * the size checks' documents at the maximum and a byte over it, sent and echoed each way, are 64 KiB
 * instead of 1 MiB (about 5.6 MB less to build, send, parse and record; npm start, issue 27).
 */
export const QUICK_LIMITS: Partial<ReferenceLimits> = { documentMaxBytes: 64 * 1024 };

/**
 * EMBEDDED_LIMITS with a run's overrides (`--limit`). The config declares one window for
 * the per-key and the issuance limits, so a window given without `tokenWindowMs` moves
 * the issuance window with it (else the reference would run an issuance window other
 * than the one its config declares).
 */
export function embeddedLimits(overrides: Partial<ReferenceLimits> = {}): Partial<ReferenceLimits> {
  const windows = overrides.windowMs !== undefined && overrides.tokenWindowMs === undefined ? { tokenWindowMs: overrides.windowMs } : {};
  return { ...EMBEDDED_LIMITS, ...windows, ...overrides };
}

/** The config block that declares EMBEDDED_LIMITS to the suite. */
function declaredLimits(l: Partial<ReferenceLimits>): { limits: Record<string, number>; ratePerWindow?: number } {
  const limits: Record<string, number> = {};
  if (l.tokenLifetimeSec !== undefined) limits.tokenLifetimeSec = l.tokenLifetimeSec;
  if (l.windowMs !== undefined) limits.windowSec = l.windowMs / 1000;
  if (l.tokenIssuancePerWindow !== undefined) limits.tokenIssuancePerMinute = l.tokenIssuancePerWindow;
  return { limits, ratePerWindow: l.perKeyPerWindow };
}

/**
 * The embedded reference's target config with the limits it runs under declared. `exclusive`: its
 * source address declared exclusive (the in-process reference has no client but this run; a
 * `serve`d one may have others, so its config leaves it undeclared).
 */
export function embeddedTargetConfig(server: { targetConfig(): object }, l: Partial<ReferenceLimits>, exclusive = false): object {
  const { limits, ratePerWindow } = declaredLimits(l);
  const config = server.targetConfig() as { clients: Array<Record<string, unknown>> };
  return {
    ...config,
    ...(exclusive ? { sourceAddress: { exclusive: true } } : {}),
    ...(Object.keys(limits).length ? { limits } : {}),
    clients: config.clients.map((c) => (ratePerWindow ? { ...c, rateLimitPerMinute: ratePerWindow } : c)),
  };
}

/** Clients (by role) of the embedded reference whose keys come from the suite's hosted key set. */
export const EMBEDDED_JWKS_ROLES = ['main'];

/**
 * The embedded reference with the suite's hosted client key set: the key set is served first
 * (keys set once the config is resolved: `jwks.setKeys`), and the reference fetches the main
 * client's keys from it (a jwks_uri client), so the key-set rule can be exercised.
 */
export async function startEmbeddedTarget(
  reference: ReferenceOptions,
  limits: Partial<ReferenceLimits>,
): Promise<{ server: ReferenceServer; jwks: JwksServer; rawConfig: object }> {
  const jwks = await serveJwks({ host: '127.0.0.1', port: 0, path: EMBEDDED_JWKS_PATH }, { keys: [] });
  try {
    const clientJwksUris = Object.fromEntries(EMBEDDED_JWKS_ROLES.map((role) => [role, jwks.url]));
    const server = await createReferenceServer({ ...reference, limits, clientJwksUris: { ...clientJwksUris, ...reference.clientJwksUris } });
    return { server, jwks, rawConfig: { ...embeddedTargetConfig(server, limits, true), jwksHosting: jwks.hosting } };
  } catch (e) {
    await jwks.close();
    throw e;
  }
}
