/**
 * Invalid write bodies derived from an operation's published request schema
 * (spec: HPB-00101 "Body must match the FHIR R4 schema; `resourceType` and
 * required fields present"). The variant list is fixed by the schema alone, so
 * check ids are stable; the instance each variant starts from is generated with
 * json-schema-faker, seeded by the check id, so runs are reproducible.
 */
import { generate, type JsonSchema } from 'json-schema-faker';
import { isObject, type Resource } from '../../src/service/index.js';

export type InvalidVariant = { kind: 'missing'; field: string } | { kind: 'wrong-resource-type' } | { kind: 'wrong-type'; field: string; jsonType: string };

const JSON_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array'] as const;

function requiredFields(schema: object): string[] {
  const required = (schema as { required?: unknown }).required;
  return Array.isArray(required) ? required.filter((f): f is string => typeof f === 'string') : [];
}

function jsonTypeOf(schema: object, field: string): string | undefined {
  const properties = (schema as { properties?: Record<string, unknown> }).properties;
  const type = isObject(properties?.[field]) ? (properties![field] as { type?: unknown }).type : undefined;
  return typeof type === 'string' && (JSON_TYPES as readonly string[]).includes(type) ? type : undefined;
}

/** Every variant the schema supports: each required field removed, a wrong resourceType, each typed required field with another JSON type. */
export function invalidVariants(schema: object): InvalidVariant[] {
  const required = requiredFields(schema);
  const variants: InvalidVariant[] = required.map((field) => ({ kind: 'missing', field }));
  if (required.includes('resourceType')) variants.push({ kind: 'wrong-resource-type' });
  for (const field of required) {
    const jsonType = field === 'resourceType' ? undefined : jsonTypeOf(schema, field);
    if (jsonType) variants.push({ kind: 'wrong-type', field, jsonType });
  }
  return variants;
}

export function variantSlug(v: InvalidVariant): string {
  const field = (f: string) => f.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
  if (v.kind === 'missing') return `missing-${field(v.field)}`;
  if (v.kind === 'wrong-resource-type') return 'wrong-resource-type';
  return `wrong-type-${field(v.field)}`;
}

/** A value whose JSON type differs from `jsonType`. */
function otherTypeValue(jsonType: string): unknown {
  if (jsonType === 'string') return 12345;
  if (jsonType === 'array') return { not: 'an array' };
  return `not-a-${jsonType}`;
}

/** 32-bit FNV-1a of the check id: the faker seed. */
export function seedOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * A valid-shaped instance: json-schema-faker's required-only instance of the
 * schema, with the required fields a known-valid body (from the fixtures) sets
 * taken from that body, so a variant breaks one rule only.
 */
export async function validShapedInstance(schema: object, seed: number, valid: Resource): Promise<Resource> {
  const generated = await generate(schema as JsonSchema, { seed, optionalsProbability: 0 });
  const instance: Resource = isObject(generated) ? { ...generated } : {};
  for (const field of Object.keys(instance)) if (field in valid) instance[field] = valid[field];
  for (const field of requiredFields(schema)) if (field in valid) instance[field] = valid[field];
  // The run tag, so anything a faulty target stores is traceable to this run.
  if ('meta' in valid) instance.meta = valid.meta;
  return instance;
}

/** The instance with the variant's one violation. */
export function applyVariant(instance: Resource, v: InvalidVariant): Resource {
  const body = { ...instance };
  if (v.kind === 'missing') delete body[v.field];
  else if (v.kind === 'wrong-resource-type') body.resourceType = body.resourceType === 'Patient' ? 'Practitioner' : 'Patient';
  else body[v.field] = otherTypeValue(v.jsonType);
  return body;
}
