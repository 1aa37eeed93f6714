/**
 * Encounter search parameters in combination (spec: Endpoints > Encounter (R4), search parameters):
 * each filter is judged alone with `patient` in search-checks.ts; here two filters together with
 * `patient`, each chosen from the fixture Encounter, must return exactly the patient's Encounters
 * that satisfy both. A filter may hold alone and be dropped beside another.
 */
import { type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import { checkFiltered, dateFilter, idOf, type Json, referencedId, searchEncounters } from '../../src/service/index.js';
import { type Baseline, baseline, classCodeOf, practitionersOf, startOf } from './search-checks.js';
import { area } from './support.js';

interface Filter {
  requirement: string;
  choose(b: Baseline): { param: [string, string]; matches: (r: Json) => boolean; surely?: (r: Json) => boolean; describe: (r: Json) => unknown } | string;
}

const FILTERS: Record<'status' | 'class' | 'date' | 'practitioner', Filter> = {
  status: {
    requirement: 'encounter.search-status',
    choose: (b) => {
      const status = b.encounter.status;
      if (typeof status !== 'string') return 'the fixture Encounter has no status';
      return { param: ['status', status], matches: (r) => r.status === status, describe: (r) => r.status };
    },
  },
  class: {
    requirement: 'encounter.search-class',
    choose: (b) => {
      const code = classCodeOf(b.encounter);
      if (typeof code !== 'string') return 'the fixture Encounter has no class code';
      return { param: ['class', code], matches: (r) => classCodeOf(r) === code, describe: classCodeOf };
    },
  },
  date: {
    requirement: 'encounter.search-date-day',
    choose: (b) => {
      const start = startOf(b.encounter);
      if (typeof start !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(start)) return 'the fixture Encounter has no period.start';
      const day = start.slice(0, 10);
      return { param: ['date', day], ...dateFilter('eq', day, startOf), describe: startOf };
    },
  },
  practitioner: {
    requirement: 'encounter.search-practitioner',
    choose: (b) => {
      const p = practitionersOf(b.encounter)[0];
      if (p === undefined) return 'the fixture Encounter has no practitioner';
      return { param: ['practitioner', p], matches: (r) => practitionersOf(r).includes(p), describe: practitionersOf };
    },
  },
};

/** The pairs judged together (each with `patient`): status with a date, with a class, and a practitioner with a date. */
const PAIRS: Array<[keyof typeof FILTERS, keyof typeof FILTERS]> = [
  ['status', 'date'],
  ['status', 'class'],
  ['practitioner', 'date'],
];

function combinationCheck(pair: [keyof typeof FILTERS, keyof typeof FILTERS]): CheckDefinition {
  const [a, b] = pair.map((name) => FILTERS[name]) as [Filter, Filter];
  return defineCheck({
    id: `encounter.search-combined-${pair.join('-')}`,
    title: `Encounter search patient + ${pair[0]} + ${pair[1]} returns exactly the patient's Encounters satisfying both`,
    area,
    level: 'MUST',
    requirements: [a.requirement, b.requirement],
    quote: 'Encounter search parameters: | Parameter | Type | Rules |',
    fixtures: ['encounter'],
    surfaces: { release: 'R4', resource: 'Encounter', parameters: `patient with ${pair[0]} and ${pair[1]} together` },
    async run(ctx) {
      const base = await baseline(ctx);
      const chosen = [a.choose(base), b.choose(base)];
      const missing = chosen.find((c) => typeof c === 'string');
      if (typeof missing === 'string') return ctx.fail(`${missing}, although the fixture is declared to have it`, { requirement: a.requirement, actual: null });
      const [x, y] = chosen as Array<Exclude<ReturnType<Filter['choose']>, string>>;
      const what = `${x!.param.join('=')}&${y!.param.join('=')}`;
      const results = await searchEncounters(ctx, [['patient', base.patientId], x!.param, y!.param]);
      if ((x!.surely ?? x!.matches)(base.encounter) && (y!.surely ?? y!.matches)(base.encounter) && (results.complete || results.resources.length === 0)) {
        ctx.check(
          results.resources.some((r) => idOf(r) === idOf(base.encounter)),
          `${what}: the fixture Encounter, which satisfies both filters, is not returned`,
          {
            requirement: b.requirement,
            expected: `entries including Encounter/${idOf(base.encounter)}`,
            actual: { entries: results.resources.length },
            exchange: results.first.exchange.id,
          },
        );
      }
      checkFiltered(ctx, {
        what,
        requirement: b.requirement,
        results,
        base: base.base,
        matches: (r) => referencedId(r.subject, 'Patient') === base.patientId && x!.matches(r) && y!.matches(r),
        surely: (r) => referencedId(r.subject, 'Patient') === base.patientId && (x!.surely ?? x!.matches)(r) && (y!.surely ?? y!.matches)(r),
        describe: (r) => ({ [x!.param[0]]: x!.describe(r), [y!.param[0]]: y!.describe(r) }),
      });
    },
  });
}

export const combinationChecks: CheckDefinition[] = PAIRS.map(combinationCheck);
