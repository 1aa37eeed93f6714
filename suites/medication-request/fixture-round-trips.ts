/**
 * Round trips on the fixture MedicationRequests the config declares, in each state:
 * `medicationRequest` (draft prescription), `medicationRequestSigned`,
 * `medicationRequestCancelled`, `medicationRequestEnteredInError` and
 * `medicationRequestUnknownStatus` (a stored status with no FHIR spelling). Each one's
 * search entry is the resource its read returns, and what it is declared to hold
 * (status `entered-in-error`, `unknown`) shows on both: a search must not show the
 * raw stored status the read spells `unknown`. Writes nothing (read-only profile too).
 * A PUT of a writable fixture exactly as read changes nothing but server-owned content.
 */
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import type { HttpResponse } from '../../src/http/index.js';
import {
  expectSuccess,
  isObject,
  isSuccess,
  putMedicationRequest,
  readMedicationRequest,
  referencedId,
  type Resource,
  sameResource,
  searchMedicationRequests,
  checkSameMeaning,
} from '../../src/service/index.js';

const area = 'medication-request';
const MAX_PAGES = 5;

/** Fixture keys and the status each is declared to read with (undefined: any). */
const FIXTURES: ReadonlyArray<{ key: string; status?: string }> = [
  { key: 'medicationRequest' },
  { key: 'medicationRequestSigned' },
  { key: 'medicationRequestCancelled' },
  { key: 'medicationRequestEnteredInError', status: 'entered-in-error' },
  { key: 'medicationRequestUnknownStatus', status: 'unknown' },
];

function declared(ctx: CheckContext): Array<{ key: string; id: string; status?: string }> {
  const out = FIXTURES.filter((f) => ctx.hasFixture(f.key)).map((f) => ({ ...f, id: ctx.fixture(f.key) }));
  if (out.length === 0) ctx.skip(`fixture not provided: one of ${FIXTURES.map((f) => f.key).join(', ')}`);
  return out;
}

const versionOf = (r: Resource | undefined) => (r && isObject(r.meta) ? r.meta.versionId : undefined);

export const fixtureRoundTripChecks: CheckDefinition[] = [
  defineCheck({
    id: 'medication-request.fixture-search-entry-matches-read',
    title: 'each fixture MedicationRequest (every prescription state, entered-in-error, unknown status) in a search result is the resource its read returns',
    area,
    level: 'MUST',
    requirements: ['pagination.entry-is-read', 'medication-request.status-unknown-emitted'],
    quote: '`entry` (array of resources)',
    async run(ctx) {
      const fixtures = declared(ctx);
      const reads = new Map<string, { res: HttpResponse; resource: Resource }>();
      const byPatient = new Map<string, string[]>();
      for (const f of fixtures) {
        const read = await readMedicationRequest(ctx, f.id);
        reads.set(f.key, read);
        if (f.status !== undefined) {
          ctx.check(read.resource.status === f.status, `${f.key}: the read shows status ${JSON.stringify(read.resource.status)}, declared ${f.status}`, {
            requirement: f.status === 'unknown' ? 'medication-request.status-unknown-emitted' : 'pagination.entry-is-read',
            expected: f.status,
            actual: read.resource.status,
            exchange: read.res.exchange.id,
          });
        }
        const patient = referencedId(read.resource.subject, 'Patient');
        if (patient) byPatient.set(patient, [...(byPatient.get(patient) ?? []), f.key]);
      }
      for (const [patient, keys] of byPatient) {
        const results = await searchMedicationRequests(ctx, { patient, _count: '100' }, MAX_PAGES);
        for (const key of keys) {
          const f = fixtures.find((x) => x.key === key)!;
          let read = reads.get(key)!;
          const entry = results.resources.find((r) => typeof r.id === 'string' && r.id.toLowerCase() === f.id.toLowerCase());
          if (!entry && !results.complete) {
            ctx.observe(
              `medication-request.fixture-search.${key}`,
              'beyond the pages followed',
              `the search by patient ${patient} has more pages than the suite follows`,
            );
            continue;
          }
          if (!entry) {
            ctx.fail(`${key}: the search by its patient ${patient} lacks the fixture MedicationRequest ${f.id} (${results.pages.length} page(s) followed)`, {
              requirement: 'pagination.entry-is-read',
              expected: `an entry ${f.id}`,
              exchange: results.pages[0]!.exchange.id,
            });
          }
          // Written in between (another check's update of this fixture): read again before comparing.
          if (versionOf(entry) !== versionOf(read.resource)) read = await readMedicationRequest(ctx, f.id);
          if (versionOf(entry) !== versionOf(read.resource)) continue;
          const page = results.pages.find((p) => JSON.stringify(p.json).includes(f.id)) ?? results.pages[0]!;
          if (f.status !== undefined) {
            ctx.check(entry!.status === f.status, `${key}: the search entry shows status ${JSON.stringify(entry!.status)}, declared ${f.status}`, {
              requirement: f.status === 'unknown' ? 'medication-request.status-unknown-emitted' : 'pagination.entry-is-read',
              expected: f.status,
              actual: entry!.status,
              exchange: page.exchange.id,
            });
          }
          checkSameMeaning(ctx, sameResource(read.resource, entry!), `${key}: the search entry differs from the read`, 'pagination.entry-is-read', page);
        }
      }
    },
  }),
  defineCheck({
    id: 'medication-request.fixture-update-as-read-round-trip',
    title: 'a PUT of the fixture MedicationRequest (draft prescription) exactly as read changes nothing but server-owned content',
    area,
    level: 'MUST',
    requirements: ['medication-request.update-merge', 'medication-request.update-returns-resource'],
    quote: 'The update reads the stored row and merges: FHIR-owned fields are overlaid, app-only fields are preserved.',
    tags: ['writes'],
    fixtures: ['medicationRequest'],
    async run(ctx) {
      const id = ctx.fixture('medicationRequest');
      const before = await readMedicationRequest(ctx, id);
      const put = await putMedicationRequest(ctx, id, before.resource);
      if (!isSuccess(put) && (put.status === 409 || put.status === 422)) {
        // The fixture's prescription may have been signed since it was declared: a state refusal is the state rules' to judge.
        ctx.skip(`the fixture medicationRequest refused an update (${put.status}): its prescription is not a draft any more`);
      }
      expectSuccess(ctx, put, 'medication-request.update-returns-resource', 'update of the fixture as read');
      const after = await readMedicationRequest(ctx, id);
      checkSameMeaning(
        ctx,
        sameResource(before.resource, after.resource),
        'a PUT of the fixture MedicationRequest as read changed it',
        'medication-request.update-merge',
        after.res,
      );
    },
  }),
];
