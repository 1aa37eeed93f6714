/**
 * Minimal valid write bodies built from the config's fixtures, each tagged
 * with the run id (spec: Resources and their fields; DocumentReference R5
 * shape from the HL7 R5 definition, since the spec does not show it).
 */
import type { CheckContext } from '../engine/context.js';

export const RUN_TAG_SYSTEM = 'https://fhir-conformance.dev/run';

export type Resource = Record<string, unknown>;

export function runTag(ctx: CheckContext): Resource {
  return { tag: [{ system: RUN_TAG_SYSTEM, code: ctx.runId }] };
}

const patientRef = (ctx: CheckContext) => ({ reference: `Patient/${ctx.fixture('patient')}` });

const BUILDERS: Record<string, (ctx: CheckContext) => Resource> = {
  'R4 MedicationRequest': (ctx) => ({
    resourceType: 'MedicationRequest',
    meta: runTag(ctx),
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
    meta: runTag(ctx),
    status: 'planned',
    class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB', display: 'ambulatory' },
    subject: patientRef(ctx),
  }),
  'R5 DocumentReference': (ctx) => ({
    resourceType: 'DocumentReference',
    meta: runTag(ctx),
    status: 'current',
    content: [{ attachment: { contentType: 'text/plain', data: Buffer.from('fhir-conformance run').toString('base64') } }],
    subject: patientRef(ctx),
  }),
};

/** A minimal valid resource of this type for this release; skips when none is known. */
export function minimalResource(ctx: CheckContext, release: string, resource: string): Resource {
  const build = BUILDERS[`${release} ${resource}`];
  if (!build) ctx.skip(`no minimal valid ${release} ${resource} body is known to the suite`);
  return build(ctx);
}
