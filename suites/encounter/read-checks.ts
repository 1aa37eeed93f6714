/**
 * Encounter read: the shape (resourceType, id, status, class, subject,
 * participant, period), the contained resources with stable local ids, and the
 * diagnosis ranks (spec: Resources and their fields > Encounter).
 */
import { type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import { codingsOf, expectError, isObject, type Json, readEncounter, refusalProbe, UUID_PATTERN } from '../../src/service/index.js';
import { randomUUID } from 'node:crypto';
import { area, containedOf, DATE_TIME, diagnosesOf, DIAGNOSTIC_IMPRESSION_CODE, localId, LOINC, RS, STATUSES } from './support.js';

/** Contained ids the spec lists: condition-N and the three summaries. */
const LISTED_ID = /^(condition-\d+|subjective-objective-summary|diagnostic-impression|care-plan)$/;

/**
 * Fixture Encounters and what the config declares about them (docs/config.md,
 * "Fixture keys"): `encounter` has a subject, a participant and a period;
 * `encounterWithDiagnoses` has a primary and at least one secondary diagnosis;
 * `encounterWithSummaries` has the subjective/objective summary, the diagnostic
 * impression and the care plan. What a declared fixture has, the read must show:
 * a missing piece is a failure, not a reason to skip.
 */
export const ENCOUNTER_FIXTURES = ['encounter', 'encounterInProgress', 'encounterWithDiagnoses', 'encounterWithSummaries'] as const;

type Ctx = Parameters<CheckDefinition['run']>[0];

/** The fixture Encounters the config names (each id read once). */
async function fixtureEncounters(ctx: Ctx, keys: readonly string[] = ENCOUNTER_FIXTURES): Promise<Array<{ key: string; encounter: Json; exchange: string }>> {
  const out = [];
  const seen = new Map<string, { encounter: Json; exchange: string }>();
  for (const key of keys) {
    if (!ctx.hasFixture(key)) continue;
    const id = ctx.fixture(key);
    let read = seen.get(id);
    if (!read) {
      const { res, encounter } = await readEncounter(ctx, id);
      read = { encounter, exchange: res.exchange.id };
      seen.set(id, read);
    }
    out.push({ key, ...read });
  }
  return out;
}

/** Skips unless the config names one of these fixture keys. */
function needAnyFixture(ctx: Ctx, keys: readonly string[]): void {
  if (!keys.some((k) => ctx.hasFixture(k))) ctx.skip(`fixture not provided: one of ${keys.join(', ')}`);
}

/** Checks the contained resource with this local id, where a fixture Encounter carries one (and on `encounterWithSummaries`, always). */
function containedCheck(opts: {
  slug: string;
  localId: string;
  resourceType: string;
  requirement: string;
  quote: string;
  title: string;
  extra?: (c: Json) => string | undefined;
}): CheckDefinition {
  return defineCheck({
    id: `encounter.${opts.slug}`,
    title: opts.title,
    area,
    level: 'MUST',
    requirements: [opts.requirement],
    quote: opts.quote,
    async run(ctx) {
      needAnyFixture(ctx, ENCOUNTER_FIXTURES);
      let seen = 0;
      for (const { key, encounter, exchange } of await fixtureEncounters(ctx)) {
        const items = containedOf(encounter);
        if (key === 'encounterWithSummaries') {
          // Declared to have the summaries: the listed id must be there.
          ctx.check(
            items.some((c) => localId(c.id) === opts.localId),
            `${key}: no contained #${opts.localId} although the fixture is declared to have one`,
            {
              requirement: opts.requirement,
              expected: { resourceType: opts.resourceType, id: opts.localId },
              actual: items.map((c) => ({ resourceType: c.resourceType, id: c.id })),
              exchange,
            },
          );
        }
        for (const c of items) {
          const hasId = localId(c.id) === opts.localId;
          // Also a resource of the type under an id the spec does not list (e.g. a renamed #care-plan).
          if (!hasId && (c.resourceType !== opts.resourceType || LISTED_ID.test(localId(c.id)))) continue;
          seen++;
          ctx.check(
            hasId && c.resourceType === opts.resourceType,
            `${key}: contained ${String(c.resourceType)} #${localId(c.id)}: expected a ${opts.resourceType} with id ${opts.localId}`,
            {
              requirement: opts.requirement,
              expected: { resourceType: opts.resourceType, id: opts.localId },
              actual: { resourceType: c.resourceType, id: c.id },
              exchange,
            },
          );
          const problem = hasId ? opts.extra?.(c) : undefined;
          if (problem) ctx.check(false, `${key}: #${opts.localId} ${problem}`, { requirement: opts.requirement, actual: c, exchange });
        }
      }
      if (seen === 0 && !ctx.hasFixture('encounterWithSummaries')) {
        ctx.skip(
          `no fixture Encounter carries a contained ${opts.resourceType} #${opts.localId} (name one that has the summaries as encounterWithSummaries to make this a requirement)`,
        );
      }
    },
  });
}

/** The Encounter whose diagnoses the checks examine: `encounterWithDiagnoses` (declared to have them) or `encounter`. */
async function diagnosedEncounter(ctx: Ctx): Promise<{ key: string; declared: boolean; encounter: Json; exchange: string }> {
  needAnyFixture(ctx, ['encounterWithDiagnoses', 'encounter']);
  const key = ctx.hasFixture('encounterWithDiagnoses') ? 'encounterWithDiagnoses' : 'encounter';
  const { res, encounter } = await readEncounter(ctx, ctx.fixture(key));
  return { key, declared: key === 'encounterWithDiagnoses', encounter, exchange: res.exchange.id };
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
      ctx.check(encounter.resourceType === 'Encounter', 'resourceType is not Encounter', {
        requirement: 'encounter.resource-type',
        expected: 'Encounter',
        actual: encounter.resourceType,
        exchange,
      });
      ctx.check(encounter.id === id, 'id is not the id that was read', { requirement: 'encounter.read-shape', expected: id, actual: encounter.id, exchange });
      ctx.check(typeof encounter.status === 'string', 'status is missing', {
        requirement: 'encounter.status-required',
        expected: 'a status',
        actual: encounter.status,
        exchange,
      });
      ctx.check(isObject(encounter.class), 'class is missing or not an object', {
        requirement: 'encounter.class-required',
        expected: 'a Coding',
        actual: encounter.class,
        exchange,
      });
      const issues = ctx.validate('R4', encounter);
      ctx.check(
        issues.length === 0,
        `the Encounter is not valid FHIR R4: ${issues
          .slice(0, 3)
          .map((i) => `${i.path}: ${i.message}`)
          .join('; ')}`,
        {
          requirement: 'encounter.read-shape',
          expected: 'valid against the HL7 R4 schema',
          actual: issues.slice(0, 5),
          exchange,
        },
      );
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
      // A 404 is the answer: a server error here is judged (no 5xx retries), not left without a verdict.
      const res = await refusalProbe(ctx, { scopes: RS, url: ctx.path(op.path, { id: randomUUID() }) });
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
      const fixtures = await fixtureEncounters(ctx);
      for (const { key, encounter, exchange } of fixtures) {
        if (encounter.subject === undefined) continue;
        seen++;
        const s = isObject(encounter.subject) ? encounter.subject : {};
        const ref = typeof s.reference === 'string' ? s.reference : '';
        ctx.check(
          /^Patient\//.test(ref) && UUID_PATTERN.test(ref.slice('Patient/'.length)),
          `${key}: subject.reference ${JSON.stringify(s.reference)} is not Patient/<uuid>`,
          {
            requirement: 'encounter.subject-patient-reference',
            expected: 'Patient/<uuid>',
            actual: encounter.subject,
            exchange,
          },
        );
        ctx.check(s.display === undefined || typeof s.display === 'string', `${key}: subject.display is not a string`, {
          requirement: 'encounter.subject-patient-reference',
          actual: s.display,
          exchange,
        });
      }
      // The config's `encounter` is declared to have a subject: its read must show it (seen counts every fixture).
      const declared = fixtures.find((f) => f.key === 'encounter');
      if (declared) {
        const e = declared.encounter;
        ctx.check(e.subject !== undefined, 'the fixture encounter reads without a subject although it is declared to have one', {
          requirement: 'encounter.subject-patient-reference',
          expected: '{ reference: "Patient/<uuid>" }',
          actual: e.subject ?? null,
          exchange: declared.exchange,
        });
      }
      if (seen === 0 && !declared) ctx.skip('no fixture Encounter has a subject');
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
      const fixtures = await fixtureEncounters(ctx);
      for (const { key, encounter, exchange } of fixtures) {
        const items = Array.isArray(encounter.participant) ? encounter.participant : [];
        items.forEach((p: unknown, i: number) => {
          seen++;
          const ind = isObject(p) && isObject(p.individual) ? p.individual : undefined;
          const ref = typeof ind?.reference === 'string' ? ind.reference : '';
          ctx.check(
            /^Practitioner\//.test(ref) && UUID_PATTERN.test(ref.slice('Practitioner/'.length)),
            `${key}: participant[${i}].individual is not a Practitioner/<uuid> reference`,
            {
              requirement: 'encounter.participant-individual',
              expected: { individual: { reference: 'Practitioner/<uuid>' } },
              actual: p,
              exchange,
            },
          );
          ctx.check(ind?.display === undefined || typeof ind.display === 'string', `${key}: participant[${i}].individual.display is not a string`, {
            requirement: 'encounter.participant-individual',
            actual: ind?.display,
            exchange,
          });
        });
      }
      // The config's `encounter` is declared to have a participant: its read must show it (seen counts every fixture).
      const declared = fixtures.find((f) => f.key === 'encounter');
      if (declared) {
        const e = declared.encounter;
        ctx.check(
          Array.isArray(e.participant) && e.participant.length > 0,
          'the fixture encounter reads without a participant although it is declared to have one',
          {
            requirement: 'encounter.participant-individual',
            expected: '[{ individual: { reference: "Practitioner/<uuid>" } }]',
            actual: e.participant ?? null,
            exchange: declared.exchange,
          },
        );
      }
      if (seen === 0 && !declared) ctx.skip('no fixture Encounter has a participant');
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
      const fixtures = await fixtureEncounters(ctx);
      for (const { key, encounter, exchange } of fixtures) {
        if (encounter.period === undefined) continue;
        seen++;
        const p = isObject(encounter.period) ? encounter.period : {};
        ctx.check(typeof p.start === 'string' && DATE_TIME.test(p.start), `${key}: period.start ${JSON.stringify(p.start)} is not an ISO 8601 date-time`, {
          requirement: 'encounter.period-shape',
          expected: 'YYYY-MM-DDThh:mm[:ss][offset]',
          actual: p.start,
          exchange,
        });
        ctx.check(
          p.end === undefined || (typeof p.end === 'string' && DATE_TIME.test(p.end)),
          `${key}: period.end ${JSON.stringify(p.end)} is not an ISO 8601 date-time`,
          {
            requirement: 'encounter.period-shape',
            expected: 'absent or a date-time',
            actual: p.end,
            exchange,
          },
        );
      }
      // The config's `encounter` is declared to have a period: its read must show it (seen counts every fixture).
      const declared = fixtures.find((f) => f.key === 'encounter');
      if (declared) {
        const e = declared.encounter;
        ctx.check(e.period !== undefined, 'the fixture encounter reads without a period although it is declared to have one', {
          requirement: 'encounter.period-shape',
          expected: '{ start }',
          actual: e.period ?? null,
          exchange: declared.exchange,
        });
      }
      if (seen === 0 && !declared) ctx.skip('no fixture Encounter has a period');
    },
  }),
  defineCheck({
    id: 'encounter.contained-stable-ids',
    title: 'contained resources carry the listed local ids, the same on two reads',
    area,
    level: 'MUST',
    requirements: ['encounter.contained-stable-ids'],
    quote: 'Supporting resources emitted with stable local ids, listed below.',
    async run(ctx) {
      // An Encounter declared to have contained resources (diagnoses or summaries) first, else the plain fixture.
      const declared = ['encounterWithDiagnoses', 'encounterWithSummaries'].find((k) => ctx.hasFixture(k));
      const key = declared ?? 'encounter';
      const id = ctx.fixture(key);
      const ids = (e: Json) => containedOf(e).map((c) => `${String(c.resourceType)}#${localId(c.id)}`);
      const first = await readEncounter(ctx, id);
      const second = await readEncounter(ctx, id);
      const a = ids(first.encounter);
      const b = ids(second.encounter);
      if (a.length === 0) {
        if (!declared) ctx.skip('the fixture Encounter has no contained resources (name one with diagnoses or summaries to make this a requirement)');
        ctx.fail(`${key} has no contained resources although it is declared to have ${key === 'encounterWithDiagnoses' ? 'diagnoses' : 'summaries'}`, {
          requirement: 'encounter.contained-stable-ids',
          expected: 'contained resources',
          actual: [],
          exchange: first.res.exchange.id,
        });
      }
      const sameVersion =
        JSON.stringify((first.encounter.meta as Json | undefined)?.versionId) === JSON.stringify((second.encounter.meta as Json | undefined)?.versionId);
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
    async run(ctx) {
      const { key, declared, encounter, exchange } = await diagnosedEncounter(ctx);
      const diagnoses = diagnosesOf(encounter);
      if (diagnoses.length === 0) {
        if (!declared) ctx.skip('the fixture Encounter has no diagnosis (name one with diagnoses as encounterWithDiagnoses to make this a requirement)');
        ctx.fail(`${key} has no diagnosis although it is declared to have a primary and a secondary one`, {
          requirement: 'encounter.diagnosis-references-contained-condition',
          expected: 'diagnoses',
          actual: encounter.diagnosis ?? null,
          exchange,
        });
      }
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
        ctx.check(!referenced.has(ref), `two diagnoses reference ${ref}`, {
          requirement: 'encounter.contained-condition-per-diagnosis',
          actual: ref,
          exchange,
        });
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
    title: 'diagnosis rank 1 is the only primary; secondary ranks are 2, 3, ... without gaps or repeats',
    area,
    level: 'MUST',
    requirements: ['encounter.diagnosis-rank-primary', 'encounter.diagnosis-rank-secondary-order'],
    quote: '`rank` 1 marks the primary diagnosis. Ranks 2 and above mark secondary diagnoses in stored order.',
    async run(ctx) {
      const { key, declared, encounter, exchange } = await diagnosedEncounter(ctx);
      const ranks = diagnosesOf(encounter)
        .map((d) => d.rank)
        .filter((r) => r !== undefined);
      if (ranks.length === 0 && !declared)
        ctx.skip('the fixture Encounter has no ranked diagnosis (name one with diagnoses as encounterWithDiagnoses to make this a requirement)');
      ctx.check(
        ranks.every((r) => Number.isInteger(r) && (r as number) >= 1),
        'a rank is not a positive integer',
        {
          requirement: 'encounter.diagnosis-rank-primary',
          expected: 'integers >= 1',
          actual: ranks,
          exchange,
        },
      );
      const primaries = ranks.filter((r) => r === 1).length;
      ctx.check(primaries <= 1, 'more than one diagnosis has rank 1', {
        requirement: 'encounter.diagnosis-rank-primary',
        expected: 'at most one rank 1',
        actual: ranks,
        exchange,
      });
      if (declared) {
        ctx.check(primaries === 1, `${key} is declared to have a primary diagnosis, but no diagnosis has rank 1`, {
          requirement: 'encounter.diagnosis-rank-primary',
          expected: 'one rank 1',
          actual: ranks,
          exchange,
        });
        ctx.check(
          ranks.some((r) => (r as number) >= 2),
          `${key} is declared to have a secondary diagnosis, but no diagnosis has rank 2 or above`,
          {
            requirement: 'encounter.diagnosis-rank-secondary-order',
            expected: 'a rank 2',
            actual: ranks,
            exchange,
          },
        );
      }
      // Secondary ranks number the secondaries in stored order: 2, 3, ... each once. Where each sits in the
      // array is not stated (the stored order itself is checked by encounter.diagnoses-round-trip).
      const secondary = (ranks as number[]).filter((r) => r >= 2).sort((x, y) => x - y);
      ctx.check(
        secondary.every((r, i) => r === i + 2),
        'secondary ranks are not 2, 3, ... each once',
        {
          requirement: 'encounter.diagnosis-rank-secondary-order',
          expected: secondary.map((_r, i) => i + 2),
          actual: secondary,
          exchange,
        },
      );
      const ascending = ranks.every((r, i) => i === 0 || (r as number) > (ranks[i - 1] as number));
      ctx.observe(
        'encounter.diagnosis-array-order',
        ascending ? 'ascending rank' : { ranksInArrayOrder: diagnosesOf(encounter).map((d) => d.rank ?? null) },
        'the position of a diagnosis in the array is not stated; only its rank is',
      );
    },
  }),
];
