/**
 * MedicationRequest create and update on our own records (spec: Resources >
 * MedicationRequest; Endpoints > MedicationRequest (R4), create and update rules).
 * Every record is created for the fixture patient, tagged and ledgered.
 */
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import {
  catalogCodeOf,
  createOwn,
  describeDifferences,
  expectError,
  expectResource,
  expectSuccess,
  isObject,
  isSuccess,
  newMedicationRequest,
  outcomeSummary,
  postMedicationRequest,
  putMedicationRequest,
  randomId,
  readMedicationRequest,
  refusalProbe,
  type Resource,
  WRITE_SCOPES,
  writtenIsRead,
} from '../../src/service/index.js';
import type { HttpResponse } from '../../src/http/index.js';
import { expectCreatedResource, expectValidationError, NOT_FOUND_CODES, referenceOf, sameReference } from './support.js';

const area = 'medication-request';
const tags: ['writes'] = ['writes'];

/** A successful update (any 2xx: success statuses are not shown) returns the MedicationRequest (Endpoints table, Payload out). */
function expectUpdated(ctx: CheckContext, res: HttpResponse, what: string): Resource {
  expectSuccess(ctx, res, 'medication-request.update-returns-resource', what);
  return expectResource(ctx, res, 'MedicationRequest', 'medication-request.update-returns-resource');
}

/** A write that must be refused with HPB-00101; a create accepted by mistake is ledgered by postMedicationRequest. */
async function expectCreateRefused(ctx: CheckContext, overrides: Resource, requirement: string): Promise<void> {
  const res = await postMedicationRequest(ctx, newMedicationRequest(ctx, overrides), { refusal: true });
  expectValidationError(res, requirement);
}

/** Status changes tried in order by the transitions observation (each from the status reached so far). */
const TRANSITIONS = ['on-hold', 'active', 'stopped', 'completed', 'cancelled', 'draft', 'entered-in-error'];

export const writeChecks: CheckDefinition[] = [
  defineCheck({
    id: 'medication-request.create-default-status',
    title: 'a MedicationRequest created without a status is active',
    area,
    level: 'MUST',
    requirements: ['medication-request.status-default-active', 'medication-request.create-returns-resource'],
    quote: 'Defaults to `active` on create when omitted.',
    tags,
    fixtures: ['patient'],
    async run(ctx) {
      const { res, id } = await createOwn(ctx, { status: undefined });
      // Payload out of create: the MedicationRequest (whatever the 2xx status).
      const resource = expectCreatedResource(ctx, res);
      ctx.check(resource.status === 'active', `the create response has status ${JSON.stringify(resource.status)}`, {
        requirement: 'medication-request.status-default-active',
        expected: 'active',
        actual: resource.status,
        exchange: res.exchange.id,
      });
      const read = await readMedicationRequest(ctx, id);
      ctx.check(read.resource.status === 'active', `the created record reads with status ${JSON.stringify(read.resource.status)}`, {
        requirement: 'medication-request.status-default-active',
        expected: 'active',
        actual: read.resource.status,
        exchange: read.res.exchange.id,
      });
    },
  }),
  defineCheck({
    id: 'medication-request.intent-ignored-on-write',
    title: 'a written intent other than order is accepted and reads back as order',
    area,
    level: 'MUST',
    requirements: ['medication-request.intent-ignored-on-write', 'medication-request.intent-order-on-read'],
    quote: 'Always `order` on read. Accepted and ignored on write.',
    tags,
    fixtures: ['patient'],
    async run(ctx) {
      const { resource: created, id } = await createOwn(ctx, { intent: 'plan' }, 'medication-request.intent-ignored-on-write');
      const afterCreate = await readMedicationRequest(ctx, id);
      const updateRes = await putMedicationRequest(ctx, id, { ...afterCreate.resource, intent: 'proposal' });
      const updated = expectUpdated(ctx, updateRes, 'update with intent proposal');
      const afterUpdate = await readMedicationRequest(ctx, id);
      const seen: Array<[string, unknown, HttpResponse]> = [
        ['create response (intent plan written)', created.intent, afterCreate.res],
        ['read after create', afterCreate.resource.intent, afterCreate.res],
        ['update response (intent proposal written)', updated.intent, updateRes],
        ['read after update', afterUpdate.resource.intent, afterUpdate.res],
      ];
      for (const [where, intent, res] of seen) {
        ctx.check(intent === 'order', `${where}: intent is ${JSON.stringify(intent)}`, {
          requirement: 'medication-request.intent-ignored-on-write',
          expected: 'order',
          actual: intent,
          exchange: res.exchange.id,
        });
      }
    },
  }),
  defineCheck({
    id: 'medication-request.create-unknown-status-refused',
    title: 'a create with status unknown is refused with HPB-00101',
    area,
    level: 'MUST',
    requirements: ['medication-request.status-unknown-not-writable', 'medication-request.create-422'],
    quote: 'The value `unknown` is read-only',
    tags,
    fixtures: ['patient'],
    run: (ctx) => expectCreateRefused(ctx, { status: 'unknown' }, 'medication-request.status-unknown-not-writable'),
  }),
  defineCheck({
    id: 'medication-request.update-unknown-status-refused',
    title: 'an update to status unknown is refused with HPB-00101 and changes nothing',
    area,
    level: 'MUST',
    requirements: ['medication-request.status-unknown-not-writable', 'medication-request.update-422'],
    quote: 'The value `unknown` is read-only',
    tags,
    fixtures: ['patient'],
    async run(ctx) {
      const { resource, id } = await createOwn(ctx);
      const res = await putMedicationRequest(ctx, id, { ...resource, status: 'unknown' }, {}, { refusal: true });
      expectValidationError(res, 'medication-request.status-unknown-not-writable');
      const after = await readMedicationRequest(ctx, id);
      ctx.check(after.resource.status === resource.status, `after the refused update the status is ${JSON.stringify(after.resource.status)}`, {
        requirement: 'medication-request.status-unknown-not-writable',
        expected: resource.status,
        actual: after.resource.status,
        exchange: after.res.exchange.id,
      });
    },
  }),
  defineCheck({
    id: 'medication-request.create-without-medication-refused',
    title: 'a create without medicationCodeableConcept is refused with HPB-00101',
    area,
    level: 'MUST',
    requirements: ['medication-request.medication-required', 'medication-request.create-400'],
    quote: 'medicationCodeableConcept | object | yes',
    tags,
    fixtures: ['patient'],
    run: (ctx) => expectCreateRefused(ctx, { medicationCodeableConcept: undefined }, 'medication-request.medication-required'),
  }),
  defineCheck({
    id: 'medication-request.create-without-subject-refused',
    title: 'a create without subject is refused with HPB-00101',
    area,
    level: 'MUST',
    requirements: ['medication-request.subject-required', 'medication-request.create-400'],
    quote: 'subject | object | yes',
    tags,
    fixtures: ['patient'],
    run: (ctx) => expectCreateRefused(ctx, { subject: undefined }, 'medication-request.subject-required'),
  }),
  defineCheck({
    id: 'medication-request.update-invalid-body-refused',
    title: 'an update whose body breaks the FHIR R4 schema is refused with HPB-00101',
    area,
    level: 'MUST',
    requirements: ['medication-request.update-400'],
    quote: 'PUT `/fhir/R4/MedicationRequest/{id}` | `system/MedicationRequest.cru` | MedicationRequest body | MedicationRequest | 400 `HPB-00101`',
    tags,
    fixtures: ['patient'],
    async run(ctx) {
      const { resource, id } = await createOwn(ctx);
      // dosageInstruction is an array of Dosage in R4; a plain string breaks the schema.
      const res = await putMedicationRequest(ctx, id, { ...resource, dosageInstruction: 'one tablet daily' }, {}, { refusal: true });
      expectValidationError(res, 'medication-request.update-400');
    },
  }),
  defineCheck({
    id: 'medication-request.update-unknown-id',
    title: 'updating an unknown MedicationRequest id gives 404 HPB-00102 or HPB-00111',
    area,
    level: 'MUST',
    requirements: ['medication-request.update-404'],
    quote:
      'PUT `/fhir/R4/MedicationRequest/{id}` | `system/MedicationRequest.cru` | MedicationRequest body | MedicationRequest | 400 `HPB-00101`, 401 `HPB-00106`, 403 `HPB-00104`, 404 `HPB-00102`',
    tags,
    fixtures: ['patient'],
    async run(ctx) {
      const id = randomId();
      const op = ctx.operation('MedicationRequest', 'update', 'R4');
      // A 404 is the answer: a server error here is judged (no 5xx retries), not left without a verdict.
      const res = await refusalProbe(ctx, { scopes: WRITE_SCOPES, method: 'PUT', url: ctx.path(op.path, { id }), body: newMedicationRequest(ctx, { id }) });
      if (isSuccess(res)) ctx.created('MedicationRequest', id);
      expectError(res, { status: 404, code: NOT_FOUND_CODES, requirement: 'medication-request.update-404' });
    },
  }),
  defineCheck({
    id: 'medication-request.update-overlays-fhir-fields',
    title: 'an update overlays the FHIR-owned fields: the new values read back',
    area,
    level: 'MUST',
    requirements: ['medication-request.fhir-owned-overlay', 'medication-request.update-returns-resource'],
    quote: 'FHIR-owned fields: status, medication code/system/display, dosage, dispense, reason, notes. A write overlays these.',
    tags,
    fixtures: ['patient'],
    async run(ctx) {
      const { id } = await createOwn(ctx);
      const before = await readMedicationRequest(ctx, id);
      const marker = `overlay ${ctx.runId}`;
      const written = {
        ...before.resource,
        medicationCodeableConcept: {
          coding: [{ system: 'http://www.nlm.nih.gov/research/umls/rxnorm', code: '314076', display: 'lisinopril 10 MG Oral Tablet' }],
          text: 'lisinopril 10 MG Oral Tablet',
        },
        dosageInstruction: [
          {
            text: `${marker}: 1 tablet every 12 hours`,
            timing: { repeat: { frequency: 1, period: 12, periodUnit: 'h' } },
            doseAndRate: [{ doseQuantity: { value: 1, unit: 'tablet' } }],
          },
        ],
        dispenseRequest: { numberOfRepeatsAllowed: 2, quantity: { value: 60, unit: 'tablet' } },
        reasonCode: [{ coding: [{ system: 'http://hl7.org/fhir/sid/icd-10', code: 'I10', display: 'Essential (primary) hypertension' }] }],
        note: [{ text: `${marker}: take in the morning` }],
      };
      expectUpdated(ctx, await putMedicationRequest(ctx, id, written), 'update of the FHIR-owned fields');
      const after = await readMedicationRequest(ctx, id);
      const r = after.resource;
      // Each FHIR-owned field reads back as written, whole (a timing or quantity inside dosage or dispense included).
      const owned = {
        medicationCodeableConcept: written.medicationCodeableConcept,
        dosageInstruction: written.dosageInstruction,
        dispenseRequest: written.dispenseRequest,
        reasonCode: written.reasonCode,
        note: written.note,
      };
      // Medication code/system/display are FHIR-owned (a changed display is a difference); other displays may be normalized.
      const { differences, displays } = writtenIsRead(owned, r, { ownedDisplay: (path) => path.startsWith('medicationCodeableConcept.') });
      ctx.check(differences.length === 0, `after the update the FHIR-owned fields do not read back as written: ${describeDifferences(differences)}`, {
        requirement: 'medication-request.fhir-owned-overlay',
        expected: differences.map((d) => ({ [d.path]: d.expected })),
        actual: differences.map((d) => ({ [d.path]: d.actual })),
        exchange: after.res.exchange.id,
      });
      if (displays.length > 0) ctx.observe('medication-request.overlay.displays-normalized', displays);
      // Status is FHIR-owned too; which status changes are allowed is not shown, so a refusal is recorded, not failed.
      const statusRes = await putMedicationRequest(ctx, id, { ...r, status: 'on-hold' });
      if (statusRes.status >= 400 && statusRes.status < 500) {
        ctx.observe('medication-request.overlay.status-change-refused', outcomeSummary(statusRes, catalogCodeOf(statusRes)), 'active -> on-hold');
        return;
      }
      expectUpdated(ctx, statusRes, 'update of status to on-hold');
      const final = await readMedicationRequest(ctx, id);
      ctx.check(final.resource.status === 'on-hold', `after the update to on-hold, status is ${JSON.stringify(final.resource.status)}`, {
        requirement: 'medication-request.fhir-owned-overlay',
        expected: 'on-hold',
        actual: final.resource.status,
        exchange: final.res.exchange.id,
      });
    },
  }),
  defineCheck({
    id: 'medication-request.subject-change-refused',
    title: 'an update that changes subject is refused with 422 and the subject is unchanged',
    area,
    level: 'MUST',
    requirements: ['medication-request.update-subject-change-422', 'medication-request.subject-immutable'],
    quote: 'When `subject` differs from the stored patient on update, the update is refused with 422.',
    tags,
    fixtures: ['patient', 'patientNoRecords'],
    async run(ctx) {
      const { resource, id } = await createOwn(ctx);
      const res = await putMedicationRequest(
        ctx,
        id,
        { ...resource, subject: { reference: `Patient/${ctx.fixture('patientNoRecords')}` } },
        {},
        { refusal: true },
      );
      expectError(res, { status: 422, requirement: 'medication-request.update-subject-change-422' });
      const after = await readMedicationRequest(ctx, id);
      const subject = referenceOf(after.resource.subject);
      ctx.check(sameReference(subject, `Patient/${ctx.fixture('patient')}`), `after the refused update the subject is ${String(subject)}`, {
        requirement: 'medication-request.subject-immutable',
        expected: `Patient/${ctx.fixture('patient')}`,
        actual: subject,
        exchange: after.res.exchange.id,
      });
    },
  }),
  defineCheck({
    id: 'medication-request.subject-change-code',
    title: 'records the catalog code of a refused subject change',
    area,
    level: 'observation',
    requirements: ['medication-request.subject-change-code'],
    quote: 'When `subject` differs from the stored patient on update, the update is refused with 422.',
    tags,
    fixtures: ['patient', 'patientNoRecords'],
    async run(ctx) {
      const { resource, id } = await createOwn(ctx);
      const res = await putMedicationRequest(ctx, id, { ...resource, subject: { reference: `Patient/${ctx.fixture('patientNoRecords')}` } });
      ctx.observe('medication-request.subject-change', outcomeSummary(res, catalogCodeOf(res)));
    },
  }),
  defineCheck({
    id: 'medication-request.status-transitions',
    title: 'records which status changes an update accepts',
    area,
    level: 'observation',
    requirements: ['medication-request.transitions-not-shown'],
    quote: 'MedicationRequest transitions: not shown.',
    tags,
    fixtures: ['patient'],
    async run(ctx) {
      let { resource: current, id } = await createOwn(ctx);
      const outcomes: Record<string, unknown> = {};
      for (const to of TRANSITIONS) {
        const from = String(current.status);
        if (from === to) continue;
        const res = await putMedicationRequest(ctx, id, { ...current, status: to });
        outcomes[`${from} -> ${to}`] = outcomeSummary(res, catalogCodeOf(res));
        if (res.status >= 200 && res.status < 300 && isObject(res.json)) current = res.json;
      }
      ctx.observe('medication-request.transitions', outcomes);
    },
  }),
];
