/**
 * Encounter search (spec: Endpoints > Encounter (R4), search parameters): each
 * parameter is checked against the data. The base set is the search for the
 * fixture Encounter's patient; a filtered search (patient + filter) must return
 * exactly the base records that satisfy the filter.
 */
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import {
  bundleResources,
  catalogCodeOf,
  checkFiltered,
  type Collected,
  DATE_PREFIXES,
  dateFilter,
  type DatePrefix,
  idOf,
  isObject,
  type Json,
  readEncounter,
  referencedId,
  searchEncounters,
  searchUrl,
} from '../../src/service/index.js';
import { area, RS } from './support.js';

export interface Baseline {
  encounter: Json;
  patientId: string;
  /** Every Encounter of the patient. */
  base: Collected;
}

/**
 * The fixture Encounter and every Encounter of its patient. The config declares
 * the fixture with a subject, a participant and a period (docs/config.md), so a
 * read without a Patient subject fails, and the search by that patient must
 * return at least the fixture itself (an empty or partial result fails).
 */
export async function baseline(ctx: CheckContext, judge = true): Promise<Baseline> {
  const { res, encounter } = await readEncounter(ctx, ctx.fixture('encounter'));
  const patientId = referencedId(encounter.subject, 'Patient');
  if (!patientId) {
    if (!judge) ctx.skip('the fixture Encounter reads without a Patient subject to search by');
    ctx.fail('the fixture Encounter reads without a Patient subject to search by, although it is declared to have one', {
      requirement: 'encounter.subject-patient-reference',
      expected: '{ reference: "Patient/<uuid>" }',
      actual: encounter.subject ?? null,
      exchange: res.exchange.id,
    });
  }
  const base = await searchEncounters(ctx, [['patient', patientId]]);
  const id = idOf(encounter);
  if (judge && (base.complete || base.resources.length === 0)) {
    ctx.check(
      base.resources.some((r) => idOf(r) === id),
      `the search by the fixture Encounter's patient ${base.resources.length === 0 ? 'is empty' : 'lacks the fixture Encounter'}`,
      {
        requirement: 'encounter.search-patient',
        expected: `entries including Encounter/${id}`,
        actual: { entries: base.resources.length },
        exchange: base.first.exchange.id,
      },
    );
  }
  return { encounter, patientId, base };
}

export const practitionersOf = (e: Json): string[] =>
  (Array.isArray(e.participant) ? e.participant : [])
    .map((p: unknown) => (isObject(p) ? referencedId(p.individual, 'Practitioner') : undefined))
    .filter((x): x is string => x !== undefined);
export const classCodeOf = (e: Json): unknown => (isObject(e.class) ? e.class.code : undefined);
export const startOf = (e: Json): unknown => (isObject(e.period) ? e.period.start : undefined);

/** A check of one filter combined with `patient`, against the baseline. */
function filterCheck(opts: {
  slug: string;
  title: string;
  requirement: string;
  quote: string;
  /** The parameter to add, chosen from the baseline (undefined: skip with the reason). */
  choose: (b: Baseline) => { param: [string, string]; matches: (r: Json) => boolean; surely?: (r: Json) => boolean; describe: (r: Json) => unknown } | string;
}): CheckDefinition {
  return defineCheck({
    id: `encounter.${opts.slug}`,
    title: opts.title,
    area,
    level: 'MUST',
    requirements: [opts.requirement],
    quote: opts.quote,
    fixtures: ['encounter'],
    async run(ctx) {
      const b = await baseline(ctx);
      const chosen = opts.choose(b);
      // What the filter is chosen from is declared on the fixture (a status, a class, a participant, a period).
      if (typeof chosen === 'string')
        return ctx.fail(`${chosen}, although the fixture is declared to have it`, { requirement: opts.requirement, actual: null });
      const results = await searchEncounters(ctx, [['patient', b.patientId], chosen.param]);
      if ((chosen.surely ?? chosen.matches)(b.encounter) && (results.complete || results.resources.length === 0)) {
        ctx.check(
          results.resources.some((r) => idOf(r) === idOf(b.encounter)),
          `${chosen.param[0]}=${chosen.param[1]}: the fixture Encounter, which satisfies the filter, is not returned`,
          {
            requirement: opts.requirement,
            expected: `entries including Encounter/${idOf(b.encounter)}`,
            actual: { entries: results.resources.length },
            exchange: results.first.exchange.id,
          },
        );
      }
      checkFiltered(ctx, {
        what: `${chosen.param[0]}=${chosen.param[1]}`,
        requirement: opts.requirement,
        results,
        base: b.base,
        matches: (r) => referencedId(r.subject, 'Patient') === b.patientId && chosen.matches(r),
        surely: chosen.surely,
        describe: chosen.describe,
      });
    },
  });
}

function datePrefixCheck(prefix: DatePrefix | 'none'): CheckDefinition {
  const bare = prefix === 'none';
  return filterCheck({
    slug: bare ? 'search-date-day' : `search-date-${prefix}`,
    title: bare
      ? 'Encounter search date=YYYY-MM-DD (no prefix) matches period.start on that day'
      : `Encounter search date=${prefix}YYYY-MM-DD is satisfied by every result's period.start`,
    requirement: bare ? 'encounter.search-date-day' : 'encounter.search-date-prefixes',
    quote: bare ? '`[prefix]YYYY-MM-DD`' : 'prefixes `eq`, `ne`, `gt`, `ge`, `lt`, `le`.',
    choose: (b) => {
      const start = startOf(b.encounter);
      if (typeof start !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(start)) return 'the fixture Encounter has no period.start';
      const day = start.slice(0, 10);
      const filter = dateFilter(bare ? 'eq' : prefix, day, startOf);
      return { param: ['date', `${bare ? '' : prefix}${day}`], ...filter, describe: startOf };
    },
  });
}

export const searchChecks: CheckDefinition[] = [
  defineCheck({
    id: 'encounter.search-returns-bundle',
    title: 'an Encounter search answers a searchset Bundle of Encounters',
    area,
    level: 'MUST',
    requirements: ['encounter.search-returns-bundle'],
    quote: 'GET `/fhir/R4/Encounter` | `system/Encounter.rs` | query parameters | Bundle searchset',
    fixtures: ['encounter'],
    async run(ctx) {
      const { base } = await baseline(ctx);
      const others = base.resources.filter((r) => r.resourceType !== 'Encounter');
      ctx.check(others.length === 0, 'the searchset holds resources other than Encounter', {
        requirement: 'encounter.search-returns-bundle',
        expected: 'Encounter',
        actual: others.slice(0, 3).map((r) => r.resourceType),
        exchange: base.first.exchange.id,
      });
    },
  }),
  filterCheck({
    slug: 'search-id',
    title: 'Encounter search _id matches exactly that Encounter',
    requirement: 'encounter.search-id',
    quote: '_id | token | Exact match.',
    choose: (b) => {
      const id = idOf(b.encounter);
      return { param: ['_id', id], matches: (r) => idOf(r) === id, describe: idOf };
    },
  }),
  defineCheck({
    id: 'encounter.search-patient',
    title: "Encounter search patient returns only that patient's Encounters",
    area,
    level: 'MUST',
    requirements: ['encounter.search-patient'],
    quote: 'patient | reference | UUID of the patient.',
    fixtures: ['encounter'],
    async run(ctx) {
      const { encounter, patientId, base } = await baseline(ctx);
      const subjectIs = (id: string) => (r: Json) => referencedId(r.subject, 'Patient') === id;
      checkFiltered(ctx, {
        what: `patient=${patientId}`,
        requirement: 'encounter.search-patient',
        results: base,
        base: { ...base, resources: [encounter] },
        matches: subjectIs(patientId),
        describe: (r) => r.subject,
      });
      if (!ctx.hasFixture('patientNoRecords')) return;
      const none = ctx.fixture('patientNoRecords');
      const results = await searchEncounters(ctx, [['patient', none]]);
      checkFiltered(ctx, {
        what: `patient=${none}`,
        requirement: 'encounter.search-patient',
        results,
        base: results,
        matches: subjectIs(none),
        describe: (r) => r.subject,
      });
    },
  }),
  filterCheck({
    slug: 'search-practitioner',
    title: 'Encounter search practitioner returns only Encounters with that practitioner',
    requirement: 'encounter.search-practitioner',
    quote: 'practitioner | reference | UUID of the practitioner.',
    choose: (b) => {
      // The fixture Encounter's practitioner that appears in the fewest of the patient's Encounters filters most.
      const count = (p: string) => b.base.resources.filter((r) => practitionersOf(r).includes(p)).length;
      const candidates = practitionersOf(b.encounter).sort((x, y) => count(x) - count(y));
      if (candidates.length === 0) return 'the fixture Encounter has no practitioner';
      const p = candidates[0]!;
      return { param: ['practitioner', p], matches: (r) => practitionersOf(r).includes(p), describe: practitionersOf };
    },
  }),
  filterCheck({
    slug: 'search-status',
    title: 'Encounter search status returns only Encounters with that status',
    requirement: 'encounter.search-status',
    quote: 'status | token | `planned`, `in-progress`, `finished`, `cancelled`.',
    choose: (b) => {
      const status = b.encounter.status;
      if (typeof status !== 'string') return 'the fixture Encounter has no status';
      return { param: ['status', status], matches: (r) => r.status === status, describe: (r) => r.status };
    },
  }),
  filterCheck({
    slug: 'search-class',
    title: 'Encounter search class returns only Encounters of that class',
    requirement: 'encounter.search-class',
    quote: 'class | token | Class code, for example `AMB`, `IMP`, `VR`.',
    choose: (b) => {
      const code = classCodeOf(b.encounter);
      if (typeof code !== 'string') return 'the fixture Encounter has no class code';
      return { param: ['class', code], matches: (r) => classCodeOf(r) === code, describe: classCodeOf };
    },
  }),
  datePrefixCheck('none'),
  ...DATE_PREFIXES.map(datePrefixCheck),
  defineCheck({
    id: 'encounter.class-codes',
    title: "records the class codes of the patient's Encounters",
    area,
    level: 'observation',
    requirements: ['encounter.class-codes'],
    quote: 'Class codes named: `AMB`, `IMP`, `VR`.',
    fixtures: ['encounter'],
    async run(ctx) {
      const { base } = await baseline(ctx, false);
      ctx.observe('encounter.class-codes', [...new Set(base.resources.map(classCodeOf))].sort());
    },
  }),
  defineCheck({
    id: 'encounter.search-invalid-parameter',
    title: 'records what an Encounter search with a malformed date gives',
    area,
    level: 'observation',
    requirements: ['encounter.search-invalid-parameter'],
    quote: 'GET `/fhir/R4/Encounter` | `system/Encounter.rs` | query parameters | Bundle searchset | 401 `HPB-00106`, 403 `HPB-00104`, 429 `HPB-00105`',
    async run(ctx) {
      const op = ctx.operation('Encounter', 'search-type', 'R4');
      const res = await ctx.fhir({ scopes: RS, url: searchUrl(op.path, [['date', 'xx2024']]) });
      const entries = isObject(res.json) && res.json.resourceType === 'Bundle' ? bundleResources(res.json).length : undefined;
      ctx.observe('encounter.search.date=xx2024', { status: res.status, code: catalogCodeOf(res), entries });
    },
  }),
];
