/**
 * Encounter read: the shape (resourceType, id, status, class, subject,
 * participant, period), the contained resources with stable local ids, and the
 * diagnosis ranks (spec: Resources and their fields > Encounter).
 */
import { defineCheck, type CheckDefinition } from '../../src/engine/check.js';
import { expectError, isObject, UUID_PATTERN } from '../../src/engine/expect.js';
import { randomUUID } from 'node:crypto';
import {
  area, containedOf, DATE_TIME, diagnosesOf, DIAGNOSTIC_IMPRESSION_CODE, localId, LOINC, readEncounter, RS, STATUSES,
} from './support.js';
import { codingsOf, type Json } from './search.js';

/** Contained ids the spec lists: condition-N and the three summaries. */
const LISTED_ID = /^(condition-\d+|subjective-objective-summary|diagnostic-impression|care-plan)$/;

/** The fixture Encounters (those the config names). */
async function fixtureEncounters(ctx: Parameters<CheckDefinition['run']>[0]): Promise<Array<{ key: string; encounter: Json; exchange: string }>> {
  const out = [];
  for (const key of ['encounter', 'encounterInProgress']) {
    if (!ctx.hasFixture(key)) continue;
    const { res, encounter } = await readEncounter(ctx, ctx.fixture(key));
    out.push({ key, encounter, exchange: res.exchange.id });
  }
  return out;
}

/** Checks the contained resource with this local id, where a fixture Encounter carries one. */
function containedCheck(opts: { slug: string; localId: string; resourceType: string; requirement: string; quote: string; title: string; extra?: (c: Json) => string | undefined }): CheckDefinition {
  return defineCheck({
    id: `encounter.${opts.slug}`,
    title: opts.title,
    area,
    level: 'MUST',
    requirements: [opts.requirement],
    quote: opts.quote,
    fixtures: ['encounter'],
    async run(ctx) {
      let seen = 0;
      for (const { key, encounter, exchange } of await fixtureEncounters(ctx)) {
        for (const c of containedOf(encounter)) {
          const hasId = localId(c.id) === opts.localId;
          // Also a resource of the type under an id the spec does not list (e.g. a renamed #care-plan).
          if (!hasId && (c.resourceType !== opts.resourceType || LISTED_ID.test(localId(c.id)))) continue;
          seen++;
          ctx.check(hasId && c.resourceType === opts.resourceType, `${key}: contained ${String(c.resourceType)} #${localId(c.id)}: expected a ${opts.resourceType} with id ${opts.localId}`, {
            requirement: opts.requirement,
            expected: { resourceType: opts.resourceType, id: opts.localId },
            actual: { resourceType: c.resourceType, id: c.id },
            exchange,
          });
          const problem = hasId ? opts.extra?.(c) : undefined;
          if (problem) ctx.check(false, `${key}: #${opts.localId} ${problem}`, { requirement: opts.requirement, actual: c, exchange });
        }
      }
      if (seen === 0) ctx.skip(`no fixture Encounter carries a contained ${opts.resourceType} #${opts.localId}`);
    },
  });
}

export const readChecks: CheckDefinition[] = [
  defineCheck({
    id: 'encounter.read-shape',
    title: 'an Encounter read answers 200 with resourceType, id, status and class',
    area,
    level: 'MUST',
    requirements: ['encounter.read-returns-200', 'encounter.resource-type', 'encounter.read-shape', 'encounter.status-required', 'encounter.class-required'],
    quote: 'The Encounter read response has the shape: resourceType, id, status, class, subject, participant, period.',
    fixtures: ['encounter'],
    async run(ctx) {
      const id = ctx.fixture('encounter');
      const { res, encounter } = await readEncounter(ctx, id);
      const exchange = res.exchange.id;
      ctx.check(encounter.resourceType === 'Encounter', 'resourceType is not Encounter', { requirement: 'encounter.resource-type', expected: 'Encounter', actual: encounter.resourceType, exchange });
      ctx.check(encounter.id === id, 'id is not the id that was read', { requirement: 'encounter.read-shape', expected: id, actual: encounter.id, exchange });
      ctx.check(typeof encounter.status === 'string', 'status is missing', { requirement: 'encounter.status-required', expected: 'a status', actual: encounter.status, exchange });
      ctx.check(isObject(encounter.class), 'class is missing or not an object', { requirement: 'encounter.class-required', expected: 'a Coding', actual: encounter.class, exchange });
      const issues = ctx.validate('R4', encounter);
      ctx.check(issues.length === 0, `the Encounter is not valid FHIR R4: ${issues.slice(0, 3).map((i) => `${i.path}: ${i.message}`).join('; ')}`, {
        requirement: 'encounter.read-shape',
        expected: 'valid against the HL7 R4 schema',
        actual: issues.slice(0, 5),
        exchange,
      });
    },
  }),
  defineCheck({
    id: 'encounter.read-unknown-404',
    title: 'an Encounter read of an unknown id gives 404 HPB-00102',
    area,
    level: 'MUST',
    requirements: ['encounter.read-404'],
    quote: 'GET `/fhir/R4/Encounter/{id}` | `system/Encounter.rs` | none | Encounter (200) | 401 `HPB-00106`, 403 `HPB-00104`, 404 `HPB-00102`',
    async run(ctx) {
      const op = ctx.operation('Encounter', 'read', 'R4');
      const res = await ctx.fhir({ scopes: RS, url: ctx.path(op.path, { id: randomUUID() }) });
      expectError(res, { status: 404, code: 'HPB-00102', requirement: 'encounter.read-404' });
    },
  }),
  defineCheck({
    id: 'encounter.status-values',
    title: 'Encounter status is one of planned, in-progress, finished, cancelled',
    area,
    level: 'MUST',
    requirements: ['encounter.status-values', 'encounter.status-required'],
    quote: 'Allowed values known from search: `planned`, `in-progress`, `finished`, `cancelled`.',
    fixtures: ['encounter'],
    async run(ctx) {
      for (const { key, encounter, exchange } of await fixtureEncounters(ctx)) {
        ctx.check(STATUSES.includes(encounter.status as string), `${key}: status ${JSON.stringify(encounter.status)} is not one of ${STATUSES.join(', ')}`, {
          requirement: 'encounter.status-values',
          expected: STATUSES,
          actual: encounter.status,
          exchange,
        });
      }
    },
  }),
  defineCheck({
    id: 'encounter.class-coding',
    title: 'Encounter class is a Coding with system, code and display',
    area,
    level: 'MUST',
    requirements: ['encounter.class-coding', 'encounter.class-required'],
    quote: 'Coding with `system`, `code`, `display`.',
    fixtures: ['encounter'],
    async run(ctx) {
      for (const { key, encounter, exchange } of await fixtureEncounters(ctx)) {
        const c = isObject(encounter.class) ? encounter.class : {};
        const missing = ['system', 'code', 'display'].filter((k) => typeof c[k] !== 'string' || c[k] === '');
        ctx.check(missing.length === 0, `${key}: class lacks ${missing.join(', ')}`, {
          requirement: 'encounter.class-coding',
          expected: 'a Coding with system, code, display',
          actual: encounter.class,
          exchange,
        });
      }
    },
  }),
  defineCheck({
    id: 'encounter.subject-patient-reference',
    title: 'Encounter subject is a Patient/<uuid> reference with an optional display',
    area,
    level: 'MUST',
    requirements: ['encounter.subject-patient-reference'],
    quote: 'Patient reference, optional `display`.',
    fixtures: ['encounter'],
    async run(ctx) {
      let seen = 0;
      for (const { key, encounter, exchange } of await fixtureEncounters(ctx)) {
        if (encounter.subject === undefined) continue;
        seen++;
        const s = isObject(encounter.subject) ? encounter.subject : {};
        const ref = typeof s.reference === 'string' ? s.reference : '';
        ctx.check(/^Patient\//.test(ref) && UUID_PATTERN.test(ref.slice('Patient/'.length)), `${key}: subject.reference ${JSON.stringify(s.reference)} is not Patient/<uuid>`, {
          requirement: 'encounter.subject-patient-reference',
          expected: 'Patient/<uuid>',
          actual: encounter.subject,
          exchange,
        });
        ctx.check(s.display === undefined || typeof s.display === 'string', `${key}: subject.display is not a string`, { requirement: 'encounter.subject-patient-reference', actual: s.display, exchange });
      }
      if (seen === 0) ctx.skip('no fixture Encounter has a subject');
    },
  }),
  defineCheck({
    id: 'encounter.participant-individual',
    title: 'Encounter participants hold individual, a Practitioner/<uuid> reference with an optional display',
    area,
    level: 'MUST',
    requirements: ['encounter.participant-individual'],
    quote: 'Items hold `individual`, a practitioner reference with optional `display`.',
    fixtures: ['encounter'],
    async run(ctx) {
      let seen = 0;
      for (const { key, encounter, exchange } of await fixtureEncounters(ctx)) {
        const items = Array.isArray(encounter.participant) ? encounter.participant : [];
        items.forEach((p: unknown, i: number) => {
          seen++;
          const ind = isObject(p) && isObject(p.individual) ? p.individual : undefined;
          const ref = typeof ind?.reference === 'string' ? ind.reference : '';
          ctx.check(/^Practitioner\//.test(ref) && UUID_PATTERN.test(ref.slice('Practitioner/'.length)), `${key}: participant[${i}].individual is not a Practitioner/<uuid> reference`, {
            requirement: 'encounter.participant-individual',
            expected: { individual: { reference: 'Practitioner/<uuid>' } },
            actual: p,
            exchange,
          });
          ctx.check(ind?.display === undefined || typeof ind.display === 'string', `${key}: participant[${i}].individual.display is not a string`, {
            requirement: 'encounter.participant-individual',
            actual: ind?.display,
            exchange,
          });
        });
      }
      if (seen === 0) ctx.skip('no fixture Encounter has a participant');
    },
  }),
  defineCheck({
    id: 'encounter.period-shape',
    title: 'Encounter period has a date-time start and an optional date-time end',
    area,
    level: 'MUST',
    requirements: ['encounter.period-shape'],
    quote: '`start` and optional `end`, date-times.',
    fixtures: ['encounter'],
    async run(ctx) {
      let seen = 0;
      for (const { key, encounter, exchange } of await fixtureEncounters(ctx)) {
        if (encounter.period === undefined) continue;
        seen++;
        const p = isObject(encounter.period) ? encounter.period : {};
        ctx.check(typeof p.start === 'string' && DATE_TIME.test(p.start), `${key}: period.start ${JSON.stringify(p.start)} is not an ISO 8601 date-time`, {
          requirement: 'encounter.period-shape',
          expected: 'YYYY-MM-DDThh:mm[:ss][offset]',
          actual: p.start,
          exchange,
        });
        ctx.check(p.end === undefined || (typeof p.end === 'string' && DATE_TIME.test(p.end)), `${key}: period.end ${JSON.stringify(p.end)} is not an ISO 8601 date-time`, {
          requirement: 'encounter.period-shape',
          expected: 'absent or a date-time',
          actual: p.end,
          exchange,
        });
      }
      if (seen === 0) ctx.skip('no fixture Encounter has a period');
    },
  }),
  defineCheck({
    id: 'encounter.contained-stable-ids',
    title: 'contained resources carry the listed local ids, the same on two reads',
    area,
    level: 'MUST',
    requirements: ['encounter.contained-stable-ids'],
    quote: 'Supporting resources emitted with stable local ids, listed below.',
    fixtures: ['encounter'],
    async run(ctx) {
      const id = ctx.fixture('encounter');
      const ids = (e: Json) => containedOf(e).map((c) => `${String(c.resourceType)}#${localId(c.id)}`);
      const first = await readEncounter(ctx, id);
      const second = await readEncounter(ctx, id);
      const a = ids(first.encounter);
      const b = ids(second.encounter);
      if (a.length === 0) ctx.skip('the fixture Encounter has no contained resources');
      const sameVersion = JSON.stringify((first.encounter.meta as Json | undefined)?.versionId) === JSON.stringify((second.encounter.meta as Json | undefined)?.versionId);
      if (sameVersion) {
        ctx.check(JSON.stringify(a) === JSON.stringify(b), 'two reads of the same version give different contained ids', {
          requirement: 'encounter.contained-stable-ids',
          expected: a,
          actual: b,
          exchange: second.res.exchange.id,
        });
      }
      const unlisted = containedOf(first.encounter).filter((c) => !LISTED_ID.test(localId(c.id)));
      ctx.check(unlisted.length === 0, `contained ids outside the listed ones: ${unlisted.map((c) => JSON.stringify(c.id)).join(', ')}`, {
        requirement: 'encounter.contained-stable-ids',
        expected: '#condition-N, #subjective-objective-summary, #diagnostic-impression, #care-plan',
        actual: unlisted.map((c) => c.id),
        exchange: first.res.exchange.id,
      });
    },
  }),
  defineCheck({
    id: 'encounter.diagnosis-contained-conditions',
    title: 'each diagnosis references its own contained Condition #condition-N',
    area,
    level: 'MUST',
    requirements: ['encounter.diagnosis-references-contained-condition', 'encounter.contained-condition-per-diagnosis'],
    quote: 'Each item references a contained `Condition`.',
    fixtures: ['encounter'],
    async run(ctx) {
      const { res, encounter } = await readEncounter(ctx, ctx.fixture('encounter'));
      const exchange = res.exchange.id;
      const diagnoses = diagnosesOf(encounter);
      if (diagnoses.length === 0) ctx.skip('the fixture Encounter has no diagnosis');
      const contained = new Map(containedOf(encounter).map((c) => [localId(c.id), c]));
      const referenced = new Set<string>();
      diagnoses.forEach((d, i) => {
        const ref = isObject(d.condition) && typeof d.condition.reference === 'string' ? d.condition.reference : '';
        const target = ref.startsWith('#') ? contained.get(ref.slice(1)) : undefined;
        ctx.check(target?.resourceType === 'Condition', `diagnosis[${i}].condition ${JSON.stringify(ref)} does not reference a contained Condition`, {
          requirement: 'encounter.diagnosis-references-contained-condition',
          expected: '#condition-N naming a contained Condition',
          actual: d.condition,
          exchange,
        });
        ctx.check(/^#condition-\d+$/.test(ref), `diagnosis[${i}].condition ${JSON.stringify(ref)} is not #condition-N`, {
          requirement: 'encounter.contained-condition-per-diagnosis',
          expected: '#condition-N',
          actual: ref,
          exchange,
        });
        ctx.check(!referenced.has(ref), `two diagnoses reference ${ref}`, { requirement: 'encounter.contained-condition-per-diagnosis', actual: ref, exchange });
        referenced.add(ref);
      });
      const conditions = containedOf(encounter).filter((c) => c.resourceType === 'Condition');
      ctx.check(conditions.length === diagnoses.length, `${conditions.length} contained Conditions for ${diagnoses.length} diagnoses`, {
        requirement: 'encounter.contained-condition-per-diagnosis',
        expected: diagnoses.length,
        actual: conditions.length,
        exchange,
      });
    },
  }),
  containedCheck({
    slug: 'contained-subjective-objective-summary',
    title: 'the contained #subjective-objective-summary is a ClinicalImpression',
    localId: 'subjective-objective-summary',
    resourceType: 'ClinicalImpression',
    requirement: 'encounter.contained-subjective-objective-summary',
    quote: '`#subjective-objective-summary` | ClinicalImpression | SOAP subjective/objective summary.',
  }),
  containedCheck({
    slug: 'contained-diagnostic-impression',
    title: 'the contained #diagnostic-impression is a ClinicalImpression coded LOINC 51848-0',
    localId: 'diagnostic-impression',
    resourceType: 'ClinicalImpression',
    requirement: 'encounter.contained-diagnostic-impression',
    quote: '`#diagnostic-impression` | ClinicalImpression | Diagnostic impression, tagged with LOINC code 51848-0.',
    extra: (c) =>
      codingsOf(c.code).some((coding) => coding.system === LOINC && coding.code === DIAGNOSTIC_IMPRESSION_CODE)
        ? undefined
        : `has no code ${LOINC}|${DIAGNOSTIC_IMPRESSION_CODE}`,
  }),
  containedCheck({
    slug: 'contained-care-plan',
    title: 'the contained #care-plan is a CarePlan',
    localId: 'care-plan',
    resourceType: 'CarePlan',
    requirement: 'encounter.contained-care-plan',
    quote: '`#care-plan` | CarePlan | Follow-up plan.',
  }),
  defineCheck({
    id: 'encounter.diagnosis-ranks',
    title: 'diagnosis rank 1 is the only primary; secondary ranks 2.. follow in order',
    area,
    level: 'MUST',
    requirements: ['encounter.diagnosis-rank-primary', 'encounter.diagnosis-rank-secondary-order'],
    quote: '`rank` 1 marks the primary diagnosis. Ranks 2 and above mark secondary diagnoses in stored order.',
    fixtures: ['encounter'],
    async run(ctx) {
      const { res, encounter } = await readEncounter(ctx, ctx.fixture('encounter'));
      const exchange = res.exchange.id;
      const ranks = diagnosesOf(encounter).map((d) => d.rank).filter((r) => r !== undefined);
      if (ranks.length === 0) ctx.skip('the fixture Encounter has no ranked diagnosis');
      ctx.check(ranks.every((r) => Number.isInteger(r) && (r as number) >= 1), 'a rank is not a positive integer', {
        requirement: 'encounter.diagnosis-rank-primary',
        expected: 'integers >= 1',
        actual: ranks,
        exchange,
      });
      ctx.check(ranks.filter((r) => r === 1).length <= 1, 'more than one diagnosis has rank 1', { requirement: 'encounter.diagnosis-rank-primary', expected: 'at most one rank 1', actual: ranks, exchange });
      const ascending = ranks.every((r, i) => i === 0 || (r as number) > (ranks[i - 1] as number));
      ctx.check(ascending, 'ranked diagnoses are not in ascending rank order', { requirement: 'encounter.diagnosis-rank-secondary-order', expected: 'ascending ranks', actual: ranks, exchange });
      const secondary = (ranks as number[]).filter((r) => r >= 2).sort((x, y) => x - y);
      ctx.check(secondary.every((r, i) => r === i + 2), 'secondary ranks are not consecutive from 2', {
        requirement: 'encounter.diagnosis-rank-secondary-order',
        expected: secondary.map((_r, i) => i + 2),
        actual: secondary,
        exchange,
      });
    },
  }),
];
