/**
 * A valid write body for any resource type the target publishes a write for, derived
 * from what it publishes: the operation's request schema (OpenAPI `requestBody`) and
 * the HL7 FHIR JSON schema of the release and type (src/fhir/). json-schema-faker
 * (seeded, so the body is the same on every run) builds the required fields of both (the
 * published schema's win; one may say little, `type: object`); the spec's
 * meaning is laid over them: the run's tag, references to the fixtures (patient,
 * encounter, practitioner), a status the resource accepts, a small document inline for
 * an attachment, a text for an empty CodeableConcept. The result is validated against
 * both schemas; a body that does not validate is a bug of ours (an error,
 * never a verdict on the target).
 */
import type { Ajv } from 'ajv';
import { generate, type JsonSchema } from 'json-schema-faker';
import type { CheckContext } from '../engine/context.js';
import { createFhirValidator, type FhirValidator, formatIssue } from '../fhir/index.js';
import { typeSchema } from '../fhir/schema-source.js';
import { documentType, handWrittenResource, inlineAttachment, type Resource, runMeta } from './bodies.js';
import { smallDocument } from './documents.js';
import { isObject } from './expect.js';
import { ajvModule } from '../validator-cache.js';

type Json = Record<string, unknown>;
type Release = 'R4' | 'R5';

export interface BodySource {
  release: Release;
  resource: string;
  /** The dereferenced request schema the target published for the write, if any. */
  requestSchema?: object;
  /** The CapabilityStatement's profile of the type (a canonical URL), if it names one. */
  profile?: string;
}

/** The canonical URL of the HL7 base profile of a type: a body of the base schema conforms to it. */
export const baseProfileUrl = (type: string) => `http://hl7.org/fhir/StructureDefinition/${type}`;

/**
 * The top-level elements a StructureDefinition of `type` requires (`min` >= 1 at `<type>.<name>`,
 * from its snapshot, else its differential); a choice `value[x]` is returned as written.
 */
export function profileRequiredElements(structureDefinition: unknown, type: string): string[] {
  if (!isObject(structureDefinition) || structureDefinition.resourceType !== 'StructureDefinition') return [];
  const holder = isObject(structureDefinition.snapshot) ? structureDefinition.snapshot : structureDefinition.differential;
  const elements = isObject(holder) && Array.isArray(holder.element) ? holder.element : [];
  const out = new Set<string>();
  for (const e of elements) {
    if (!isObject(e) || typeof e.path !== 'string' || typeof e.min !== 'number' || e.min < 1) continue;
    const m = new RegExp(`^${type}\\.([A-Za-z][A-Za-z0-9]*(?:\\[x\\])?)$`).exec(e.path);
    if (m) out.add(m[1]!);
  }
  return [...out];
}

/**
 * The profile's StructureDefinition, where the target serves it: the canonical URL under the
 * target's base URL (no other host is called). Undefined otherwise.
 */
async function servedProfile(ctx: CheckContext, profile: string): Promise<unknown> {
  const base = ctx.config.baseUrl.replace(/\/+$/, '');
  if (!profile.startsWith(`${base}/`)) return undefined;
  // Read once a run: the checks that derive a body of the type share it.
  const cache = (ctx.shared.get(PROFILES) as Map<string, Promise<unknown>> | undefined) ?? new Map<string, Promise<unknown>>();
  ctx.shared.set(PROFILES, cache);
  let sd = cache.get(profile);
  if (!sd) {
    sd = ctx
      .request({ url: profile.slice(base.length), headers: { accept: 'application/fhir+json' } })
      .then((res) => (res.status === 200 && isObject(res.json) && res.json.resourceType === 'StructureDefinition' ? res.json : undefined));
    cache.set(profile, sd);
  }
  return sd;
}

const PROFILES = 'derived-body.profiles';

/** The body of `src` with the profile's required elements the base schema left out, as the FHIR schema types them. */
async function withProfile(ctx: CheckContext, src: BodySource, body: Json, seed: number): Promise<Json> {
  if (!src.profile || src.profile === baseProfileUrl(src.resource)) return body;
  const sd = await servedProfile(ctx, src.profile);
  const required = sd ? profileRequiredElements(sd, src.resource) : [];
  ctx.observe(
    'body.profile',
    sd ? { profile: src.profile, requiredElements: required } : { profile: src.profile, derivedFrom: 'the base schema' },
    sd
      ? "the body derived from the schema holds the required elements of the target's StructureDefinition"
      : 'the profile is neither served by the target as a StructureDefinition nor known to the suite: the body is from the base schema',
  );
  const fhir = fhirDefinition(src.release, src.resource);
  if (!fhir) return body;
  const properties = (isObject(fhir.definition.properties) ? fhir.definition.properties : {}) as Record<string, unknown>;
  const out: Json = { ...body };
  for (const element of required) {
    const choices = element.endsWith('[x]') ? Object.keys(properties).filter((k) => k.startsWith(element.slice(0, -3)) && !k.startsWith('_')) : [element];
    if (choices.some((k) => k in out)) continue;
    const key = choices.find((k) => ['String', 'CodeableConcept', 'DateTime', 'Reference'].some((t) => k.endsWith(t))) ?? choices[0];
    const property = key ? properties[key] : undefined;
    if (!key || !isObject(property)) continue;
    const type = refName(property);
    const many = property.type === 'array';
    const value =
      meaningful(ctx, key, type) ?? (await generate({ ...property, definitions: fhir.definitions } as JsonSchema, { seed, optionalsProbability: 0 }));
    out[key] = many && !Array.isArray(value) ? [value] : value;
  }
  return out;
}

/** Statuses the spec names for writes, preferred when the schema allows them (else the schema's first). */
const PREFERRED_STATUSES = ['active', 'current', 'planned', 'final', 'registered', 'draft'];
/** The reference naming whose record it is: always set (to the fixture patient); other references only where the schema requires them. */
const SUBJECT_KEYS = ['subject', 'patient', 'beneficiary'];

/** 32-bit FNV-1a: the faker seed of a body, from its release and type (the same body every run). */
export function seedFor(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

const validators = new Map<string, FhirValidator>();
/** A validator of this one type (the shared one covers the default types only). */
function fhirValidatorFor(release: Release, type: string): FhirValidator {
  const key = `${release} ${type}`;
  let v = validators.get(key);
  if (!v) {
    v = createFhirValidator({ types: { [release]: [type] } });
    validators.set(key, v);
  }
  return v;
}

/** The FHIR definition of the type, or undefined when the release has no such resource type. */
function fhirDefinition(release: Release, type: string): { definitions: Record<string, Json>; definition: Json } | undefined {
  const fhir = typeSchema(release, type);
  return fhir && { definitions: fhir.definitions as Record<string, Json>, definition: fhir.definition as Json };
}

/**
 * The HL7 FHIR JSON schema of one resource type of `release`, self-contained (the definitions it
 * reaches at its root, so its `$ref`s resolve: schema-source.ts `typeSchema`): what the invalid variants of a write derive
 * from when the target publishes no request schema. Undefined when the release has no such type.
 */
export function fhirResourceSchema(release: Release, type: string): object | undefined {
  const fhir = fhirDefinition(release, type);
  return fhir ? { ...fhir.definition, definitions: fhir.definitions } : undefined;
}

/** The definition name a property refers to (`#/definitions/Reference`, or its array items'). */
function refName(property: unknown): string | undefined {
  if (!isObject(property)) return undefined;
  const ref =
    typeof property.$ref === 'string' ? property.$ref : isObject(property.items) && typeof property.items.$ref === 'string' ? property.items.$ref : undefined;
  return ref?.split('/').pop();
}

function enumOf(property: unknown, definitions: Record<string, Json>): string[] | undefined {
  if (!isObject(property)) return undefined;
  if (Array.isArray(property.enum)) return property.enum.filter((v): v is string => typeof v === 'string');
  const name = refName(property);
  const target = name ? definitions[name] : undefined;
  return target && Array.isArray(target.enum) ? target.enum.filter((v): v is string => typeof v === 'string') : undefined;
}

/** The fixture a reference property of this name points to, if the config has one. */
function fixtureReference(ctx: CheckContext, key: string): Json | undefined {
  const byKey: Record<string, [string, string]> = {
    subject: ['Patient', 'patient'],
    patient: ['Patient', 'patient'],
    beneficiary: ['Patient', 'patient'],
    encounter: ['Encounter', 'encounter'],
    performer: ['Practitioner', 'practitioner'],
    requester: ['Practitioner', 'practitioner'],
    author: ['Practitioner', 'practitioner'],
  };
  const target = byKey[key];
  if (!target || !ctx.hasFixture(target[1])) return undefined;
  return { reference: `${target[0]}/${ctx.fixture(target[1])}` };
}

/** A value with meaning for a property of a complex type, where the faker left it empty or the spec needs one. */
function meaningful(ctx: CheckContext, key: string, type: string | undefined): unknown {
  if (type === 'Reference') return fixtureReference(ctx, key) ?? { display: `fhir-conformance run ${ctx.runId}` };
  if (type === 'CodeableConcept') return { text: `fhir-conformance run ${ctx.runId}` };
  if (type === 'Coding') return { system: 'https://fhir-conformance.dev/code', code: 'conformance' };
  if (type === 'Attachment') return inlineAttachment(documentType(ctx), smallDocument(documentType(ctx)));
  return undefined;
}

const isEmpty = (v: unknown) => (isObject(v) && Object.keys(v).length === 0) || (Array.isArray(v) && v.length === 0);

/** Lays the spec's meaning over a generated instance of `type` (its FHIR definition when known). */
function withMeaning(ctx: CheckContext, src: BodySource, generated: Json): Json {
  const fhir = fhirDefinition(src.release, src.resource);
  const properties = (fhir && isObject(fhir.definition.properties) ? fhir.definition.properties : {}) as Record<string, unknown>;
  const body: Json = { ...generated, resourceType: src.resource, meta: runMeta(ctx) };
  delete body.id;
  for (const [key, property] of Object.entries(properties)) {
    const type = refName(property);
    const many = isObject(property) && property.type === 'array';
    if (key === 'status') {
      const allowed = fhir ? enumOf(property, fhir.definitions) : undefined;
      const status = allowed?.length ? (PREFERRED_STATUSES.find((s) => allowed.includes(s)) ?? allowed[0]) : undefined;
      if (status) body.status = status;
      continue;
    }
    // References the spec's rules hang on (the patient a record belongs to, its encounter): from the fixtures.
    const ref = type === 'Reference' ? fixtureReference(ctx, key) : undefined;
    if (ref && (key in body || SUBJECT_KEYS.includes(key))) {
      body[key] = many ? [ref] : ref;
      continue;
    }
    if (!(key in body)) continue;
    if (many && Array.isArray(body[key])) {
      body[key] = (body[key] as unknown[]).slice(0, 1).map((item) => (isEmpty(item) ? (meaningful(ctx, key, type) ?? item) : fillInner(ctx, item)));
    } else if (isEmpty(body[key])) body[key] = meaningful(ctx, key, type) ?? body[key];
    else body[key] = fillInner(ctx, body[key]);
  }
  return body;
}

/** Empty `attachment` objects inside a backbone element (DocumentReference.content[].attachment) get a small document. */
function fillInner(ctx: CheckContext, value: unknown): unknown {
  if (!isObject(value)) return value;
  const out: Json = { ...value };
  if (isObject(out.attachment) && Object.keys(out.attachment).length === 0) out.attachment = meaningful(ctx, 'attachment', 'Attachment');
  if (isObject(out.code) && Object.keys(out.code).length === 0) out.code = meaningful(ctx, 'code', 'CodeableConcept');
  return out;
}

let ajv: Ajv | undefined;
/** ajv for the target's request schemas, made when one is first checked (a run with none never loads ajv). */
function requestSchemaAjv(): Ajv {
  ajv ??= new (ajvModule().Ajv)({ strict: false, allErrors: true, validateSchema: false });
  return ajv;
}

/** Problems of `body` against the schema it came from ([] = valid). */
export function bodyProblems(src: BodySource, body: Json): string[] {
  const problems: string[] = [];
  if (src.requestSchema) {
    const validate = requestSchemaAjv().compile(src.requestSchema);
    if (!validate(body)) problems.push(...(validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''}`));
  }
  if (fhirDefinition(src.release, src.resource)) problems.push(...fhirValidatorFor(src.release, src.resource).validate(src.release, body).map(formatIssue));
  return problems;
}

/**
 * The derived body of a write of `src`, deterministic for (release, type). Skips when neither the
 * target nor the release's FHIR schema describes the type; throws (an error of ours) when the
 * derived body does not validate against its schema.
 */
export async function derivedBody(ctx: CheckContext, src: BodySource): Promise<Resource> {
  const fhir = fhirDefinition(src.release, src.resource);
  if (!src.requestSchema && !fhir) ctx.skip(`neither the target's request schema nor the HL7 FHIR ${src.release} schema describes a ${src.resource}`);
  const seed = seedFor(`${src.release} ${src.resource}`);
  // The FHIR type's required fields, and over them the published schema's (a published schema may say little: `type: object`).
  const fromFhir = fhir
    ? await generate({ $ref: `#/definitions/${src.resource}`, definitions: fhir.definitions } as JsonSchema, { seed, optionalsProbability: 0 })
    : {};
  const published = src.requestSchema ? await generate(src.requestSchema as JsonSchema, { seed, optionalsProbability: 0 }) : {};
  const body = await withProfile(ctx, src, withMeaning(ctx, src, { ...(isObject(fromFhir) ? fromFhir : {}), ...(isObject(published) ? published : {}) }), seed);
  const problems = bodyProblems(src, body);
  if (problems.length > 0) {
    throw new Error(
      `the ${src.release} ${src.resource} body derived from ${src.requestSchema ? "the target's request schema" : 'the HL7 FHIR schema'} does not validate: ${problems.slice(0, 3).join('; ')}`,
    );
  }
  return body;
}

/** The body of a valid write: the hand-written one where it carries the spec's meaning, else the derived one. */
export async function writeBody(ctx: CheckContext, src: BodySource): Promise<Resource> {
  return handWrittenResource(ctx, src.release, src.resource) ?? derivedBody(ctx, src);
}
