/**
 * Round trips on the fullest records: the fixture Encounters the config declares
 * (`encounterWithDiagnoses`: ranked diagnoses on contained Conditions;
 * `encounterWithSummaries`: the contained summaries and care plan; `encounter`),
 * not only records the suite created (which carry none of that). A PUT of the
 * fixture exactly as read changes nothing but server-owned content, and its search
 * entry is the resource its read returns, contained resources included. The
 * search comparison writes nothing, so it runs in the read-only profile too.
 * Comparisons by meaning: src/service/compare.ts, docs/comparison.md.
 */
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import {
  catalogCodeOf,
  expectSuccess,
  idOf,
  isObject,
  isSuccess,
  type Json,
  putEncounter,
  readEncounter,
  referencedId,
  sameResource,
  searchEncounters,
  checkSameMeaning,
} from '../../src/service/index.js';
import { area } from './support.js';

/** The fixture Encounters richest first; each id once. */
const RICH_FIXTURES = ['encounterWithDiagnoses', 'encounterWithSummaries', 'encounter', 'encounterInProgress'] as const;

function declaredFixtures(ctx: CheckContext): Array<{ keys: string[]; id: string }> {
  const byId = new Map<string, string[]>();
  for (const key of RICH_FIXTURES) {
    if (!ctx.hasFixture(key)) continue;
    const id = ctx.fixture(key);
    byId.set(id, [...(byId.get(id) ?? []), key]);
  }
  if (byId.size === 0) ctx.skip(`fixture not provided: one of ${RICH_FIXTURES.join(', ')}`);
  return [...byId].map(([id, keys]) => ({ id, keys }));
}

const versionOf = (r: Json | undefined) => (r && isObject(r.meta) ? r.meta.versionId : undefined);

export const fixtureRoundTripChecks: CheckDefinition[] = [
  defineCheck({
    id: 'encounter.fixture-update-as-read-round-trip',
    title: 'a PUT of each fixture Encounter exactly as read (diagnoses, contained Conditions, summaries, care plan) changes nothing but server-owned content',
    area,
    level: 'MUST',
    requirements: ['encounter.update-read-back', 'encounter.update-returns-resource'],
    quote: 'PUT `/fhir/R4/Encounter/{id}` | `system/Encounter.cru` | Encounter body | Encounter',
    tags: ['writes'],
    async run(ctx) {
      for (const { id, keys } of declaredFixtures(ctx)) {
        const name = keys.join('/');
        const before = await readEncounter(ctx, id);
        const put = await putEncounter(ctx, id, before.encounter);
        if (!isSuccess(put) && put.status === 422 && catalogCodeOf(put) === 'HPB-00139') {
          // A target may hold every update to the registration window: the fixture's date is then out of reach.
          ctx.observe(
            `encounter.fixture-update-as-read.${keys[0]}`,
            { status: put.status, code: 'HPB-00139' },
            'the PUT as read was refused for the registration window',
          );
          continue;
        }
        expectSuccess(ctx, put, 'encounter.update-returns-resource', `${name}: update with the Encounter as read`);
        const after = await readEncounter(ctx, id);
        checkSameMeaning(
          ctx,
          sameResource(before.encounter, after.encounter),
          `${name}: a PUT of the Encounter as read changed it`,
          'encounter.update-read-back',
          after.res,
        );
        if (isObject(put.json) && put.json.resourceType === 'Encounter' && versionOf(put.json) === versionOf(after.encounter)) {
          checkSameMeaning(
            ctx,
            sameResource(put.json, after.encounter),
            `${name}: the update response is not the Encounter then read`,
            'encounter.update-returns-resource',
            put,
          );
        }
      }
    },
  }),
  defineCheck({
    id: 'encounter.fixture-search-entry-matches-read',
    title: 'each fixture Encounter in a search result is the resource its read returns, contained resources and diagnoses included',
    area,
    level: 'MUST',
    requirements: ['pagination.entry-is-read', 'encounter.search-returns-bundle'],
    quote: '`entry` (array of resources)',
    async run(ctx) {
      const op = ctx.operation('Encounter', 'search-type', 'R4');
      const byId = op.searchParams.some((p) => p.name === '_id');
      for (const { id, keys } of declaredFixtures(ctx)) {
        const name = keys.join('/');
        let read = await readEncounter(ctx, id);
        const patient = referencedId(read.encounter.subject, 'Patient');
        const params: Array<[string, string]> = [
          ...(patient ? [['patient', patient] as [string, string]] : []),
          ...(byId ? [['_id', id] as [string, string]] : []),
        ];
        if (params.length === 0) ctx.skip(`${name} has no subject and the search publishes no _id: no search can name it`);
        let results = await searchEncounters(ctx, params);
        let entry = results.resources.find((r) => idOf(r).toLowerCase() === id.toLowerCase());
        if (!entry && !results.complete) ctx.skip(`the search ${params.map(([k, v]) => `${k}=${v}`).join('&')} has more pages than the suite follows`);
        if (!entry) {
          ctx.fail(`${name}: the search ${params.map(([k, v]) => `${k}=${v}`).join('&')} lacks the fixture Encounter ${id}`, {
            requirement: 'pagination.entry-is-read',
            expected: `an entry ${id}`,
            actual: results.resources.map(idOf).slice(0, 10),
            exchange: results.first.exchange.id,
          });
        }
        if (versionOf(entry) !== versionOf(read.encounter)) {
          // Another writer between the two calls (a PUT as read of this run): read and search once more.
          read = await readEncounter(ctx, id);
          results = await searchEncounters(ctx, params);
          entry = results.resources.find((r) => idOf(r).toLowerCase() === id.toLowerCase()) ?? entry;
        }
        ctx.check(
          versionOf(entry) === versionOf(read.encounter),
          `${name}: the search entry is version ${String(versionOf(entry))}, the read version ${String(versionOf(read.encounter))}`,
          {
            requirement: 'pagination.entry-is-read',
            expected: versionOf(read.encounter),
            actual: versionOf(entry),
            exchange: results.first.exchange.id,
          },
        );
        checkSameMeaning(
          ctx,
          sameResource(read.encounter, entry!),
          `${name}: the search entry differs from the read`,
          'pagination.entry-is-read',
          results.first,
        );
      }
    },
  }),
];
