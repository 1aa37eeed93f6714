/**
 * Faults of the Encounter area: each plants one violation of one Encounter rule
 * (read shape, contained resources, diagnosis ranks, search parameters,
 * create/update answers, HPB-00138/00139/00142). Search faults are read by the
 * reference's search handlers through `searchQueryUnderFaults`.
 */
import { errorResponse, isObject, onPath, opIs, outcomeCode, recoded, type Json } from './edit.js';
import type { FaultDef, FaultRequest, FaultResponse } from './types.js';

/** Applies `edit` to every Encounter in a response body (a resource or a Bundle's entries). */
function editEncounters(res: FaultResponse, req: FaultRequest, edit: (e: Json) => void): FaultResponse {
  if (req.op?.resource !== 'Encounter' || res.status >= 300) return res;
  const body = res.body;
  if (isObject(body) && body.resourceType === 'Encounter') edit(body);
  if (isObject(body) && body.resourceType === 'Bundle' && Array.isArray(body.entry)) {
    for (const entry of body.entry) if (isObject(entry) && isObject(entry.resource) && entry.resource.resourceType === 'Encounter') edit(entry.resource);
  }
  return res;
}

const contained = (e: Json): Json[] => (Array.isArray(e.contained) ? (e.contained as Json[]) : []);
const diagnoses = (e: Json): Json[] => (Array.isArray(e.diagnosis) ? (e.diagnosis as Json[]) : []);

let renumbering = 0;

/** Date prefixes as a faulty search reads them (`bare` = no prefix, the day itself). */
const MISREAD_PREFIX: Record<string, string> = { eq: 'ge', ne: 'lt', gt: 'ge', ge: 'gt', lt: 'le', le: 'lt', bare: 'ge' };

/**
 * The search parameters as a reference with planted search faults reads them:
 * `<area>-search-ignores-<param>` drops a parameter; `<area>-date-<prefix>-misread`
 * reads a date prefix as another (`bare` for a date without prefix).
 */
export function searchQueryUnderFaults(query: URLSearchParams, faults: ReadonlySet<string>, area: 'encounter' | 'document-reference'): URLSearchParams {
  // A clean reference reads the query as sent (its callers only read it): no copy per search.
  if (faults.size === 0) return query;
  const read = new URLSearchParams(query);
  for (const name of new Set(read.keys())) if (faults.has(`${area}-search-ignores-${name}`)) read.delete(name);
  const dates = read.getAll('date').map((value) => {
    const prefix = /^[a-z]{2}/.test(value) ? value.slice(0, 2) : 'bare';
    if (!faults.has(`${area}-date-${prefix}-misread`)) return value;
    return `${MISREAD_PREFIX[prefix] ?? prefix}${prefix === 'bare' ? value : value.slice(2)}`;
  });
  read.delete('date');
  for (const d of dates) read.append('date', d);
  return read;
}

const ignoredParam = (param: string): FaultDef => ({
  name: `encounter-search-ignores-${param}`,
  area: 'encounter',
  violates: [`encounter.search-${param === '_id' ? 'id' : param}`],
  checks: [`encounter.search-${param === '_id' ? 'id' : param}`],
  symptom: `Encounter search ignores the ${param} parameter and returns unfiltered results.`,
});

const misreadPrefix = (prefix: string): FaultDef => ({
  name: `encounter-date-${prefix}-misread`,
  area: 'encounter',
  violates: [prefix === 'bare' ? 'encounter.search-date-day' : 'encounter.search-date-prefixes'],
  checks: [prefix === 'bare' ? 'encounter.search-date-day' : `encounter.search-date-${prefix}`],
  symptom:
    prefix === 'bare'
      ? `Encounter search reads a date without prefix as ${MISREAD_PREFIX.bare}.`
      : `Encounter search reads the date prefix ${prefix} as ${MISREAD_PREFIX[prefix]}.`,
});

export const faults: FaultDef[] = [
  {
    name: 'encounter-read-without-id',
    area: 'encounter',
    violates: ['encounter.read-shape'],
    checks: ['encounter.read-shape'],
    symptom: 'Encounter read responses lack the id.',
    transformResponse: (res, req) => (req.op?.operationId === 'Encounter.read' ? editEncounters(res, req, (e) => delete e.id) : res),
  },
  {
    name: 'encounter-status-outside-values',
    area: 'encounter',
    violates: ['encounter.status-values'],
    checks: ['encounter.status-values'],
    symptom: 'Encounters are emitted with status "arrived", outside planned/in-progress/finished/cancelled.',
    transformResponse: (res, req) =>
      editEncounters(res, req, (e) => {
        e.status = 'arrived';
      }),
  },
  {
    name: 'encounter-class-without-display',
    area: 'encounter',
    violates: ['encounter.class-coding'],
    checks: ['encounter.class-coding'],
    symptom: 'Encounter.class is emitted without display.',
    transformResponse: (res, req) =>
      editEncounters(res, req, (e) => {
        if (isObject(e.class)) delete e.class.display;
      }),
  },
  {
    name: 'encounter-subject-not-patient',
    area: 'encounter',
    violates: ['encounter.subject-patient-reference'],
    checks: ['encounter.subject-patient-reference'],
    symptom: 'Encounter.subject references Group/<id> instead of Patient/<id>.',
    transformResponse: (res, req) =>
      editEncounters(res, req, (e) => {
        if (isObject(e.subject) && typeof e.subject.reference === 'string') e.subject.reference = e.subject.reference.replace(/^Patient\//, 'Group/');
      }),
  },
  {
    name: 'encounter-participant-as-actor',
    area: 'encounter',
    violates: ['encounter.participant-individual'],
    checks: ['encounter.participant-individual'],
    symptom: 'Encounter.participant items hold the practitioner in `actor` (R5 spelling) instead of `individual`.',
    transformResponse: (res, req) =>
      editEncounters(res, req, (e) => {
        for (const p of Array.isArray(e.participant) ? (e.participant as Json[]) : []) {
          p.actor = p.individual;
          delete p.individual;
        }
      }),
  },
  {
    name: 'encounter-period-start-not-datetime',
    area: 'encounter',
    violates: ['encounter.period-shape'],
    checks: ['encounter.period-shape'],
    symptom: 'Encounter.period.start is emitted as a day/month/year text, not an ISO 8601 date-time.',
    transformResponse: (res, req) =>
      editEncounters(res, req, (e) => {
        if (isObject(e.period) && typeof e.period.start === 'string') {
          const [y, m, d] = e.period.start.slice(0, 10).split('-');
          e.period.start = `${d}/${m}/${y}`;
        }
      }),
  },
  {
    name: 'encounter-contained-ids-unstable',
    area: 'encounter',
    violates: ['encounter.contained-stable-ids'],
    checks: ['encounter.contained-stable-ids'],
    symptom: 'Contained Condition ids are renumbered on every response (condition-N shifts between two reads).',
    transformResponse: (res, req) =>
      editEncounters(res, req, (e) => {
        const shift = ++renumbering * 10;
        const rename = (id: string) => id.replace(/^(#?)condition-(\d+)$/, (_m, hash: string, n: string) => `${hash}condition-${Number(n) + shift}`);
        for (const c of contained(e)) if (typeof c.id === 'string') c.id = rename(c.id);
        for (const d of diagnoses(e))
          if (isObject(d.condition) && typeof d.condition.reference === 'string') d.condition.reference = rename(d.condition.reference);
      }),
  },
  {
    name: 'encounter-care-plan-id-renamed',
    area: 'encounter',
    violates: ['encounter.contained-care-plan'],
    checks: ['encounter.contained-care-plan'],
    symptom: 'The contained CarePlan is emitted with id "plan-1" instead of "care-plan".',
    transformResponse: (res, req) =>
      editEncounters(res, req, (e) => {
        for (const c of contained(e)) if (c.id === 'care-plan') c.id = 'plan-1';
      }),
  },
  {
    name: 'encounter-summary-not-clinical-impression',
    area: 'encounter',
    violates: ['encounter.contained-subjective-objective-summary'],
    checks: ['encounter.contained-subjective-objective-summary'],
    symptom: 'The contained #subjective-objective-summary is an Observation, not a ClinicalImpression.',
    transformResponse: (res, req) =>
      editEncounters(res, req, (e) => {
        for (const c of contained(e)) if (c.id === 'subjective-objective-summary') c.resourceType = 'Observation';
      }),
  },
  {
    name: 'encounter-impression-loinc-missing',
    area: 'encounter',
    violates: ['encounter.contained-diagnostic-impression'],
    checks: ['encounter.contained-diagnostic-impression'],
    symptom: 'The contained #diagnostic-impression ClinicalImpression has no LOINC 51848-0 code.',
    transformResponse: (res, req) =>
      editEncounters(res, req, (e) => {
        for (const c of contained(e)) if (c.id === 'diagnostic-impression') delete c.code;
      }),
  },
  {
    name: 'encounter-diagnosis-external-condition',
    area: 'encounter',
    violates: ['encounter.diagnosis-references-contained-condition'],
    checks: ['encounter.diagnosis-contained-conditions'],
    symptom: 'Encounter.diagnosis[].condition references Condition/<uuid> instead of a contained Condition.',
    transformResponse: (res, req) =>
      editEncounters(res, req, (e) => {
        for (const d of diagnoses(e)) {
          if (isObject(d.condition)) d.condition.reference = 'Condition/0b6d9a3e-8a54-4a34-9b7e-0d8f3c2a9e11';
        }
      }),
  },
  {
    name: 'encounter-diagnosis-ranks-descending',
    area: 'encounter',
    violates: ['encounter.diagnosis-rank-secondary-order'],
    checks: ['encounter.diagnoses-round-trip'],
    symptom: 'Secondary diagnoses are ranked in reverse of their stored order (ranks descend).',
    transformResponse: (res, req) =>
      editEncounters(res, req, (e) => {
        const secondaries = diagnoses(e).filter((d) => typeof d.rank === 'number' && d.rank >= 2);
        const ranks = secondaries.map((d) => d.rank as number).reverse();
        secondaries.forEach((d, i) => {
          d.rank = ranks[i];
        });
      }),
  },
  {
    name: 'encounter-search-bundle-collection',
    area: 'encounter',
    violates: ['encounter.search-returns-bundle'],
    checks: ['encounter.search-returns-bundle'],
    symptom: 'Encounter search answers a Bundle of type collection instead of searchset.',
    transformResponse: (res, req) => {
      if (req.op?.operationId === 'Encounter.search' && isObject(res.body) && res.body.resourceType === 'Bundle') res.body.type = 'collection';
      return res;
    },
  },
  ...['_id', 'patient', 'practitioner', 'status', 'class'].map(ignoredParam),
  ...['eq', 'ne', 'gt', 'ge', 'lt', 'le', 'bare'].map(misreadPrefix),
  {
    name: 'encounter-create-without-id',
    area: 'encounter',
    violates: ['encounter.create-returns-resource'],
    checks: ['encounter.create-returns-encounter'],
    symptom: 'A successful Encounter create answers the Encounter without the server-assigned id.',
    transformResponse: (res, req) => (req.op?.operationId === 'Encounter.create' ? editEncounters(res, req, (e) => delete e.id) : res),
  },
  {
    name: 'encounter-update-empty-body',
    area: 'encounter',
    violates: ['encounter.update-returns-resource'],
    checks: ['encounter.update-returns-encounter'],
    symptom: 'A successful Encounter update answers an empty body.',
    transformResponse: (res, req) => (req.op?.operationId === 'Encounter.update' && res.status < 300 ? { ...res, body: '' } : res),
  },
  {
    name: 'encounter-validation-wrong-code',
    area: 'encounter',
    violates: ['encounter.create-400', 'encounter.create-422', 'encounter.update-400', 'encounter.update-422'],
    checks: ['encounter.create-invalid-400', 'encounter.create-unprocessable-422', 'encounter.update-invalid-400', 'encounter.update-unprocessable-422'],
    symptom: 'Encounter create/update validation errors carry SVC-00003 instead of HPB-00101.',
    transformResponse: (res, req) =>
      req.op?.resource === 'Encounter' && outcomeCode(res.body) === 'HPB-00101' ? { ...res, body: recoded(res.body, 'SVC-00003') } : res,
  },
  {
    name: 'encounter-not-found-wrong-code',
    area: 'encounter',
    violates: ['encounter.read-404', 'encounter.update-404'],
    checks: ['encounter.read-unknown-404', 'encounter.update-unknown-404'],
    symptom: 'An unknown Encounter id gives 404 with the generic SVC-00002 instead of HPB-00102.',
    transformResponse: (res, req) =>
      req.op?.resource === 'Encounter' && res.status === 404 && outcomeCode(res.body) === 'HPB-00102' ? { ...res, body: recoded(res.body, 'SVC-00002') } : res,
  },
  {
    name: 'encounter-appointment-conflict-not-enforced',
    area: 'encounter',
    violates: ['encounter.appointment-active-encounter-409', 'catalog.hpb-00138'],
    checks: ['encounter.appointment-active-encounter-409'],
    symptom: 'An Encounter for an appointment that already has an active encounter is created.',
  },
  {
    name: 'encounter-registration-window-400',
    area: 'encounter',
    violates: ['encounter.registration-window-422', 'catalog.hpb-00139'],
    checks: ['encounter.registration-window-422'],
    symptom: 'An Encounter date outside the registration window is refused with 400 instead of 422.',
    transformResponse: (res) => (res.status === 422 && outcomeCode(res.body) === 'HPB-00139' ? errorResponse(res, 400, 'HPB-00139') : res),
  },
  {
    name: 'encounter-normativa-not-enforced',
    area: 'encounter',
    violates: ['catalog.hpb-00142'],
    checks: ['encounter.normativa-incomplete-422'],
    symptom: 'A consultation is started for a patient whose normativa data is incomplete.',
  },
  {
    name: 'encounter-registration-window-500',
    area: 'encounter',
    violates: ['encounter.registration-window-422', 'catalog.hpb-00139'],
    checks: ['encounter.registration-window-422'],
    symptom: 'An Encounter date outside the registration window gives 500 SVC-00001 instead of 422 HPB-00139.',
    transformResponse: (res) => (res.status === 422 && outcomeCode(res.body) === 'HPB-00139' ? errorResponse(res, 500, 'SVC-00001') : res),
  },
  {
    name: 'encounter-far-future-accepted',
    area: 'encounter',
    violates: ['encounter.registration-window-422', 'catalog.hpb-00139'],
    checks: ['encounter.registration-window-422'],
    symptom: 'Only past dates are held to the registration window: an Encounter dated 2090 is accepted.',
  },
  {
    name: 'encounter-unknown-id-500',
    area: 'encounter',
    violates: ['encounter.read-404', 'encounter.update-404'],
    checks: ['encounter.read-unknown-404', 'encounter.update-unknown-404'],
    symptom: 'An unknown Encounter id gives 500 SVC-00001 (an unhandled lookup miss) instead of 404 HPB-00102.',
    transformResponse: (res, req) => (req.op?.resource === 'Encounter' && res.status === 404 ? errorResponse(res, 500, 'SVC-00001') : res),
  },
  {
    name: 'encounter-write-keeps-first-participant',
    area: 'encounter',
    violates: ['encounter.create-read-back'],
    checks: ['encounter.create-round-trip'],
    symptom: 'Creates and updates silently keep only the first participant of the body.',
  },
  {
    name: 'encounter-write-drops-period-end',
    area: 'encounter',
    violates: ['encounter.create-read-back'],
    checks: ['encounter.create-round-trip'],
    symptom: 'Creates and updates silently drop period.end.',
  },
  {
    name: 'encounter-update-drops-reason',
    area: 'encounter',
    violates: ['encounter.update-read-back'],
    checks: ['encounter.update-unchanged-round-trip'],
    symptom: 'An update silently loses reasonCode, even when the body carries it unchanged.',
  },
  {
    name: 'encounter-search-stale-version',
    area: 'encounter',
    violates: ['pagination.entry-is-read'],
    checks: ['encounter.search-entry-matches-read'],
    symptom: 'Search entries show the version each Encounter was created with, not the current one a read returns.',
  },
  {
    name: 'encounter-read-without-status',
    area: 'encounter',
    violates: ['encounter.status-required'],
    checks: ['encounter.read-shape'],
    symptom: 'Encounter reads omit status.',
    transformResponse: onPath(opIs('Encounter.read'), ({ status: _s, ...rest }) => rest),
  },
  {
    name: 'encounter-read-without-class',
    area: 'encounter',
    violates: ['encounter.class-required'],
    checks: ['encounter.read-shape'],
    symptom: 'Encounter reads omit class.',
    transformResponse: onPath(opIs('Encounter.read'), ({ class: _c, ...rest }) => rest),
  },
  {
    name: 'encounter-read-wrong-resource-type',
    area: 'encounter',
    violates: ['encounter.resource-type'],
    checks: ['encounter.read-shape'],
    symptom: 'Encounter reads say resourceType "EpisodeOfCare".',
    transformResponse: onPath(opIs('Encounter.read'), (b) => ({ ...b, resourceType: 'EpisodeOfCare' })),
  },
  {
    name: 'encounter-read-status-203',
    area: 'encounter',
    violates: ['encounter.read-returns-200'],
    checks: ['encounter.read-shape'],
    symptom: 'Encounter reads answer 203 instead of 200.',
    transformResponse: (res, req) => (opIs('Encounter.read')(req) && res.status === 200 ? { ...res, status: 203 } : res),
  },
  {
    name: 'encounter-diagnosis-condition-missing',
    area: 'encounter',
    violates: ['encounter.contained-condition-per-diagnosis'],
    checks: ['encounter.diagnosis-contained-conditions'],
    symptom: 'An Encounter drops the contained Condition of its last diagnosis while the diagnosis still references it.',
    transformResponse: onPath(opIs('Encounter.read'), (b) => {
      const diagnoses = (b.diagnosis as Json[] | undefined) ?? [];
      const last = diagnoses[diagnoses.length - 1];
      const ref = String((last?.condition as Json | undefined)?.reference ?? '').replace(/^#/, '');
      return ref ? { ...b, contained: ((b.contained as Json[] | undefined) ?? []).filter((c) => c.id !== ref) } : b;
    }),
  },
  {
    name: 'encounter-no-primary-diagnosis',
    area: 'encounter',
    violates: ['encounter.diagnosis-rank-primary'],
    checks: ['encounter.diagnosis-ranks'],
    symptom: 'The primary diagnosis carries rank 2: no diagnosis has rank 1.',
    transformResponse: onPath(opIs('Encounter.read'), (b) => ({
      ...b,
      diagnosis: ((b.diagnosis as Json[] | undefined) ?? []).map((d) => (d.rank === 1 ? { ...d, rank: 2 } : d)),
    })),
  },
  {
    name: 'encounter-period-start-shifted-hour',
    area: 'encounter',
    violates: ['encounter.create-read-back', 'encounter.update-read-back'],
    checks: ['encounter.create-round-trip', 'encounter.update-unchanged-round-trip'],
    symptom:
      'Creates and updates store period.start with its wall-clock time kept and its UTC offset moved an hour west (10:15+02:00 reads back as 10:15+01:00): a plausible spelling, another instant.',
  },
  {
    name: 'encounter-update-drops-summaries',
    area: 'encounter',
    violates: ['encounter.update-read-back'],
    checks: ['encounter.fixture-update-as-read-round-trip'],
    symptom:
      'An update keeps the diagnoses and their contained Conditions but loses the contained summaries and care plan: a PUT of a rich fixture Encounter as read drops them (records the suite creates carry none).',
  },
  {
    name: 'encounter-search-drops-care-plan',
    area: 'encounter',
    violates: ['pagination.entry-is-read'],
    checks: ['encounter.fixture-search-entry-matches-read'],
    symptom: 'Search entries lack the contained #care-plan that the read of the same Encounter carries.',
  },
  {
    name: 'encounter-search-date-ignored-with-status',
    area: 'encounter',
    violates: ['encounter.search-date-day'],
    symptom: 'An Encounter search with both status and date ignores date (date alone, and status alone, filter correctly).',
    checks: ['encounter.search-combined-status-date'],
  },
];
