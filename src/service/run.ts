/**
 * What the engine must know of this service, in the form it takes it
 * (src/engine/runtime.ts ServiceBinding); the run path passes SERVICE_BINDING in.
 */
import { randomUUID } from 'node:crypto';
import type { ServiceBinding } from '../engine/runtime.js';
import type { HttpClient } from '../http/client.js';
import { SERVICE_HTTP } from './http.js';
import { PATHS, isServicePath, resourcePath } from './paths.js';
import { scopeOf } from './scopes.js';
import { surfaceLabel, surfaceProbeUrl, surfaceScopes, surfacesOf } from './surfaces.js';

/** The token URL from smart-configuration; the spec's fixed path when that is unusable. */
export async function discoverTokenUrl(http: HttpClient, baseUrl: string): Promise<string> {
  const fallback = `${baseUrl.replace(/\/$/, '')}${PATHS.tokenEndpoint}`;
  try {
    const res = await http.request({ url: PATHS.smartConfiguration, headers: { accept: 'application/json' } });
    const endpoint = (res.json as { token_endpoint?: unknown } | undefined)?.token_endpoint;
    return res.status === 200 && typeof endpoint === 'string' ? endpoint : fallback;
  } catch {
    return fallback;
  }
}

export const SERVICE_BINDING: ServiceBinding = {
  http: SERVICE_HTTP,
  tokenUrl: discoverTokenUrl,
  // A read of a MedicationRequest that does not exist: a valid token gets 404, an expired one 401.
  // Its token holds the read scope of every surface the target publishes (within the main client's declared
  // grant), so the expired token is tried on each (token-lifetime.expired-token-refused).
  expiryProbe: {
    scopes: [scopeOf('MedicationRequest', 'rs')],
    url: () => resourcePath('R4', 'MedicationRequest', randomUUID()),
    scopesFor: (model, granted) => {
      const all = [...new Set([scopeOf('MedicationRequest', 'rs'), ...surfaceScopes(surfacesOf(model))])];
      return granted ? all.filter((s) => s === scopeOf('MedicationRequest', 'rs') || granted.includes(s)) : all;
    },
    label: 'R4 MedicationRequest',
    surfaceUrls: (model, scopes) =>
      surfacesOf(model)
        .filter((s) => !(s.release === 'R4' && s.resource === 'MedicationRequest') && s.probe.scope !== undefined && scopes.includes(s.probe.scope))
        .map((s) => ({ label: surfaceLabel(s), url: surfaceProbeUrl(s) })),
  },
  controlPaths: [PATHS.metadata.R4, PATHS.smartConfiguration],
  isServicePath,
  resourcePath: (resourceType, id) => resourcePath('R4', resourceType, id),
};
