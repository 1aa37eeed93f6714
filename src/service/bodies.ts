/**
 * The write bodies the suites send, built from the config's fixtures, each tagged
 * with the run id (spec: Resources and their fields; DocumentReference R5 shape
 * from the HL7 R5 definition, since the spec does not show it): the minimal valid
 * body of each type and release, and the fuller ones of the resource suites.
 */
import type { CheckContext } from '../engine/context.js';
import type { DocumentType } from '../config/index.js';
import { smallDocument } from './documents.js';

export const RUN_TAG_SYSTEM = 'https://fhir-conformance.dev/run';

export type Json = Record<string, unknown>;
export type Resource = Json;

/** The tag every resource this run creates carries. */
export function runTag(ctx: CheckContext): { system: string; code: string } {
  return { system: RUN_TAG_SYSTEM, code: ctx.runId };
}

/** `meta` with the run's tag. */
export function runMeta(ctx: CheckContext): Json {
  return { tag: [runTag(ctx)] };
}

/** The resource carries this run's tag. */
export function hasRunTag(ctx: CheckContext, r: Json): boolean {
  const meta = r.meta;
  return (
    typeof meta === 'object' &&
    meta !== null &&
    Array.isArray((meta as Json).tag) &&
    ((meta as Json).tag as unknown[]).some(
      (t) => typeof t === 'object' && t !== null && (t as Json).system === RUN_TAG_SYSTEM && (t as Json).code === ctx.runId,
    )
  );
}

const patientRef = (ctx: CheckContext) => ({ reference: `Patient/${ctx.fixture('patient')}` });

const BUILDERS: Record<string, (ctx: CheckContext) => Resource> = {
  'R4 MedicationRequest': (ctx) => ({
    resourceType: 'MedicationRequest',
    meta: runMeta(ctx),
    status: 'active',
    intent: 'order',
    medicationCodeableConcept: {
      coding: [{ system: 'http://www.nlm.nih.gov/research/umls/rxnorm', code: '197361', display: 'Amlodipine 5 MG Oral Tablet' }],
      text: 'Amlodipine 5 mg',
    },
    subject: patientRef(ctx),
  }),
  'R4 Encounter': (ctx) => ({
    resourceType: 'Encounter',
    meta: runMeta(ctx),
    status: 'planned',
    class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB', display: 'ambulatory' },
    subject: patientRef(ctx),
  }),
  'R5 DocumentReference': (ctx) => ({
    resourceType: 'DocumentReference',
    meta: runMeta(ctx),
    status: 'current',
    content: [{ attachment: { contentType: 'text/plain', data: Buffer.from('fhir-conformance run').toString('base64') } }],
    subject: patientRef(ctx),
  }),
};

/** The hand-written minimal body of this type and release (its fields carry the spec's meaning), if there is one. */
export function handWrittenResource(ctx: CheckContext, release: string, resource: string): Resource | undefined {
  return BUILDERS[`${release} ${resource}`]?.(ctx);
}

/** A minimal valid resource of this type for this release; skips when none is known (`writeBody` derives one for any type). */
export function minimalResource(ctx: CheckContext, release: string, resource: string): Resource {
  const build = BUILDERS[`${release} ${resource}`];
  if (!build) ctx.skip(`no minimal valid ${release} ${resource} body is known to the suite`);
  return build(ctx);
}

/** A valid MedicationRequest for the fixture patient, tagged with the run id; `undefined` overrides drop a field. */
export function newMedicationRequest(ctx: CheckContext, overrides: Resource = {}): Resource {
  return {
    resourceType: 'MedicationRequest',
    meta: runMeta(ctx),
    status: 'active',
    intent: 'order',
    medicationCodeableConcept: {
      coding: [{ system: 'http://www.nlm.nih.gov/research/umls/rxnorm', code: '197361', display: 'amlodipine 5 MG Oral Tablet' }],
      text: 'amlodipine 5 MG Oral Tablet',
    },
    subject: patientRef(ctx),
    dosageInstruction: [{ text: '1 tablet every 24 hours' }],
    note: [{ text: `created by fhir-conformance run ${ctx.runId}` }],
    ...overrides,
  };
}

/** A valid Encounter for the fixture patient, starting now; `overrides` replace top-level fields. */
export function encounterBody(ctx: CheckContext, overrides: Json = {}): Json {
  return {
    resourceType: 'Encounter',
    meta: runMeta(ctx),
    status: 'planned',
    class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB', display: 'ambulatory' },
    subject: patientRef(ctx),
    participant: [{ individual: { reference: `Practitioner/${ctx.fixture('practitioner')}` } }],
    period: { start: new Date().toISOString() },
    ...overrides,
  };
}

/**
 * A new record of the fixture patient of this type: the full MedicationRequest (newMedicationRequest)
 * and Encounter (encounterBody) the suites write, else the type's minimal body (minimalResource).
 */
export function newRecordOf(ctx: CheckContext, release: string, resource: string): Json {
  if (resource === 'MedicationRequest') return newMedicationRequest(ctx);
  if (resource === 'Encounter') return encounterBody(ctx);
  return minimalResource(ctx, release, resource);
}

/** The media type of the documents the suite sends (config `documentReference.upload.contentType`, else PDF). */
export function documentType(ctx: CheckContext): DocumentType {
  return ctx.config.documentReference.upload?.contentType ?? 'application/pdf';
}

/** An attachment carrying `data` inline (base64). */
export function inlineAttachment(type: DocumentType, data: Buffer): Json {
  return { contentType: type, data: base64Of(data), title: 'fhir-conformance document' };
}

/** Base64 of large documents, kept while the document lives (the size checks send one document each way). */
const encoded = new WeakMap<Buffer, string>();
export function base64Of(data: Buffer): string {
  if (data.length < 1024 * 1024) return data.toString('base64');
  let text = encoded.get(data);
  if (text === undefined) {
    text = data.toString('base64');
    encoded.set(data, text);
  }
  return text;
}

/** Now, to the second: what a server stores at any precision reads back the same. */
export function wholeSecondNow(): string {
  return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export const CATEGORY = {
  coding: [{ system: 'http://hl7.org/fhir/us/core/CodeSystem/us-core-documentreference-category', code: 'clinical-note', display: 'Clinical Note' }],
};

/** A valid R5 DocumentReference for the fixture patient, tagged with the run id, with a small document inline. */
export function documentBody(ctx: CheckContext, overrides: Json = {}): Json {
  return {
    resourceType: 'DocumentReference',
    meta: runMeta(ctx),
    status: 'current',
    type: { coding: [{ system: 'http://loinc.org', code: '11488-4', display: 'Consult note' }] },
    category: [CATEGORY],
    subject: patientRef(ctx),
    date: wholeSecondNow(),
    description: `fhir-conformance run ${ctx.runId}`,
    content: [{ attachment: inlineAttachment(documentType(ctx), smallDocument(documentType(ctx))) }],
    ...overrides,
  };
}
