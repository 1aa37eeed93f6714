/**
 * MedicationRequest rules that depend on stored state (spec: States and
 * transitions > MedicationRequest; Update rule 2; catalog HPB-00108/00109).
 * Fixture records are only sent back unchanged, so a refusing target keeps
 * them as they are and an accepting one sees no content change.
 */
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import {
  catalogCodeOf,
  createOwn,
  expectError,
  newMedicationRequest,
  outcomeSummary,
  postMedicationRequest,
  putMedicationRequest,
  readMedicationRequest,
  type Resource,
} from '../../src/service/index.js';
import { putUnchanged, SIGNED_CODES } from './support.js';

const area = 'medication-request';
const tags: ['writes'] = ['writes'];

/** Fixture keys of records whose parent prescription is signed or cancelled. */
const SIGNED_FIXTURES = ['medicationRequestSigned', 'medicationRequestCancelled'];
/** Fixture keys of records of a deceased or merged patient. */
const BLOCKED_PATIENT_FIXTURES = ['medicationRequestDeceasedPatient', 'medicationRequestMergedPatient'];

function presentFixtures(ctx: CheckContext, keys: readonly string[], what: string): string[] {
  const present = keys.filter((k) => ctx.hasFixture(k));
  if (present.length === 0) ctx.skip(`no fixture for ${what} (${keys.join(', ')})`);
  return present;
}

/**
 * The id of a MedicationRequest in entered-in-error: the config's fixture, or
 * one of our own moved there by an accepted update (transitions are not shown).
 */
async function enteredInErrorRecord(ctx: CheckContext): Promise<{ id: string; resource: Resource }> {
  if (ctx.hasFixture('medicationRequestEnteredInError')) {
    const id = ctx.fixture('medicationRequestEnteredInError');
    const { resource } = await readMedicationRequest(ctx, id);
    // The config declares this record entered-in-error: reading it with another status is the target's answer, judged.
    if (resource.status !== 'entered-in-error') {
      ctx.fail(`the fixture medicationRequestEnteredInError reads with status ${JSON.stringify(resource.status)}, not entered-in-error`, {
        requirement: 'medication-request.entered-in-error-update-422',
        expected: 'entered-in-error',
        actual: resource.status,
      });
    }
    return { id, resource };
  }
  const { resource, id } = await createOwn(ctx);
  const res = await putMedicationRequest(ctx, id, { ...resource, status: 'entered-in-error' });
  if (res.status < 200 || res.status >= 300) ctx.skip(`no entered-in-error fixture, and the target refused moving a record there (${res.status})`);
  return { id, resource: (await readMedicationRequest(ctx, id)).resource };
}

async function expectCreateBlocked(ctx: CheckContext, patientKey: string, code: string, requirement: string): Promise<void> {
  const body = newMedicationRequest(ctx, { subject: { reference: `Patient/${ctx.fixture(patientKey)}` } });
  expectError(await postMedicationRequest(ctx, body, { refusal: true }), { status: 409, code, requirement });
}

export const stateChecks: CheckDefinition[] = [
  defineCheck({
    id: 'medication-request.entered-in-error-update-refused',
    title: 'an update of a MedicationRequest in entered-in-error is refused with 422 HPB-00140',
    area,
    level: 'MUST',
    requirements: ['medication-request.entered-in-error-update-422', 'catalog.hpb-00140'],
    quote: 'Any update is refused with 422 `HPB-00140`.',
    tags,
    async run(ctx) {
      const { id, resource } = await enteredInErrorRecord(ctx);
      const res = await putMedicationRequest(ctx, id, resource, {}, { refusal: true });
      expectError(res, { status: 422, code: 'HPB-00140', requirement: 'medication-request.entered-in-error-update-422' });
    },
  }),
  defineCheck({
    id: 'medication-request.signed-prescription-update-refused',
    title: 'an update under a signed or cancelled prescription is refused with 409 (HPB-00114 or HPB-00103)',
    area,
    level: 'MUST',
    requirements: ['medication-request.signed-prescription-409', 'catalog.hpb-00114'],
    quote: 'When the parent prescription is signed or cancelled, an update of the MedicationRequest is refused with 409.',
    tags,
    async run(ctx) {
      for (const key of presentFixtures(ctx, SIGNED_FIXTURES, 'a record under a signed or cancelled prescription')) {
        const res = await putUnchanged(ctx, key, { refusal: true });
        expectError(res, { status: 409, code: SIGNED_CODES, requirement: 'medication-request.signed-prescription-409' });
      }
    },
  }),
  defineCheck({
    id: 'medication-request.signed-prescription-code',
    title: 'records which code refuses an update under a signed or cancelled prescription',
    area,
    level: 'observation',
    requirements: ['medication-request.signed-prescription-code'],
    quote: 'catalog code `HPB-00114`; the endpoint lists `HPB-00103` for its 409 shape',
    tags,
    async run(ctx) {
      const [key] = presentFixtures(ctx, SIGNED_FIXTURES, 'a record under a signed or cancelled prescription');
      const res = await putUnchanged(ctx, key!);
      ctx.observe('medication-request.signed-prescription', { fixture: key, ...outcomeSummary(res, catalogCodeOf(res)) });
    },
  }),
  defineCheck({
    id: 'medication-request.deceased-patient-create-refused',
    title: 'a MedicationRequest for a deceased patient is refused with 409 HPB-00109',
    area,
    level: 'MUST',
    requirements: ['catalog.hpb-00109'],
    quote: 'HPB-00109 | 409 | Patient is marked deceased; no new clinical data accepted.',
    tags,
    fixtures: ['patientDeceased'],
    run: (ctx) => expectCreateBlocked(ctx, 'patientDeceased', 'HPB-00109', 'catalog.hpb-00109'),
  }),
  defineCheck({
    id: 'medication-request.merged-patient-create-refused',
    title: 'a MedicationRequest for a merged patient is refused with 409 HPB-00108',
    area,
    level: 'MUST',
    requirements: ['catalog.hpb-00108'],
    quote: 'HPB-00108 | 409 | Patient was merged into another record; no new clinical data accepted.',
    tags,
    fixtures: ['patientMerged'],
    run: (ctx) => expectCreateBlocked(ctx, 'patientMerged', 'HPB-00108', 'catalog.hpb-00108'),
  }),
  defineCheck({
    id: 'medication-request.blocked-patient-updates',
    title: 'records whether updates of existing records of deceased or merged patients are refused',
    area,
    level: 'observation',
    requirements: ['catalog.merged-deceased-updates'],
    quote: 'no new clinical data accepted',
    tags,
    async run(ctx) {
      for (const key of presentFixtures(ctx, BLOCKED_PATIENT_FIXTURES, 'a record of a deceased or merged patient')) {
        const res = await putUnchanged(ctx, key);
        ctx.observe(`medication-request.update.${key}`, outcomeSummary(res, catalogCodeOf(res)));
      }
    },
  }),
];
