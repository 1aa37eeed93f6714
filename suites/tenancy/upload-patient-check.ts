/**
 * Tenancy through the patient a type-level `$upload` names (its query, its Parameters subject, its
 * DocumentReference's subject): the upload creates a DocumentReference on that patient, so another
 * organization's patient must be answered exactly as a patient that exists nowhere (the write's own
 * rule, tenancy.foreign-reference-in-write, on the operation's channel).
 */
import { randomUUID } from 'node:crypto';
import { type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import { catalogCodeOf, describeForm, patientChannel, requireContract, sendUpload, smallDocument } from '../../src/service/index.js';
import { accepted, answered } from './support.js';

const area = 'tenancy';
const REQUIREMENT = 'tenancy.foreign-id-404';

export const uploadPatientCheck: CheckDefinition = defineCheck({
  id: 'tenancy.foreign-patient-in-upload',
  surfaces: {
    release: 'R5',
    resource: 'DocumentReference: the type-level $upload of the contract settled for the run (declared, published or tried)',
    keyKind: "main, naming the second organization's patient (fixture otherOrgPatient)",
    channel: 'the patient a type-level $upload names: its query, its Parameters subject or its DocumentReference subject, as the contract has it',
    leftOut: ['an instance-level $upload: its DocumentReference has its patient (document-reference.upload-foreign-instance-404 covers its id)'],
  },
  title:
    "a type-level $upload naming another organization's patient is answered as one naming a patient that exists nowhere: never accepted while that one is refused, never refused otherwise",
  area,
  level: 'MUST',
  requirements: [REQUIREMENT, 'tenancy.resources-belong-to-org'],
  quote: "An id that does not exist in the caller's organization gives 404.",
  tags: ['writes', 'conditional'],
  // A patient that exists nowhere, the other organization's, and the control naming the caller's own.
  requests: 3,
  fixtures: ['patient', 'otherOrgPatient'],
  async run(ctx) {
    const contract = await requireContract(ctx);
    const channel = patientChannel(contract.form);
    if (channel === undefined)
      ctx.skip(`the upload contract (${describeForm(contract.form)}) names no patient: an instance-level upload goes to a DocumentReference that has one`);
    const upload = async (patient: string) => {
      // The first answer is the verdict: a 5xx is not retried away.
      return sendUpload(ctx, contract.form, undefined, smallDocument(contract.contentType), contract.contentType, { patient, retry: 'none' });
    };
    const foreignId = ctx.fixture('otherOrgPatient');
    const nowhere = await upload(randomUUID());
    const foreign = await upload(foreignId);
    ctx.observe(
      'tenancy.upload-patient-answers',
      { channel, nowhere: answered(nowhere), otherOrganization: answered(foreign) },
      'how the target answers an upload naming no patient of the caller: its own choice (not shown)',
    );
    const what = `the $upload (${describeForm(contract.form)}) naming another organization's patient (${foreignId}) in ${channel}`;
    ctx.check(foreign.status < 500, `${what} answered ${answered(foreign)}`, {
      requirement: REQUIREMENT,
      expected: `as for a patient id that exists nowhere: ${answered(nowhere)}`,
      actual: answered(foreign),
      exchange: foreign.exchange.id,
    });
    if (foreign.status >= 500) return;
    if (nowhere.status >= 500) ctx.skip(`an upload naming a patient that exists nowhere answered ${answered(nowhere)}: nothing to compare with`);
    if (accepted(nowhere) && accepted(foreign)) return; // the patient is not resolved: another organization's is as unknown as any
    const alike = nowhere.status === foreign.status && catalogCodeOf(nowhere) === catalogCodeOf(foreign);
    ctx.check(
      alike,
      accepted(foreign)
        ? `${what} was accepted (${answered(foreign)}) while one naming a patient that exists nowhere was refused (${answered(nowhere)}): the patient is resolved in other organizations`
        : `${what} was answered ${answered(foreign)}, one naming a patient that exists nowhere ${answered(nowhere)}: the answer tells the caller the id exists in another organization`,
      { requirement: REQUIREMENT, expected: answered(nowhere), actual: answered(foreign), exchange: foreign.exchange.id },
    );
    if (!alike) return;
    // Both refused alike: only meaningful when the same upload naming the caller's own patient is accepted.
    const own = await upload(ctx.fixture('patient'));
    if (!accepted(own))
      ctx.skip(`the same upload naming the caller's own patient was refused too (${answered(own)}): nothing shows the refusals came from the patient`);
  },
});
