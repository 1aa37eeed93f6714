/**
 * MedicationRequest round trips (spec: Resources > MedicationRequest, storage
 * split; Endpoints > MedicationRequest (R4), update rule 1): what a create
 * writes is what a read returns, a PUT of the resource exactly as read changes
 * nothing but `meta` (app-only data such as the draft-prescription grouping
 * included), and a search entry is the resource a read of the same id returns.
 * Comparisons are structural (src/service/compare.ts): `meta` and
 * a narrative `text` are ignored, and what a conforming server may normalize
 * (an equivalent UTC offset, an added display, intent `order`) is no difference.
 */
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import {
  bundleLink,
  bundleResources,
  createOwn,
  describeDifferences,
  expectResource,
  expectSearchset,
  expectSuccess,
  isObject,
  newMedicationRequest,
  putMedicationRequest,
  READ_SCOPES,
  readMedicationRequest,
  type Resource,
  sameResource,
  writtenIsRead,
  checkSameMeaning,
} from '../../src/service/index.js';
import type { HttpResponse } from '../../src/http/index.js';
import { expectCreatedResource } from './support.js';

const area = 'medication-request';
const tags: ['writes'] = ['writes'];

/** Pages of 100 followed at most to find our own record in a search. */
const MAX_PAGES = 5;

/** Medication code/system/display are FHIR-owned: a changed medication display is a difference, other displays may be normalized. */
const MEDICATION_DISPLAY = (path: string) => path.startsWith('medicationCodeableConcept.');

/**
 * Fields judged by the create round trip: the FHIR-owned ones (status,
 * medication, dosage, dispense, reason, notes) and the references (subject,
 * encounter, requester). `intent` is always `order` on read (its own check);
 * `authoredOn` and `substitution` are recorded: whether the server keeps a
 * client's values for them is not stated.
 */
const JUDGED = ['status', 'medicationCodeableConcept', 'dosageInstruction', 'dispenseRequest', 'reasonCode', 'note', 'subject', 'encounter', 'requester'];
const RECORDED = ['authoredOn', 'substitution'];

/** A MedicationRequest with every FHIR-owned field and the references the config allows, inner structure included. */
function fullBody(ctx: CheckContext): Resource {
  const minute = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 3_600_000);
  // authoredOn written with a -06:00 offset: the same instant in UTC is an equivalent reading.
  const local = new Date(minute.getTime() - 6 * 3_600_000).toISOString().slice(0, 19);
  return newMedicationRequest(ctx, {
    medicationCodeableConcept: {
      coding: [{ system: 'http://www.nlm.nih.gov/research/umls/rxnorm', code: '860975', display: 'metformin hydrochloride 500 MG Oral Tablet' }],
      text: 'metformin hydrochloride 500 MG Oral Tablet',
    },
    ...(ctx.hasFixture('encounter') ? { encounter: { reference: `Encounter/${ctx.fixture('encounter')}` } } : {}),
    ...(ctx.hasFixture('practitioner') ? { requester: { reference: `Practitioner/${ctx.fixture('practitioner')}` } } : {}),
    authoredOn: `${local}-06:00`,
    reasonCode: [{ coding: [{ system: 'http://hl7.org/fhir/sid/icd-10', code: 'E11.9', display: 'Type 2 diabetes mellitus without complications' }] }],
    dosageInstruction: [
      {
        sequence: 1,
        text: '1 tablet every 12 hours with meals',
        timing: { repeat: { frequency: 1, period: 12, periodUnit: 'h' } },
        doseAndRate: [{ doseQuantity: { value: 1, unit: 'tablet' } }],
      },
    ],
    dispenseRequest: { numberOfRepeatsAllowed: 1, quantity: { value: 60, unit: 'tablet' } },
    substitution: { allowedBoolean: false },
    note: [{ text: `round trip by fhir-conformance run ${ctx.runId}` }, { text: 'Take with food.' }],
  });
}

function pick(resource: Resource, fields: readonly string[]): Resource {
  return Object.fromEntries(fields.filter((f) => resource[f] !== undefined).map((f) => [f, resource[f]]));
}

/** Our own record (a tagged create), searched by encounter when the fixture exists, else by patient. */
async function findInSearch(ctx: CheckContext, id: string, params: Record<string, string>): Promise<{ entry?: Resource; page?: HttpResponse; pages: number }> {
  const op = ctx.operation('MedicationRequest', 'search-type', 'R4');
  let url: string | undefined = `${ctx.path(op.path)}?${new URLSearchParams({ ...params, _count: '100' }).toString()}`;
  let pages = 0;
  while (url !== undefined && pages < MAX_PAGES) {
    const res = await ctx.fhir({ scopes: READ_SCOPES, url });
    const bundle = expectSearchset(res, 'medication-request.search-returns-bundle');
    pages++;
    const entry = bundleResources(bundle).find((r) => typeof r.id === 'string' && r.id.toLowerCase() === id.toLowerCase());
    if (entry) return { entry, page: res, pages };
    url = bundleLink(bundle, 'next');
  }
  return { pages };
}

export const roundTripChecks: CheckDefinition[] = [
  defineCheck({
    id: 'medication-request.create-round-trip',
    title: 'what a create writes (FHIR-owned fields and references) is what the create answers and a read returns',
    area,
    level: 'MUST',
    requirements: ['medication-request.create-read-back', 'medication-request.fhir-owned-overlay', 'medication-request.create-returns-resource'],
    quote: 'POST `/fhir/R4/MedicationRequest` | `system/MedicationRequest.c` | MedicationRequest body | MedicationRequest',
    tags,
    fixtures: ['patient'],
    async run(ctx: CheckContext) {
      const written = fullBody(ctx);
      const { res, id } = await createOwn(ctx, written);
      const judged = pick(written, JUDGED);
      const response = expectCreatedResource(ctx, res);
      checkSameMeaning(
        ctx,
        writtenIsRead(judged, response, { ownedDisplay: MEDICATION_DISPLAY }),
        'the create response does not carry what was written',
        'medication-request.create-read-back',
        res,
        'medication-request.create-round-trip.response-displays',
      );
      const read = await readMedicationRequest(ctx, id);
      checkSameMeaning(
        ctx,
        writtenIsRead(judged, read.resource, { ownedDisplay: MEDICATION_DISPLAY }),
        'the read after the create does not return what was written',
        'medication-request.create-read-back',
        read.res,
        'medication-request.create-round-trip.displays',
      );
      const recorded = writtenIsRead(pick(written, RECORDED), read.resource);
      ctx.observe(
        'medication-request.create-round-trip.not-stated-fields',
        recorded.differences.length === 0 ? 'kept as written' : recorded.differences,
        'whether authoredOn and substitution keep the values a client writes is not stated',
      );
    },
  }),
  defineCheck({
    id: 'medication-request.update-unchanged-round-trip',
    title: 'a PUT of the MedicationRequest exactly as read changes nothing but meta (app-only grouping included)',
    area,
    level: 'MUST',
    requirements: ['medication-request.update-merge', 'medication-request.app-only-preserved', 'medication-request.update-returns-resource'],
    quote: 'The update reads the stored row and merges: FHIR-owned fields are overlaid, app-only fields are preserved.',
    tags,
    fixtures: ['patient'],
    async run(ctx: CheckContext) {
      const { id } = await createOwn(ctx, fullBody(ctx));
      const before = await readMedicationRequest(ctx, id);
      const res = await putMedicationRequest(ctx, id, before.resource);
      expectSuccess(ctx, res, 'medication-request.update-returns-resource', 'update with the resource as read');
      expectResource(ctx, res, 'MedicationRequest', 'medication-request.update-returns-resource');
      const after = await readMedicationRequest(ctx, id);
      const c = sameResource(before.resource, after.resource);
      const group = c.differences.filter((d) => d.path.startsWith('groupIdentifier'));
      checkSameMeaning(
        ctx,
        { differences: c.differences.filter((d) => !d.path.startsWith('groupIdentifier')), displays: c.displays },
        'a PUT of the resource as read changed it',
        'medication-request.update-merge',
        after.res,
        'medication-request.update-unchanged.displays',
      );
      ctx.check(group.length === 0, `a PUT of the resource as read changed the draft-prescription grouping: ${describeDifferences(group)}`, {
        requirement: 'medication-request.app-only-preserved',
        expected: before.resource.groupIdentifier ?? null,
        actual: after.resource.groupIdentifier ?? null,
        exchange: after.res.exchange.id,
      });
      ctx.observe(
        'medication-request.group-identifier-on-create',
        before.resource.groupIdentifier !== undefined,
        'whether the draft-prescription grouping is emitted (as groupIdentifier) is not stated',
      );
    },
  }),
  defineCheck({
    id: 'medication-request.search-entry-matches-read',
    title: 'a search entry is the resource a read of the same id returns (same version, same content)',
    area,
    level: 'MUST',
    requirements: ['pagination.entry-is-read', 'medication-request.search-returns-bundle'],
    quote: '`entry` (array of resources)',
    tags,
    fixtures: ['patient'],
    async run(ctx: CheckContext) {
      // A record with a second version, so a search that serves an older version shows.
      const { id } = await createOwn(ctx, fullBody(ctx));
      const first = await readMedicationRequest(ctx, id);
      const updated = await putMedicationRequest(ctx, id, { ...first.resource, note: [{ text: `second version by fhir-conformance run ${ctx.runId}` }] });
      expectSuccess(ctx, updated, 'medication-request.update-returns-resource', 'update');
      const params: Record<string, string> = ctx.hasFixture('encounter') ? { encounter: ctx.fixture('encounter') } : { patient: ctx.fixture('patient') };
      const found = await findInSearch(ctx, id, params);
      const read = await readMedicationRequest(ctx, id);
      const entry = found.entry;
      if (!entry) {
        ctx.fail(
          `the MedicationRequest ${id} just created does not appear in the search by ${Object.keys(params)[0]} (${found.pages} page(s) of 100 followed)`,
          {
            requirement: 'pagination.entry-is-read',
            expected: `an entry ${id}`,
            actual: 'absent',
            exchange: read.res.exchange.id,
          },
        );
      }
      const versionOf = (r: Resource) => (isObject(r.meta) ? r.meta.versionId : undefined);
      ctx.check(
        versionOf(entry) === versionOf(read.resource),
        `the search entry is version ${String(versionOf(entry))}, the read version ${String(versionOf(read.resource))}`,
        {
          requirement: 'pagination.entry-is-read',
          expected: versionOf(read.resource),
          actual: versionOf(entry),
          exchange: found.page!.exchange.id,
        },
      );
      checkSameMeaning(
        ctx,
        sameResource(read.resource, entry),
        'the search entry differs from the read',
        'pagination.entry-is-read',
        found.page!,
        'medication-request.search-entry.displays',
      );
      // Entries the target served next to ours: each must be the read of its id too (a few, to spare requests).
      const page = found.page!;
      const others = bundleResources(expectSearchset(page))
        .filter((r) => typeof r.id === 'string' && r.id !== entry.id)
        .slice(0, 2);
      for (const other of others) {
        const r = await readMedicationRequest(ctx, other.id as string);
        if (versionOf(r.resource) !== versionOf(other)) continue; // updated in between by someone else: not comparable
        checkSameMeaning(
          ctx,
          sameResource(r.resource, other),
          `search entry ${String(other.id)} differs from its read`,
          'pagination.entry-is-read',
          page,
          'medication-request.search-entry.displays',
        );
      }
    },
  }),
];
