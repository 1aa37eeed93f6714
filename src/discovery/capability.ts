/** Turns a CapabilityStatement into operations (resources, interactions, search params, scopes, operations). */
import { OPERATION_PATH_EXTENSION, REQUIRED_SCOPE_EXTENSION, type ModelInteraction, type ModelOperation, type Release } from './model.js';
import { classifyPath, interactionRoute, shortName } from './paths.js';
import { PATHS } from '../service/paths.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isObject) : []);

const INTERACTIONS: ReadonlySet<string> = new Set(['read', 'search-type', 'create', 'update']);
const FHIR_VERSION: Record<Release, RegExp> = { R4: /^4\.0\./, R5: /^5\.0\./ };

export function metadataPath(release: Release): string {
  return PATHS.metadata[release];
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

/**
 * `note` receives remarks that are no fault of the target (an operation whose path is not published).
 * `baseUrl`: the target's base URL, against which published URLs are read (see `publishedPath`).
 */
export function operationsFromCapability(cs: Json, release: Release, note: (p: string) => void, baseUrl = 'http://target.invalid/'): ModelOperation[] {
  const source = release === 'R4' ? 'capability-r4' : 'capability-r5';
  const out: ModelOperation[] = [];
  for (const rest of list(cs.rest)) {
    const common = searchParams(rest);
    for (const resource of list(rest.resource)) {
      const type = resource.type;
      if (typeof type !== 'string') continue;
      const params = mergeParams(searchParams(resource), common);
      const base = (
        interaction: ModelInteraction,
        route: { method: string; path: string },
        scope: string | undefined,
        operationName?: string,
      ): ModelOperation => ({
        operationId: `${type}.${shortName(interaction, operationName)}`,
        release,
        resource: type,
        interaction,
        ...(operationName ? { operationName } : {}),
        method: route.method,
        path: route.path,
        ...(scope ? { scope } : {}),
        ...(typeof resource.profile === 'string' && resource.profile !== '' ? { profile: resource.profile } : {}),
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
        const route = operationRoute(op, { release, type, name, note, base: serviceBase(cs, release, baseUrl) });
        out.push({
          ...base('operation', route, extensionValue(op, REQUIRED_SCOPE_EXTENSION), name),
          ...(route.assumed ? { pathAssumed: true } : {}),
          ...(typeof op.definition === 'string' ? { definition: op.definition } : {}),
          ...(typeof op.documentation === 'string' ? { documentation: op.documentation } : {}),
          ...optionalQuery(typeof op.documentation === 'string' ? queryInText(op.documentation, route.path.split('/').pop() ?? `$${name}`) : undefined),
        });
      }
    }
  }
  return out;
}

/**
 * A `/fhir/<release>/<Type>[/<id>]/$<operation>` path inside a text (an absolute URL or a
 * bare path): the one naming this operation, else the only operation path there is.
 */
function pathInText(text: string, release: Release, type: string, name: string): string | undefined {
  const found = [...text.matchAll(new RegExp(`/fhir/${release}/${type}(?:/[^\\s/$]+)?/\\$[A-Za-z][\\w-]*`, 'g'))]
    .map((m) => classifyPath('POST', m[0]))
    .filter((shape) => shape?.interaction === 'operation');
  const own = found.find((shape) => shape!.operationName === name);
  const paths = [...new Set(found.map((shape) => shape!.path))];
  return own?.path ?? (paths.length === 1 ? paths[0] : undefined);
}

interface RouteContext {
  release: Release;
  type: string;
  name: string;
  note: (p: string) => void;
  /** The target's base URL and the FHIR service base relative URLs of this statement resolve against. */
  base: { target: URL; service: URL };
}

const withSlash = (u: string) => (u.endsWith('/') ? u : `${u}/`);

/**
 * Where relative URLs of the statement resolve: `implementation.url` when it is a URL under the
 * target's base URL (the FHIR base of this release), else `{baseUrl}/fhir/<release>/`.
 */
function serviceBase(cs: Json, release: Release, baseUrl: string): { target: URL; service: URL } {
  const target = new URL(withSlash(baseUrl));
  const fallback = new URL(`fhir/${release}/`, target);
  const implementation = isObject(cs.implementation) && typeof cs.implementation.url === 'string' ? cs.implementation.url : undefined;
  if (!implementation) return { target, service: fallback };
  try {
    const url = new URL(withSlash(implementation), target);
    return { target, service: url.origin === target.origin && url.pathname.startsWith(target.pathname) ? url : fallback };
  } catch {
    return { target, service: fallback };
  }
}

/**
 * A published operation path relative to the target's base URL: `/fhir/...` as written (the
 * spec's paths are relative to the base address); an absolute URL under the base URL without it;
 * another relative reference resolved against the FHIR base (`DocumentReference/$upload`); an
 * absolute URL elsewhere read by its path under the base URL, with a note (no other host is called).
 */
function publishedPath(written: string, where: RouteContext): string {
  if (written.startsWith('/fhir/')) return written;
  const { target, service } = where.base;
  let url: URL;
  try {
    // Braces of a template survive URL parsing as %7B/%7D: put them back.
    url = new URL(written, service);
  } catch {
    return written;
  }
  const path = decodeURI(url.pathname).replace(/%24/gi, '$');
  if (url.origin === target.origin && withSlash(url.pathname).startsWith(target.pathname)) return `/${path.slice(target.pathname.length)}`;
  where.note(
    `${metadataPath(where.release)}: operation $${where.name} on ${where.type} publishes ${written}, outside the base URL ${target.href}; its path ${path} is read under the base URL, no other host is called`,
  );
  return path;
}

/** The query written right after the operation's last path segment (`$upload?...`) in a text (trailing punctuation dropped), if any. */
export function queryInText(text: string, segment: string): string | undefined {
  const m = new RegExp(`\\$${segment.replace(/[^\w-]/g, '')}\\?(\\S+)`).exec(text);
  const query = m?.[1]?.replace(/[.,;:)\]]+$/, '');
  return query ? query : undefined;
}

const optionalQuery = (query: string | undefined) => (query === undefined ? {} : { query });

/**
 * An operation's route, from what the CapabilityStatement publishes: the
 * operation-path extension, else a path in `documentation`. With neither, the
 * type-level `$name` form is assumed (`assumed`), which is a guess: the spec
 * does not show operation paths.
 */
function operationRoute(op: Json, where: RouteContext): { method: string; path: string; assumed?: true } {
  const { release, type, name, note } = where;
  const written = extensionValue(op, OPERATION_PATH_EXTENSION);
  const published = written === undefined ? undefined : publishedPath(written, where);
  if (published !== undefined) return { method: 'POST', path: classifyPath('POST', published)?.path ?? published };
  const documented = typeof op.documentation === 'string' ? pathInText(op.documentation, release, type, name) : undefined;
  if (documented) return { method: 'POST', path: documented };
  const path = `/fhir/${release}/${type}/$${name}`;
  note(`${metadataPath(release)}: operation $${name} on ${type} publishes no path; ${path} assumed`);
  return { method: 'POST', path, assumed: true };
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
