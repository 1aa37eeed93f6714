/**
 * Where things are on the service (spec "Endpoints", "Discovery", "Authentication"):
 * every path the suite sends to or recognizes, relative to the target's base URL.
 * The target's published operations (src/discovery) come first where it publishes
 * one; these are the spec's own paths for the rest.
 */
export type Release = 'R4' | 'R5';

export const PATHS = {
  openapi: '/openapi.json',
  smartConfiguration: '/fhir/.well-known/smart-configuration',
  jwks: '/fhir/.well-known/jwks.json',
  tokenEndpoint: '/auth/token',
  metadata: { R4: '/fhir/R4/metadata', R5: '/fhir/R5/metadata' },
  fhirBase: { R4: '/fhir/R4', R5: '/fhir/R5' },
} as const;

/** The spec's path of a resource type (`/fhir/R4/MedicationRequest`), or of one resource with `id` (encoded). */
export function resourcePath(release: Release, resourceType: string, id?: string): string {
  const base = `${PATHS.fhirBase[release]}/${resourceType}`;
  return id === undefined ? base : `${base}/${encodeURIComponent(id)}`;
}

/** The spec's path of a canonical OperationDefinition by its last URL segment. */
export function operationDefinitionPath(release: Release, name: string): string {
  return resourcePath(release, 'OperationDefinition', name);
}

/** A FHIR endpoint of the service (`/fhir/...`), the unauthenticated `.well-known` documents aside. */
export function isFhirPath(path: string): boolean {
  return path.startsWith('/fhir/') && !path.includes('/.well-known');
}

/** A path of the service itself, not of a token endpoint that may live elsewhere. */
export function isServicePath(path: string): boolean {
  return path.includes('/fhir/');
}

/** The token endpoint's path (what a target's smart-configuration points to by default). */
export function isTokenEndpointPath(path: string): boolean {
  return path === PATHS.tokenEndpoint;
}

export type SpecInteraction = 'read' | 'search-type' | 'create';

/** The path the target publishes for an operation, else the spec's own path for it (Endpoints). */
export function pathOf(
  ctx: { findOperation(resource: string, interaction: SpecInteraction, release: Release): { path: string } | undefined },
  release: Release,
  resource: string,
  interaction: SpecInteraction,
): string {
  return ctx.findOperation(resource, interaction, release)?.path ?? `${resourcePath(release, resource)}${interaction === 'read' ? '/{id}' : ''}`;
}
