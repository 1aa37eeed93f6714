/**
 * Encounter create and update (spec: Endpoints > Encounter (R4); States and
 * transitions > Encounter; catalog HPB-00138, HPB-00139, HPB-00142). Every write
 * is for the fixture patients and tagged with the run id.
 */
import { randomUUID } from 'node:crypto';
import { defineCheck, type CheckDefinition } from '../../src/engine/check.js';
import { catalogCodeOf, expectError, expectStatus, isObject, UUID_PATTERN } from '../../src/engine/expect.js';
import { area, createEncounter, encounterBody, postEncounter, putEncounter, writable } from './support.js';
import type { Json } from './search.js';

/** Validation errors: 400 or 422, both with HPB-00101 (endpoint table; errors.validation-status-chosen). */
const VALIDATION = [400, 422];

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
      expectStatus(res, [200, 201], 'encounter.create-returns-resource', 'create status');
      const e = isObject(res.json) ? res.json : {};
      const exchange = res.exchange.id;
      ctx.check(e.resourceType === 'Encounter', 'the create response is not an Encounter', { requirement: 'encounter.create-returns-resource', expected: 'Encounter', actual: e.resourceType ?? res.text.slice(0, 120), exchange });
      ctx.check(typeof e.id === 'string' && UUID_PATTERN.test(e.id), 'the created Encounter has no UUID id', { requirement: 'encounter.create-returns-resource', expected: 'a UUID', actual: e.id, exchange });
      ctx.check(e.status === sent.status, 'the created Encounter does not carry the status sent', { requirement: 'encounter.create-returns-resource', expected: sent.status, actual: e.status, exchange });
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
      const res = await putEncounter(ctx, id, { ...writable(created), status: 'in-progress' });
      expectStatus(res, [200, 201], 'encounter.update-returns-resource', 'update status');
      const e = isObject(res.json) ? res.json : {};
      ctx.check(e.resourceType === 'Encounter' && e.id === id && e.status === 'in-progress', 'the update response is not the updated Encounter', {
        requirement: 'encounter.update-returns-resource',
        expected: { resourceType: 'Encounter', id, status: 'in-progress' },
        actual: isObject(res.json) ? { resourceType: e.resourceType, id: e.id, status: e.status } : res.text.slice(0, 120),
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
        ctx.observe(`encounter.transition.${String(from)}->${next}`, res.status < 300 ? 'accepted' : { status: res.status, code: catalogCodeOf(res) });
        if (res.status < 300 && isObject(res.json)) current = res.json;
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
      const res = await postEncounter(ctx, body);
      expectError(res, { status: VALIDATION, code: 'HPB-00101', requirement: 'encounter.create-400' });
    },
  }),
  defineCheck({
    id: 'encounter.create-unprocessable-422',
    title: 'an Encounter create with a status outside the four values is refused with HPB-00101',
    area,
    level: 'MUST',
    requirements: ['encounter.create-422', 'encounter.status-values'],
    quote: 'POST `/fhir/R4/Encounter` | `system/Encounter.cru` | Encounter body (server assigns id) | Encounter | 400 `HPB-00101`, 401 `HPB-00106`, 403 `HPB-00104`, 422 `HPB-00101`',
    tags: ['writes'],
    fixtures: ['patient', 'practitioner'],
    async run(ctx) {
      const res = await postEncounter(ctx, encounterBody(ctx, { status: 'arrived' }));
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
      const res = await putEncounter(ctx, created.id as string, body);
      expectError(res, { status: VALIDATION, code: 'HPB-00101', requirement: 'encounter.update-400' });
    },
  }),
  defineCheck({
    id: 'encounter.update-unprocessable-422',
    title: 'an Encounter update with a status outside the four values is refused with HPB-00101',
    area,
    level: 'MUST',
    requirements: ['encounter.update-422'],
    quote: 'PUT `/fhir/R4/Encounter/{id}` | `system/Encounter.cru` | Encounter body | Encounter | 400 `HPB-00101`, 401 `HPB-00106`, 403 `HPB-00104`, 404 `HPB-00102`, 422 `HPB-00101`',
    tags: ['writes'],
    fixtures: ['patient', 'practitioner'],
    async run(ctx) {
      const created = await createEncounter(ctx);
      const res = await putEncounter(ctx, created.id as string, { ...writable(created), status: 'arrived' });
      expectError(res, { status: VALIDATION, code: 'HPB-00101', requirement: 'encounter.update-422' });
    },
  }),
  defineCheck({
    id: 'encounter.update-unknown-404',
    title: 'an Encounter update of an unknown id gives 404 HPB-00102',
    area,
    level: 'MUST',
    requirements: ['encounter.update-404'],
    quote: 'PUT `/fhir/R4/Encounter/{id}` | `system/Encounter.cru` | Encounter body | Encounter | 400 `HPB-00101`, 401 `HPB-00106`, 403 `HPB-00104`, 404 `HPB-00102`',
    tags: ['writes'],
    fixtures: ['patient', 'practitioner'],
    async run(ctx) {
      const id = randomUUID();
      const res = await putEncounter(ctx, id, encounterBody(ctx, { id }));
      if (res.status < 300 && isObject(res.json) && typeof res.json.id === 'string') ctx.created('Encounter', res.json.id);
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
      const res = await postEncounter(ctx, encounterBody(ctx, { status: 'in-progress', appointment }));
      expectError(res, { status: 409, code: 'HPB-00138', requirement: 'encounter.appointment-active-encounter-409' });
    },
  }),
  defineCheck({
    id: 'encounter.registration-window-422',
    title: 'an Encounter dated 1900-01-01 is refused with 422 HPB-00139 (acceptance is recorded)',
    area,
    level: 'MUST',
    requirements: ['encounter.registration-window-422', 'catalog.hpb-00139'],
    quote: 'An encounter date outside the registration window is refused (422, `HPB-00139`).',
    tags: ['writes'],
    fixtures: ['patient', 'practitioner'],
    async run(ctx) {
      const start = '1900-01-01T09:00:00Z';
      const res = await postEncounter(ctx, encounterBody(ctx, { status: 'finished', period: { start, end: '1900-01-01T09:30:00Z' } }));
      if (res.status >= 200 && res.status < 300) {
        ctx.observe('encounter.registration-window', `an Encounter starting ${start} was accepted`, 'the window bounds are not stated');
        return;
      }
      expectError(res, { status: 422, code: 'HPB-00139', requirement: 'encounter.registration-window-422' });
      ctx.observe('encounter.registration-window', `an Encounter starting ${start} was refused`);
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
      const res = await postEncounter(ctx, encounterBody(ctx, { status: 'in-progress', subject } satisfies Json));
      expectError(res, { status: 422, code: 'HPB-00142', requirement: 'catalog.hpb-00142' });
    },
  }),
];
