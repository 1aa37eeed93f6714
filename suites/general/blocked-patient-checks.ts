/**
 * "No new clinical data accepted" for a deceased or merged patient (Errors > Public API catalog,
 * HPB-00109, HPB-00108), on every resource type the target lets a client create besides
 * MedicationRequest (judged by medication-request.*-patient-create-refused): a rule stated for
 * clinical data holds on each type it names, not only on the one checked first.
 */
import { type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import {
  DOCUMENT_REFERENCE,
  documentBody,
  ENCOUNTER,
  encounterBody,
  expectError,
  onSurface,
  postResource,
  type ResourceKind,
} from '../../src/service/index.js';

const CASES = [
  { fixture: 'patientDeceased', code: 'HPB-00109', requirement: 'catalog.hpb-00109' },
  { fixture: 'patientMerged', code: 'HPB-00108', requirement: 'catalog.hpb-00108' },
] as const;

const KINDS: Array<{ kind: ResourceKind; body: typeof encounterBody }> = [
  { kind: ENCOUNTER, body: encounterBody },
  { kind: DOCUMENT_REFERENCE, body: documentBody },
];

export const blockedPatientChecks: CheckDefinition[] = [
  defineCheck({
    id: 'general.blocked-patient-create-every-type',
    title: 'an Encounter or DocumentReference for a deceased (merged) patient is refused with 409 HPB-00109 (HPB-00108)',
    area: 'general',
    level: 'MUST',
    requirements: ['catalog.hpb-00109', 'catalog.hpb-00108'],
    quote: 'HPB-00109 | 409 | Patient is marked deceased; no new clinical data accepted.',
    tags: ['writes'],
    fixtures: ['patientDeceased', 'patientMerged'],
    surfaces: {
      release: 'R4, R5 (each type on its published release)',
      resource: 'Encounter, DocumentReference (each with a published create)',
      channel: 'create',
      leftOut: ['MedicationRequest: medication-request.deceased-patient-create-refused and medication-request.merged-patient-create-refused'],
    },
    async run(ctx) {
      const checked: string[] = [];
      for (const { kind, body } of KINDS) {
        if (!ctx.findOperation(kind.type, 'create', kind.release)) continue;
        for (const c of CASES) {
          const res = await postResource(ctx, kind, body(ctx, { subject: { reference: `Patient/${ctx.fixture(c.fixture)}` } }), { refusal: true });
          onSurface(`${kind.release} ${kind.type} for ${c.fixture}`, () => expectError(res, { status: 409, code: c.code, requirement: c.requirement }));
        }
        checked.push(`${kind.release} ${kind.type}`);
      }
      if (checked.length === 0) ctx.skip('the target publishes no Encounter or DocumentReference create');
      ctx.observe('surfaces', { checked });
    },
  }),
];
