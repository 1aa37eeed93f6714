/** Resource, interaction and path templates of FHIR REST paths. */
import type { ModelInteraction, ModelOperation, Release } from './model.js';

export interface PathShape {
  release: Release;
  resource: string;
  interaction: ModelInteraction;
  operationName?: string;
  /** The path with its path parameter spelled `{id}`. */
  path: string;
}

const FHIR_PATH = /^\/fhir\/(R4|R5)\/([A-Z][A-Za-z]*)(\/\{[^}/]+\})?(?:\/\$([A-Za-z][\w-]*))?\/?$/;

/** Classifies `METHOD path`; undefined for paths that are not a resource interaction. */
export function classifyPath(method: string, path: string): PathShape | undefined {
  const m = FHIR_PATH.exec(path);
  if (!m) return undefined;
  const [, release, resource, idPart, opName] = m;
  const template = `/fhir/${release}/${resource}${idPart ? '/{id}' : ''}${opName ? `/$${opName}` : ''}`;
  const base = { release: release as Release, resource, path: template };
  const verb = method.toUpperCase();
  if (opName) return { ...base, interaction: 'operation', operationName: opName };
  if (verb === 'GET') return { ...base, interaction: idPart ? 'read' : 'search-type' };
  if (verb === 'POST' && !idPart) return { ...base, interaction: 'create' };
  if (verb === 'PUT' && idPart) return { ...base, interaction: 'update' };
  return undefined;
}

/** Method and path of a CapabilityStatement interaction. */
export function interactionRoute(release: Release, resource: string, interaction: Exclude<ModelInteraction, 'operation'>): { method: string; path: string } {
  const type = `/fhir/${release}/${resource}`;
  switch (interaction) {
    case 'read':
      return { method: 'GET', path: `${type}/{id}` };
    case 'search-type':
      return { method: 'GET', path: type };
    case 'create':
      return { method: 'POST', path: type };
    case 'update':
      return { method: 'PUT', path: `${type}/{id}` };
  }
}

/** Short name used in generated operation ids (`Encounter.search`, `DocumentReference.upload`). */
export function shortName(interaction: ModelInteraction, operationName?: string): string {
  if (interaction === 'operation') return operationName ?? 'operation';
  return interaction === 'search-type' ? 'search' : interaction;
}

/** Whether `METHOD path` (relative to the base URL) is one of `operations` (a path parameter matches any one segment). */
export function operationMatcher(operations: readonly Pick<ModelOperation, 'method' | 'path'>[]): (method: string, path: string) => boolean {
  const routes = operations.map((op) => ({
    method: op.method.toUpperCase(),
    pattern: new RegExp(`^${op.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));
  return (method, path) => routes.some((r) => r.method === method.toUpperCase() && r.pattern.test(path));
}
