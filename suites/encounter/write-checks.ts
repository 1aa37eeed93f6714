/**
 * Encounter create and update (spec: Endpoints > Encounter (R4); States and
 * transitions > Encounter; catalog HPB-00138, HPB-00139, HPB-00142). Every write
 * is for the fixture patients and tagged with the run id.
 */
import { randomUUID } from 'node:crypto';
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import {
  catalogCodeOf,
  createdIdOf,
  createEncounter,
  encounterBody,
  expectError,
  expectSuccess,
  isObject,
  isSuccess,
  type Json,
  postEncounter,
  putEncounter,
  refusalProbe,
  UUID_PATTERN,
} from '../../src/service/index.js';
import type { HttpResponse } from '../../src/http/index.js';
import { area, CRU, writable } from './support.js';

/** Validation errors: 400 or 422, both with HPB-00101 (endpoint table; errors.validation-status-chosen). */
const VALIDATION = [400, 422];

/** Encounter dates decades away: outside any registration window, whatever its size (not shown). */
const FAR_DATES: Array<[string, string, string]> = [
  ['1950', '1950-06-01T09:00:00Z', '1950-06-01T09:30:00Z'],
  ['2090', '2090-06-01T09:00:00Z', '2090-06-01T09:30:00Z'],
];

function outcomeOf(res: HttpResponse): { status: number; code?: string } {
  const code = catalogCodeOf(res);
  return code === undefined ? { status: res.status } : { status: res.status, code };
}

function ledgerIfCreated(ctx: CheckContext, res: HttpResponse): void {
  const id = isSuccess(res) ? createdIdOf(res, 'Encounter') : undefined;
  if (id) ctx.created('Encounter', id);
}

/** 422 HPB-00139: an acceptance, a 400 or a server error is a failure. */
function expectFarDateRefused(ctx: CheckContext, res: HttpResponse, what: string): void {
  if (isSuccess(res)) {
    ctx.fail(`${what} was accepted (${res.status}); a date decades away is outside the registration window`, {
      requirement: 'encounter.registration-window-422',
      expected: '422 HPB-00139',
      actual: res.status,
      exchange: res.exchange.id,
    });
  }
  expectError(res, { status: 422, code: 'HPB-00139', requirement: 'encounter.registration-window-422' });
}

export const writeChecks: CheckDefinition[] = [
  defineCheck({
    id: 'encounter.create-returns-encounter',
    title: 'an Encounter create with .cru answers the Encounter with a server-assigned id',
    area,
    level: 'MUST',
    requirements: ['encounter.create-returns-resource'],
    quote: 'POST `/fhir/R4/Encounter` | `system/Encounter.cru` | Encounter body (server assigns id) | Encounter',
    tags: ['writes'],
    fixtures: ['patient', 'practitioner'],
    async run(ctx) {
      const sent = encounterBody(ctx, { id: randomUUID() });
      const res = await postEncounter(ctx, sent);
      // Any 2xx: success statuses of create are not shown (the status is recorded below).
      expectSuccess(ctx, res, 'encounter.create-returns-resource', 'create');
      const e = isObject(res.json) ? res.json : {};
      const exchange = res.exchange.id;
      ctx.check(e.resourceType === 'Encounter', 'the create response is not an Encounter', {
        requirement: 'encounter.create-returns-resource',
        expected: 'Encounter',
        actual: e.resourceType ?? res.text.slice(0, 120),
        exchange,
      });
      ctx.check(typeof e.id === 'string' && UUID_PATTERN.test(e.id), 'the created Encounter has no UUID id', {
        requirement: 'encounter.create-returns-resource',
        expected: 'a UUID',
        actual: e.id,
        exchange,
      });
      ctx.check(e.status === sent.status, 'the created Encounter does not carry the status sent', {
        requirement: 'encounter.create-returns-resource',
        expected: sent.status,
        actual: e.status,
        exchange,
      });
      ctx.observe('encounter.create.status', res.status);
      ctx.observe('encounter.create.client-id-kept', e.id === sent.id);
    },
  }),
  defineCheck({
    id: 'encounter.update-returns-encounter',
    title: 'an Encounter update with .cru answers the updated Encounter',
    area,
    level: 'MUST',
    requirements: ['encounter.update-returns-resource'],
    quote: 'PUT `/fhir/R4/Encounter/{id}` | `system/Encounter.cru` | Encounter body | Encounter',
    tags: ['writes'],
    fixtures: ['patient', 'practitioner'],
    async run(ctx) {
      const created = await createEncounter(ctx);
      const id = created.id as string;
      // The status stays (transitions are not shown); the reason changes.
      const reason = `updated by fhir-conformance run ${ctx.runId}`;
      const res = await putEncounter(ctx, id, { ...writable(created), reasonCode: [{ text: reason }] });
      expectSuccess(ctx, res, 'encounter.update-returns-resource', 'update');
      ctx.observe('encounter.update.status', res.status);
      const e = isObject(res.json) ? res.json : {};
      const reasons = Array.isArray(e.reasonCode) ? e.reasonCode.map((r: unknown) => (isObject(r) ? r.text : undefined)) : [];
      ctx.check(e.resourceType === 'Encounter' && e.id === id && reasons.includes(reason), 'the update response is not the updated Encounter', {
        requirement: 'encounter.update-returns-resource',
        expected: { resourceType: 'Encounter', id, reasonCode: [{ text: reason }] },
        actual: isObject(res.json) ? { resourceType: e.resourceType, id: e.id, reasonCode: e.reasonCode } : res.text.slice(0, 120),
        exchange: res.exchange.id,
      });
    },
  }),
  defineCheck({
    id: 'encounter.transitions',
    title: 'records which Encounter status changes an update accepts',
    area,
    level: 'observation',
    requirements: ['encounter.transitions-not-shown'],
    quote: 'Encounter transitions: not shown.',
    tags: ['writes'],
    fixtures: ['patient', 'practitioner'],
    async run(ctx) {
      let current = await createEncounter(ctx);
      const id = current.id as string;
      for (const next of ['in-progress', 'finished', 'planned', 'cancelled']) {
        const from = current.status;
        const res = await putEncounter(ctx, id, { ...writable(current), status: next });
        ctx.observe(`encounter.transition.${String(from)}->${next}`, isSuccess(res) ? 'accepted' : { status: res.status, code: catalogCodeOf(res) });
        if (isSuccess(res) && isObject(res.json)) current = res.json;
      }
    },
  }),
  defineCheck({
    id: 'encounter.create-invalid-400',
    title: 'an Encounter create without the required status is refused with HPB-00101',
    area,
    level: 'MUST',
    requirements: ['encounter.create-400'],
    quote: 'POST `/fhir/R4/Encounter` | `system/Encounter.cru` | Encounter body (server assigns id) | Encounter | 400 `HPB-00101`',
    tags: ['writes'],
    fixtures: ['patient', 'practitioner'],
    async run(ctx) {
      const { status: _status, ...body } = encounterBody(ctx);
      const res = await postEncounter(ctx, body, { refusal: true });
      expectError(res, { status: VALIDATION, code: 'HPB-00101', requirement: 'encounter.create-400' });
    },
  }),
  defineCheck({
    id: 'encounter.create-unprocessable-422',
    title: 'an Encounter create with a status outside the four values is refused with HPB-00101',
    area,
    level: 'MUST',
    requirements: ['encounter.create-422', 'encounter.status-values'],
    quote:
      'POST `/fhir/R4/Encounter` | `system/Encounter.cru` | Encounter body (server assigns id) | Encounter | 400 `HPB-00101`, 401 `HPB-00106`, 403 `HPB-00104`, 422 `HPB-00101`',
    tags: ['writes'],
    fixtures: ['patient', 'practitioner'],
    async run(ctx) {
      const res = await postEncounter(ctx, encounterBody(ctx, { status: 'arrived' }), { refusal: true });
      expectError(res, { status: VALIDATION, code: 'HPB-00101', requirement: 'encounter.create-422' });
      ctx.observe('encounter.create.unknown-status', res.status);
    },
  }),
  defineCheck({
    id: 'encounter.update-invalid-400',
    title: 'an Encounter update without the required class is refused with HPB-00101',
    area,
    level: 'MUST',
    requirements: ['encounter.update-400'],
    quote: 'PUT `/fhir/R4/Encounter/{id}` | `system/Encounter.cru` | Encounter body | Encounter | 400 `HPB-00101`',
    tags: ['writes'],
    fixtures: ['patient', 'practitioner'],
    async run(ctx) {
      const created = await createEncounter(ctx);
      const { class: _class, ...body } = writable(created);
      const res = await putEncounter(ctx, created.id as string, body, { refusal: true });
      expectError(res, { status: VALIDATION, code: 'HPB-00101', requirement: 'encounter.update-400' });
    },
  }),
  defineCheck({
    id: 'encounter.update-unprocessable-422',
    title: 'an Encounter update with a status outside the four values is refused with HPB-00101',
    area,
    level: 'MUST',
    requirements: ['encounter.update-422'],
    quote:
      'PUT `/fhir/R4/Encounter/{id}` | `system/Encounter.cru` | Encounter body | Encounter | 400 `HPB-00101`, 401 `HPB-00106`, 403 `HPB-00104`, 404 `HPB-00102`, 422 `HPB-00101`',
    tags: ['writes'],
    fixtures: ['patient', 'practitioner'],
    async run(ctx) {
      const created = await createEncounter(ctx);
      const res = await putEncounter(ctx, created.id as string, { ...writable(created), status: 'arrived' }, { refusal: true });
      expectError(res, { status: VALIDATION, code: 'HPB-00101', requirement: 'encounter.update-422' });
    },
  }),
  defineCheck({
    id: 'encounter.update-unknown-404',
    title: 'an Encounter update of an unknown id gives 404 HPB-00102',
    area,
    level: 'MUST',
    requirements: ['encounter.update-404'],
    quote:
      'PUT `/fhir/R4/Encounter/{id}` | `system/Encounter.cru` | Encounter body | Encounter | 400 `HPB-00101`, 401 `HPB-00106`, 403 `HPB-00104`, 404 `HPB-00102`',
    tags: ['writes'],
    fixtures: ['patient', 'practitioner'],
    async run(ctx) {
      const id = randomUUID();
      const op = ctx.operation('Encounter', 'update', 'R4');
      // A 404 is the answer: a server error here is judged (no 5xx retries), not left without a verdict.
      const res = await refusalProbe(ctx, { scopes: CRU, method: 'PUT', url: ctx.path(op.path, { id }), body: encounterBody(ctx, { id }) });
      if (isSuccess(res)) ctx.created('Encounter', id);
      expectError(res, { status: 404, code: 'HPB-00102', requirement: 'encounter.update-404' });
    },
  }),
  defineCheck({
    id: 'encounter.appointment-active-encounter-409',
    title: 'an Encounter for an appointment that already has an active encounter gives 409 HPB-00138',
    area,
    level: 'MUST',
    requirements: ['encounter.appointment-active-encounter-409', 'catalog.hpb-00138'],
    quote: 'an appointment that already has an active encounter refuses another (409, `HPB-00138`)',
    tags: ['writes'],
    fixtures: ['appointmentWithActiveEncounter', 'patient', 'practitioner'],
    async run(ctx) {
      const appointment = [{ reference: `Appointment/${ctx.fixture('appointmentWithActiveEncounter')}` }];
      const res = await postEncounter(ctx, encounterBody(ctx, { status: 'in-progress', appointment }), { refusal: true });
      expectError(res, { status: 409, code: 'HPB-00138', requirement: 'encounter.appointment-active-encounter-409' });
    },
  }),
  defineCheck({
    id: 'encounter.registration-window-422',
    title: 'an Encounter dated decades away (1950, 2090) is refused with 422 HPB-00139, on create and on update',
    area,
    level: 'MUST',
    requirements: ['encounter.registration-window-422', 'catalog.hpb-00139'],
    quote: 'An encounter date outside the registration window is refused (422, `HPB-00139`).',
    tags: ['writes'],
    fixtures: ['patient', 'practitioner'],
    async run(ctx) {
      // The window's size is not shown; a date decades away is outside any registration window.
      const outcomes: Record<string, unknown> = {};
      for (const [label, start, end] of FAR_DATES) {
        const res = await refusalProbe(ctx, {
          scopes: CRU,
          method: 'POST',
          url: ctx.operation('Encounter', 'create', 'R4').path,
          body: encounterBody(ctx, { status: 'finished', period: { start, end } }),
        });
        ledgerIfCreated(ctx, res);
        outcomes[`create ${label}`] = outcomeOf(res);
        expectFarDateRefused(ctx, res, `a create with period.start ${start}`);
      }
      // An update moving an accepted Encounter decades away is refused the same way, and changes nothing.
      const created = await createEncounter(ctx);
      const id = created.id as string;
      const [label, start] = FAR_DATES[1]!;
      const op = ctx.operation('Encounter', 'update', 'R4');
      const res = await refusalProbe(ctx, { scopes: CRU, method: 'PUT', url: ctx.path(op.path, { id }), body: { ...writable(created), period: { start } } });
      outcomes[`update ${label}`] = outcomeOf(res);
      ctx.observe('encounter.registration-window', outcomes);
      expectFarDateRefused(ctx, res, `an update to period.start ${start}`);
    },
  }),
  defineCheck({
    id: 'encounter.normativa-incomplete-422',
    title: 'starting a consultation for a patient with incomplete normativa data gives 422 HPB-00142',
    area,
    level: 'MUST',
    requirements: ['catalog.hpb-00142'],
    quote: "HPB-00142 | 422 | The patient's required normativa data must be completed before starting a consultation.",
    tags: ['writes'],
    fixtures: ['patientIncompleteNormativa', 'practitioner'],
    async run(ctx) {
      const subject = { reference: `Patient/${ctx.fixture('patientIncompleteNormativa')}` };
      const res = await postEncounter(ctx, encounterBody(ctx, { status: 'in-progress', subject } satisfies Json), { refusal: true });
      expectError(res, { status: 422, code: 'HPB-00142', requirement: 'catalog.hpb-00142' });
    },
  }),
];
