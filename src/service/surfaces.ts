/**
 * The surfaces a request-wide rule governs: every (release, resource family) the target
 * publishes, derived from the operation model (never a hand-picked path). A request-wide
 * rule (bearer, expiry, origin, scope, tenancy, the run-wide headers and error format) is
 * probed once per surface, on its read of a random id (a valid token gets 404) or, without
 * a published read, on its search.
 */
import { randomUUID } from 'node:crypto';
import type { ModelOperation, OperationModel, Release } from '../discovery/model.js';
import { CheckFailure } from '../errors.js';

export interface Surface {
  release: Release;
  resource: string;
  /** The operation the surface is probed on: its read, else its search. */
  probe: ModelOperation;
}

/** `R5 DocumentReference`. */
export const surfaceLabel = (s: Pick<Surface, 'release' | 'resource'>): string => `${s.release} ${s.resource}`;

/** Every (release, resource) with a published read or search, in model order (R4 before R5). */
export function surfacesOf(model: Pick<OperationModel, 'operations'>): Surface[] {
  const out = new Map<string, Surface>();
  for (const op of model.operations) {
    if (op.interaction !== 'read' && op.interaction !== 'search-type') continue;
    const key = surfaceLabel(op);
    const seen = out.get(key);
    if (!seen || (seen.probe.interaction !== 'read' && op.interaction === 'read')) out.set(key, { release: op.release, resource: op.resource, probe: op });
  }
  return [...out.values()].sort((a, b) => a.release.localeCompare(b.release) || a.resource.localeCompare(b.resource));
}

/**
 * A URL of the surface that a valid token with the surface's scope gets answered without a
 * refusal: its read of a random id (404), or its search for a random patient.
 */
export function surfaceProbeUrl(s: Surface): string {
  const op = s.probe;
  if (op.interaction === 'read') return op.path.replace('{id}', randomUUID());
  const param = op.searchParams.some((p) => p.name === 'patient') ? 'patient' : op.searchParams.find((p) => !p.name.startsWith('_'))?.name;
  return param ? `${op.path}?${param}=${randomUUID()}` : op.path;
}

/** The scopes that read every surface (their probe operations' published scopes). */
export function surfaceScopes(surfaces: readonly Surface[]): string[] {
  return [...new Set(surfaces.map((s) => s.probe.scope).filter((s): s is string => typeof s === 'string'))].sort();
}

/**
 * The scopes of one token that reads every surface, and MedicationRequest (`system/MedicationRequest.rs`,
 * the protected URL of the key checks). Checks that probe with a key other than main's ask for this
 * set, so they share that key's one token: the run-wide invariants sample a key of the other kind last,
 * after the issuance limit was driven to its 429, and a token of its own would wait out that window.
 */
export function keyProbeScopes(surfaces: readonly Surface[]): string[] {
  return [...new Set(['system/MedicationRequest.rs', ...surfaceScopes(surfaces)])].sort();
}

/** Runs an assertion of one surface: its failure names the surface (`R5 DocumentReference: ...`). */
export function onSurface<T>(surface: string, assertion: () => T): T {
  try {
    return assertion();
  } catch (e) {
    if (e instanceof CheckFailure) throw new CheckFailure(`${surface}: ${e.message}`, e.details);
    throw e;
  }
}
