/**
 * MedicationRequest read and search (spec: Resources > MedicationRequest;
 * Endpoints > MedicationRequest (R4)). Read-only: these checks send no writes.
 */
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import {
  catalogCodeOf,
  expectError,
  outcomeSummary,
  randomId,
  READ_SCOPES,
  MEDICATION_REQUEST,
  readMedicationRequest,
  readUrl,
  refusalProbe,
  type Resource,
  searchMedicationRequests,
} from '../../src/service/index.js';
import { expectValidationError, NOT_FOUND_CODES, referenceOf, sameReference } from './support.js';

const area = 'medication-request';

/** Fields of the spec's MedicationRequest table. */
const TABLE_FIELDS = new Set([
  'resourceType',
  'id',
  'meta',
  'status',
  'intent',
  'groupIdentifier',
  'medicationCodeableConcept',
  'subject',
  'encounter',
  'requester',
  'authoredOn',
  'reasonCode',
  'dosageInstruction',
  'dispenseRequest',
  'substitution',
  'note',
]);

/** Pages followed when a search must see every match (100 per page). */
const MAX_PAGES = 5;

/**
 * The fixture MedicationRequest when it belongs to `patient` (what the target
 * itself says): a search by that patient then has at least this record, so an
 * empty result is a failure, not a reason to skip.
 */
async function fixtureRecordOf(ctx: CheckContext, patient: string): Promise<Resource | undefined> {
  if (!ctx.hasFixture('medicationRequest')) return undefined;
  const res = await ctx.fhir({ scopes: READ_SCOPES, url: readUrl(ctx, MEDICATION_REQUEST, ctx.fixture('medicationRequest')) });
  const body = res.json;
  if (res.status !== 200 || typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const resource = body as Resource;
  return sameReference(referenceOf(resource.subject), `Patient/${patient}`) ? resource : undefined;
}

export const readSearchChecks: CheckDefinition[] = [
  defineCheck({
    id: 'medication-request.read-fixture',
    title: 'a MedicationRequest read returns the resource with a status and intent order',
    area,
    level: 'MUST',
    requirements: [
      'medication-request.read-returns-resource',
      'medication-request.resource-type',
      'medication-request.status-required',
      'medication-request.intent-order-on-read',
    ],
    quote: 'GET `/fhir/R4/MedicationRequest/{id}` | `system/MedicationRequest.rs` | none | MedicationRequest',
    fixtures: ['medicationRequest'],
    async run(ctx) {
      const id = ctx.fixture('medicationRequest');
      const { res, resource } = await readMedicationRequest(ctx, id);
      const exchange = res.exchange.id;
      ctx.check(typeof resource.id === 'string' && resource.id.toLowerCase() === id.toLowerCase(), 'the resource read is not the one requested', {
        requirement: 'medication-request.read-returns-resource',
        expected: id,
        actual: resource.id,
        exchange,
      });
      ctx.check(typeof resource.status === 'string' && resource.status !== '', 'status is missing', {
        requirement: 'medication-request.status-required',
        expected: 'a status',
        actual: resource.status,
        exchange,
      });
      ctx.check(resource.intent === 'order', `intent is ${JSON.stringify(resource.intent)}, not order`, {
        requirement: 'medication-request.intent-order-on-read',
        expected: 'order',
        actual: resource.intent,
        exchange,
      });
    },
  }),
  defineCheck({
    id: 'medication-request.unknown-status-emitted',
    title: 'a stored status with no FHIR spelling reads as unknown',
    area,
    level: 'MUST',
    requirements: ['medication-request.status-unknown-emitted'],
    quote: 'it is emitted when the stored status has no FHIR spelling',
    fixtures: ['medicationRequestUnknownStatus'],
    async run(ctx) {
      const { res, resource } = await readMedicationRequest(ctx, ctx.fixture('medicationRequestUnknownStatus'));
      ctx.check(resource.status === 'unknown', `status is ${JSON.stringify(resource.status)}, not unknown`, {
        requirement: 'medication-request.status-unknown-emitted',
        expected: 'unknown',
        actual: resource.status,
        exchange: res.exchange.id,
      });
    },
  }),
  defineCheck({
    id: 'medication-request.response-fields',
    title: 'records MedicationRequest fields outside the spec table',
    area,
    level: 'observation',
    requirements: ['medication-request.response-body-not-shown'],
    quote: 'Response bodies of MedicationRequest: not shown beyond the fields listed.',
    fixtures: ['medicationRequest'],
    async run(ctx) {
      const { resource } = await readMedicationRequest(ctx, ctx.fixture('medicationRequest'));
      ctx.observe(
        'medication-request.fields-outside-table',
        Object.keys(resource).filter((k) => !TABLE_FIELDS.has(k)),
      );
      ctx.observe('medication-request.group-identifier', resource.groupIdentifier ?? null, 'may carry the parent prescription; the spec does not say');
    },
  }),
  defineCheck({
    id: 'medication-request.read-unknown-id',
    title: 'reading an unknown MedicationRequest id gives 404 HPB-00102 or HPB-00111',
    area,
    level: 'MUST',
    requirements: ['medication-request.read-404', 'catalog.hpb-00102', 'catalog.hpb-00111'],
    quote:
      'GET `/fhir/R4/MedicationRequest/{id}` | `system/MedicationRequest.rs` | none | MedicationRequest | 401 `HPB-00106`, 403 `HPB-00104`, 404 `HPB-00102`',
    async run(ctx) {
      // A 404 is the answer: a server error here is judged (no 5xx retries), not left without a verdict.
      const res = await refusalProbe(ctx, { scopes: READ_SCOPES, url: readUrl(ctx, MEDICATION_REQUEST, randomId()) });
      expectError(res, { status: 404, code: NOT_FOUND_CODES, requirement: 'medication-request.read-404' });
    },
  }),
  defineCheck({
    id: 'medication-request.not-found-code',
    title: 'records which code answers an unknown MedicationRequest (HPB-00102 or HPB-00111)',
    area,
    level: 'observation',
    requirements: ['medication-request.not-found-code'],
    quote: 'HPB-00111 | 404 | MedicationRequest not found.',
    async run(ctx) {
      const res = await refusalProbe(ctx, { scopes: READ_SCOPES, url: readUrl(ctx, MEDICATION_REQUEST, randomId()) });
      ctx.observe('medication-request.not-found', outcomeSummary(res, catalogCodeOf(res)));
    },
  }),
  defineCheck({
    id: 'medication-request.search-by-patient',
    title: "a search by patient returns only that patient's MedicationRequests",
    area,
    level: 'MUST',
    requirements: ['medication-request.search-by-patient', 'medication-request.search-returns-bundle'],
    quote: 'patient | string (UUID of the patient)',
    fixtures: ['patient'],
    async run(ctx) {
      const patient = ctx.fixture('patient');
      const { resources, pages, complete } = await searchMedicationRequests(ctx, { patient, _count: '100' }, MAX_PAGES);
      const own = await fixtureRecordOf(ctx, patient);
      if (own !== undefined) {
        // The target reads the fixture MedicationRequest as this patient's: the search must return it.
        const found = resources.some((r) => typeof r.id === 'string' && typeof own.id === 'string' && r.id.toLowerCase() === own.id.toLowerCase());
        if (resources.length === 0 || complete) {
          ctx.check(
            found,
            `the search by patient ${resources.length === 0 ? 'is empty' : 'lacks the fixture MedicationRequest'} although the fixture MedicationRequest ${String(own.id)} reads as that patient's`,
            {
              requirement: 'medication-request.search-by-patient',
              expected: `entries including MedicationRequest/${String(own.id)}`,
              actual: { entries: resources.length },
              exchange: pages[0]!.exchange.id,
            },
          );
        }
      } else if (resources.length === 0)
        ctx.skip(
          'the search by the patient fixture is empty and no fixture MedicationRequest of that patient is configured, so the filter cannot be seen at work',
        );
      for (const r of resources) {
        const subject = referenceOf(r.subject);
        ctx.check(
          r.resourceType === 'MedicationRequest' && sameReference(subject, `Patient/${patient}`),
          `entry ${String(r.id)} has subject ${String(subject)}`,
          {
            requirement: 'medication-request.search-by-patient',
            expected: `Patient/${patient}`,
            actual: subject,
            exchange: pages[pages.length - 1]!.exchange.id,
          },
        );
      }
      ctx.observe('medication-request.search-by-patient.examined', { entries: resources.length, pages: pages.length, complete });
    },
  }),
  defineCheck({
    id: 'medication-request.search-by-encounter',
    title: 'a search by encounter returns only MedicationRequests of that encounter',
    area,
    level: 'MUST',
    requirements: ['medication-request.search-by-encounter', 'medication-request.encounter-reference', 'medication-request.search-returns-bundle'],
    quote: 'encounter | string (UUID of the encounter)',
    fixtures: ['encounter'],
    async run(ctx) {
      const encounter = ctx.fixture('encounter');
      const { resources, pages, complete } = await searchMedicationRequests(ctx, { encounter, _count: '100' }, MAX_PAGES);
      if (resources.length === 0) {
        // Empty: a failure when the patient's MedicationRequests show one of this encounter.
        if (!ctx.hasFixture('patient'))
          ctx.skip('the search by encounter is empty and no patient fixture is configured to tell whether the encounter has MedicationRequests');
        const byPatient = await searchMedicationRequests(ctx, { patient: ctx.fixture('patient'), _count: '100' }, MAX_PAGES);
        const ofEncounter = byPatient.resources.filter((r) => sameReference(referenceOf(r.encounter), `Encounter/${encounter}`));
        if (ofEncounter.length === 0)
          ctx.skip('no MedicationRequest of the patient fixture references the encounter fixture, so the filter cannot be seen at work');
        ctx.fail(`the search by encounter is empty although the search by patient returns ${ofEncounter.length} MedicationRequests of that encounter`, {
          requirement: 'medication-request.search-by-encounter',
          expected: ofEncounter.slice(0, 5).map((r) => r.id),
          actual: [],
          exchange: pages[0]!.exchange.id,
        });
      }
      for (const r of resources) {
        const ref = referenceOf(r.encounter);
        ctx.check(
          r.resourceType === 'MedicationRequest' && sameReference(ref, `Encounter/${encounter}`),
          `entry ${String(r.id)} has encounter ${String(ref)}`,
          {
            requirement: 'medication-request.search-by-encounter',
            expected: `Encounter/${encounter}`,
            actual: ref,
            exchange: pages[pages.length - 1]!.exchange.id,
          },
        );
      }
      ctx.observe('medication-request.search-by-encounter.examined', { entries: resources.length, pages: pages.length, complete });
    },
  }),
  defineCheck({
    id: 'medication-request.search-needs-patient-or-encounter',
    title: 'a search with neither patient nor encounter is refused with HPB-00101',
    area,
    level: 'MUST',
    requirements: ['medication-request.search-400', 'medication-request.search-patient-or-encounter'],
    quote: 'At least one of `patient` or `encounter` must be supplied.',
    async run(ctx) {
      const op = ctx.operation('MedicationRequest', 'search-type', 'R4');
      const res = await refusalProbe(ctx, { scopes: READ_SCOPES, url: ctx.path(op.path) });
      expectValidationError(res, 'medication-request.search-400');
    },
  }),
];
