/**
 * MedicationRequest search by patient and encounter together (spec: Endpoints > MedicationRequest (R4),
 * search parameters): each parameter is judged alone in read-search.ts; together they must return
 * exactly the patient's MedicationRequests of that encounter.
 */
import { type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import { searchMedicationRequests } from '../../src/service/index.js';
import { referenceOf, sameReference } from './support.js';

const MAX_PAGES = 5;

export const combinationChecks: CheckDefinition[] = [
  defineCheck({
    id: 'medication-request.search-by-patient-and-encounter',
    title: "a search by patient and encounter together returns exactly the patient's MedicationRequests of that encounter",
    area: 'medication-request',
    level: 'MUST',
    requirements: ['medication-request.search-by-encounter', 'medication-request.search-by-patient'],
    quote: 'At least one of `patient` or `encounter` must be supplied.',
    fixtures: ['patient', 'encounter'],
    surfaces: { release: 'R4', resource: 'MedicationRequest', parameters: 'patient with encounter (each alone: search-by-patient, search-by-encounter)' },
    async run(ctx) {
      const patient = ctx.fixture('patient');
      const encounter = ctx.fixture('encounter');
      const base = await searchMedicationRequests(ctx, { patient, _count: '100' }, MAX_PAGES);
      const both = await searchMedicationRequests(ctx, { patient, encounter, _count: '100' }, MAX_PAGES);
      const ofEncounter = (r: Record<string, unknown>) => sameReference(referenceOf(r.encounter), `Encounter/${encounter}`);
      const ofPatient = (r: Record<string, unknown>) => sameReference(referenceOf(r.subject), `Patient/${patient}`);
      const wrong = both.resources.filter((r) => !ofEncounter(r) || !ofPatient(r));
      ctx.check(
        wrong.length === 0,
        `patient=${patient}&encounter=${encounter}: ${wrong.length} of ${both.resources.length} results are of another encounter or patient`,
        {
          requirement: 'medication-request.search-by-encounter',
          expected: `subject Patient/${patient} and encounter Encounter/${encounter}`,
          actual: wrong.slice(0, 5).map((r) => ({ id: r.id, encounter: referenceOf(r.encounter), subject: referenceOf(r.subject) })),
          exchange: both.pages[0]!.exchange.id,
        },
      );
      if (!base.complete || !both.complete) {
        ctx.observe('medication-request.search-by-patient-and-encounter.completeness', 'not checked', 'more results than the page cap');
        return;
      }
      const returned = new Set(both.resources.map((r) => r.id));
      const missing = base.resources.filter((r) => ofEncounter(r) && !returned.has(r.id));
      ctx.check(
        missing.length === 0,
        `patient=${patient}&encounter=${encounter}: ${missing.length} of the patient's MedicationRequests of that encounter are missing`,
        {
          requirement: 'medication-request.search-by-encounter',
          expected: 'every MedicationRequest of the patient and encounter',
          actual: missing.slice(0, 5).map((r) => r.id),
          exchange: both.pages[0]!.exchange.id,
        },
      );
      if (base.resources.filter(ofEncounter).length === 0)
        ctx.skip('no MedicationRequest of the patient fixture references the encounter fixture, so the combined filter cannot be seen at work');
    },
  }),
];
