/** Turns a CapabilityStatement into operations (resources, interactions, search params, scopes, operations). */
import { OPERATION_PATH_EXTENSION, REQUIRED_SCOPE_EXTENSION, type ModelInteraction, type ModelOperation, type Release } from './model.js';
import { classifyPath, interactionRoute, shortName } from './paths.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isObject) : []);

const INTERACTIONS: ReadonlySet<string> = new Set(['read', 'search-type', 'create', 'update']);
const FHIR_VERSION: Record<Release, RegExp> = { R4: /^4\.0\./, R5: /^5\.0\./ };

export function metadataPath(release: Release): string {
  return `/fhir/${release}/metadata`;
}

/** The extension value (valueString / valueCode / valueUri) with this url, if any. */
function extensionValue(holder: Json, url: string): string | undefined {
  const ext = list(holder.extension).find((e) => e.url === url);
  const value = ext?.valueString ?? ext?.valueCode ?? ext?.valueUri;
  return typeof value === 'string' ? value : undefined;
}

/** Checks the CapabilityStatement's shape; undefined (after a problem) when it is not one. */
export function checkCapability(doc: unknown, release: Release, problem: (p: string) => void): Json | undefined {
  const where = metadataPath(release);
  if (!isObject(doc) || doc.resourceType !== 'CapabilityStatement') {
    const type = isObject(doc) ? String(doc.resourceType) : typeof doc;
    problem(`${where} is not a CapabilityStatement (resourceType ${type})`);
    return undefined;
  }
  if (typeof doc.fhirVersion === 'string' && !FHIR_VERSION[release].test(doc.fhirVersion)) {
    problem(`${where} declares fhirVersion ${doc.fhirVersion}, expected ${release === 'R4' ? '4.0.x' : '5.0.x'}`);
  }
  return doc;
}

export function operationsFromCapability(cs: Json, release: Release, problem: (p: string) => void): ModelOperation[] {
  const source = release === 'R4' ? 'capability-r4' : 'capability-r5';
  const out: ModelOperation[] = [];
  for (const rest of list(cs.rest)) {
    const common = searchParams(rest);
    for (const resource of list(rest.resource)) {
      const type = resource.type;
      if (typeof type !== 'string') continue;
      const params = mergeParams(searchParams(resource), common);
      const base = (interaction: ModelInteraction, route: { method: string; path: string }, scope: string | undefined, operationName?: string): ModelOperation => ({
        operationId: `${type}.${shortName(interaction, operationName)}`,
        release,
        resource: type,
        interaction,
        ...(operationName ? { operationName } : {}),
        method: route.method,
        path: route.path,
        ...(scope ? { scope } : {}),
        searchParams: interaction === 'search-type' ? params : [],
        errorStatuses: [],
        errorCodes: [],
        sources: [source],
      });
      for (const i of list(resource.interaction)) {
        if (typeof i.code !== 'string' || !INTERACTIONS.has(i.code)) continue;
        const interaction = i.code as Exclude<ModelInteraction, 'operation'>;
        out.push(base(interaction, interactionRoute(release, type, interaction), extensionValue(i, REQUIRED_SCOPE_EXTENSION)));
      }
      for (const op of list(resource.operation)) {
        if (typeof op.name !== 'string') continue;
        const name = op.name.replace(/^\$/, '');
        out.push(base('operation', operationRoute(op, release, type, name, problem), extensionValue(op, REQUIRED_SCOPE_EXTENSION), name));
      }
    }
  }
  return out;
}

/** An operation's route from the operation-path extension; type level `$name` when absent. */
function operationRoute(op: Json, release: Release, type: string, name: string, problem: (p: string) => void): { method: string; path: string } {
  const published = extensionValue(op, OPERATION_PATH_EXTENSION);
  if (published === undefined) {
    const path = `/fhir/${release}/${type}/$${name}`;
    problem(`${metadataPath(release)}: operation $${name} on ${type} has no operation-path extension; assumed POST ${path}`);
    return { method: 'POST', path };
  }
  return { method: 'POST', path: classifyPath('POST', published)?.path ?? published };
}

function searchParams(holder: Json): Array<{ name: string; type?: string }> {
  return list(holder.searchParam)
    .filter((p) => typeof p.name === 'string')
    .map((p) => (typeof p.type === 'string' ? { name: p.name as string, type: p.type } : { name: p.name as string }));
}

function mergeParams(own: Array<{ name: string; type?: string }>, common: Array<{ name: string; type?: string }>) {
  const names = new Set(own.map((p) => p.name));
  return [...own, ...common.filter((p) => !names.has(p.name))];
}
