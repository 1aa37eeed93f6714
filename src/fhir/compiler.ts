import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Ajv, ErrorObject, KeywordCxt, ValidateFunction } from 'ajv';
import draft06 from 'ajv/dist/refs/json-schema-draft-06.json' with { type: 'json' };
import { ajvModule, keepModule, keptModule, validatorCacheDir } from '../validator-cache.js';
import { NESTED_RESOURCE_KEYWORD } from './schema-source.js';
import type { ReleaseSchema } from './schema-source.js';

/** A resource found at an "any resource" position, to be validated by its own type. */
export interface NestedResource {
  /** JSON pointer of the nested resource inside the validated one, e.g. `/entry/3/resource`. */
  pointer: string;
  resource: Record<string, unknown>;
}

export interface TypeCheckResult {
  errors: ErrorObject[];
  nested: NestedResource[];
}

export type TypeCheck = (resource: unknown) => TypeCheckResult;

/** Per-call context handed to the nested-resource keyword through ajv's `passContext`. */
interface CallContext {
  nested: NestedResource[];
}

const moduleRequire = createRequire(import.meta.url);
// ajv (ajvModule) and its CommonJS parts are required on the first compile only, required as they are
// (their ESM default is the whole module object).
const codegen = () => moduleRequire('ajv/dist/compile/codegen/index.js') as typeof import('ajv/dist/compile/codegen/index.js');
const names = () => (moduleRequire('ajv/dist/compile/names.js') as typeof import('ajv/dist/compile/names.js')).default;
const standaloneCode = (ajv: Ajv, refs: Record<string, string>) =>
  (moduleRequire('ajv/dist/standalone/index.js') as (ajv: Ajv, refs: Record<string, string>) => string)(ajv, refs);
const AJV_VERSION = (moduleRequire('ajv/package.json') as { version: string }).version;
/** This file's text: a change to the options or the keyword below makes new cache keys. */
const COMPILER_SOURCE = readFileSync(fileURLToPath(import.meta.url), 'utf8');

/**
 * Compiles the validators of one release's resource types, lazily and once per type. All
 * definitions are registered under the file's `$id`; ajv compiles only what a type reaches, and
 * with `ResourceList` stubbed that is a small subset shared between types.
 */
export class ReleaseCompiler {
  private ajvInstance: Ajv | undefined;
  private readonly checks = new Map<string, TypeCheck>();
  private schemaKey: string | undefined;
  /** The kept module's validators by type (empty when none is kept); undefined until first needed. */
  private kept: Record<string, ValidateFunction> | undefined;
  /** Types compiled by this process's ajv (absent from the kept module when it was read). */
  private readonly compiledHere = new Set<string>();

  constructor(private readonly schema: ReleaseSchema) {}

  /**
   * The ajv instance with the release's definitions, made on the first compile: registering the
   * definitions walks the whole schema (about 65 ms a release), which a run whose validators are
   * all in the cache never needs.
   */
  private get ajv(): Ajv {
    if (this.ajvInstance) return this.ajvInstance;
    const schema = this.schema;
    // `code.optimize: false` about halves the cold compile; validation speed stays within bench noise.
    // `code.source` keeps the generated code, written to the cache.
    const { Ajv: AjvClass, _ } = ajvModule();
    const { strConcat } = codegen();
    const ajv = new AjvClass({ strict: false, allErrors: true, validateSchema: false, passContext: true, code: { optimize: false, source: true } });
    ajv.addMetaSchema(draft06);
    // A resource at an "any resource" position is recorded in the call's context (`this`, through
    // `passContext`) with its JSON pointer, to be validated by its own type. Generated code, so the
    // compiled validator can be written out as standalone code.
    ajv.addKeyword({
      keyword: NESTED_RESOURCE_KEYWORD,
      schemaType: 'boolean',
      errors: false,
      code(cxt: KeywordCxt) {
        const { gen, data, it } = cxt;
        gen.if(_`${data} && typeof ${data} == "object" && !Array.isArray(${data}) && typeof ${data}.resourceType == "string"`, () =>
          gen.code(_`this.nested.push({pointer: ${strConcat(names().instancePath, it.errorPath)}, resource: ${data}})`),
        );
      },
    });
    // The file's root `id` becomes `$id` (ajv refuses `id`). The root's discriminated `oneOf` over
    // all resources is left out: the validator dispatches on `resourceType` itself.
    ajv.addSchema({ $id: schema.id, $schema: schema.$schema, definitions: schema.definitions });
    this.ajvInstance = ajv;
    return ajv;
  }

  /** The check for `resourceType`; compiles it on first use. The type must be in `schema.resourceTypes`. */
  check(resourceType: string): TypeCheck {
    let check = this.checks.get(resourceType);
    if (!check) {
      check = this.compile(resourceType);
      this.checks.set(resourceType, check);
    }
    return check;
  }

  private compile(resourceType: string): TypeCheck {
    const validate = this.validator(resourceType);
    return (resource) => {
      const context: CallContext = { nested: [] };
      const valid = validate.call(context, resource);
      return { errors: valid ? [] : [...(validate.errors ?? [])], nested: context.nested };
    };
  }

  /**
   * The release's validators are kept between processes as one standalone module exporting a
   * validator per type a run has used: the types share most of their definitions, which a module a
   * type repeated (about 400 kB each, 5.5 MB for the 13 types a quick run uses, all parsed at load).
   * A type the kept module lacks is compiled here and the module written again with it.
   */
  private validator(resourceType: string): ValidateFunction {
    this.schemaKey ??= createHash('sha256').update(`${AJV_VERSION}\0${COMPILER_SOURCE}\0${this.schema.id}\0${this.schema.digest}`).digest('hex').slice(0, 32);
    const name = `fhir-${this.schema.release}-${this.schemaKey}`;
    const dir = validatorCacheDir();
    if (this.kept === undefined) {
      const exports = keptModule(name, moduleRequire, dir);
      this.kept = exports !== null && typeof exports === 'object' ? (exports as Record<string, ValidateFunction>) : {};
    }
    const kept = this.kept[resourceType];
    if (typeof kept === 'function') return kept;
    const ref = (type: string) => `${this.schema.id}#/definitions/${type}`;
    const compiled = this.ajv.getSchema(ref(resourceType)) as ValidateFunction | undefined;
    if (!compiled) throw new Error(`FHIR ${this.schema.release} schema has no definition for ${resourceType}`);
    this.compiledHere.add(resourceType);
    const types = [...new Set([...Object.keys(this.kept), ...this.compiledHere])].filter((t) => this.schema.resourceTypes.has(t)).sort();
    if (dir !== undefined) keepModule(name, standaloneCode(this.ajv, Object.fromEntries(types.map((t) => [t, ref(t)]))), dir);
    return compiled;
  }
}
