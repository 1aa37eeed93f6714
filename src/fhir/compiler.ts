import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { DataValidationCxt } from 'ajv/dist/types/index.js';
import draft06 from 'ajv/dist/refs/json-schema-draft-06.json' with { type: 'json' };
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

/**
 * Compiles the validators of one release's resource types, lazily and once per type. All
 * definitions are registered under the file's `$id`; ajv compiles only what a type reaches, and
 * with `ResourceList` stubbed that is a small subset shared between types.
 */
export class ReleaseCompiler {
  private readonly ajv: Ajv;
  private readonly checks = new Map<string, TypeCheck>();

  constructor(private readonly schema: ReleaseSchema) {
    // `code.optimize: false` about halves the cold compile; validation speed stays within bench noise.
    this.ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false, passContext: true, code: { optimize: false } });
    this.ajv.addMetaSchema(draft06);
    this.ajv.addKeyword({
      keyword: NESTED_RESOURCE_KEYWORD,
      schemaType: 'boolean',
      errors: false,
      validate(this: CallContext, _schema: boolean, data: unknown, _parent?: unknown, cxt?: DataValidationCxt): boolean {
        if (isResourceLike(data)) this.nested.push({ pointer: cxt?.instancePath ?? '', resource: data });
        return true;
      },
    });
    // The file's root `id` becomes `$id` (ajv refuses `id`). The root's discriminated `oneOf` over
    // all resources is left out: the validator dispatches on `resourceType` itself.
    this.ajv.addSchema({ $id: schema.id, $schema: schema.$schema, definitions: schema.definitions });
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
    const validate = this.ajv.getSchema(`${this.schema.id}#/definitions/${resourceType}`) as ValidateFunction | undefined;
    if (!validate) throw new Error(`FHIR ${this.schema.release} schema has no definition for ${resourceType}`);
    return (resource) => {
      const context: CallContext = { nested: [] };
      const valid = validate.call(context, resource);
      return { errors: valid ? [] : [...(validate.errors ?? [])], nested: context.nested };
    };
  }
}

function isResourceLike(data: unknown): data is Record<string, unknown> {
  return typeof data === 'object' && data !== null && !Array.isArray(data) && typeof (data as Record<string, unknown>).resourceType === 'string';
}
