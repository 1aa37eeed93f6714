/**
 * Encounter round trips (spec: Resources > Encounter; Endpoints > Encounter (R4)):
 * what a create writes (status, class, subject, participants, period, reason)
 * is what the create answers and a read returns; written diagnoses read back
 * with their ranks (rank 1 the primary, 2.. the secondaries in the order
 * written); a PUT of the Encounter exactly as read changes nothing but `meta`;
 * a search entry is the resource a read of the same id returns. Comparisons are
 * structural (src/service/compare.ts): `meta`, a narrative `text`,
 * equivalent UTC offsets, added or replaced display texts are no difference.
 */
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import {
  catalogCodeOf,
  createdIdOf,
  encounterBody,
  expectSuccess,
  idOf,
  isObject,
  type Json,
  postEncounter,
  putEncounter,
  readEncounter,
  sameResource,
  searchEncounters,
  writtenIsRead,
  checkSameMeaning,
} from '../../src/service/index.js';
import type { HttpResponse } from '../../src/http/index.js';
import { area, containedOf, diagnosesOf, localId } from './support.js';

const tags: ['writes'] = ['writes'];
const ICD10 = 'http://hl7.org/fhir/sid/icd-10';

/** An instant on the minute an hour ago, written with a +02:00 offset (its UTC reading is equivalent). */
function recentWithOffset(minutesLater = 0): string {
  const t = Math.floor(Date.now() / 60_000) * 60_000 - 3_600_000 + minutesLater * 60_000;
  return `${new Date(t + 2 * 3_600_000).toISOString().slice(0, 19)}+02:00`;
}

/** An Encounter with every field of the read shape: status, class, subject, participants, period (start and end), reason. */
function fullBody(ctx: CheckContext): Json {
  const participant = [{ individual: { reference: `Practitioner/${ctx.fixture('practitioner')}` } }];
  if (ctx.hasFixture('practitioner2')) participant.push({ individual: { reference: `Practitioner/${ctx.fixture('practitioner2')}` } });
  return encounterBody(ctx, {
    status: 'finished',
    class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB', display: 'ambulatory' },
    participant,
    period: { start: recentWithOffset(), end: recentWithOffset(30) },
    reasonCode: [{ text: `round trip by fhir-conformance run ${ctx.runId}` }],
  });
}

/** The written fields judged (everything but meta and the server-assigned id). */
function judged(body: Json): Json {
  const { meta: _meta, id: _id, ...rest } = body;
  return rest;
}

/** Creates the Encounter (any 2xx) and returns its id and the create response. */
async function createFull(ctx: CheckContext, body: Json): Promise<{ id: string; res: HttpResponse }> {
  const res = await postEncounter(ctx, body);
  expectSuccess(ctx, res, 'encounter.create-returns-resource', 'create');
  const id = createdIdOf(res, 'Encounter');
  if (id === undefined) {
    ctx.fail('the create answered neither the Encounter with its id nor a Location naming it', {
      requirement: 'encounter.create-returns-resource',
      actual: { status: res.status, location: res.headers.location ?? null },
      exchange: res.exchange.id,
    });
  }
  return { id, res };
}

/** The coding code of a diagnosis's contained Condition (`#id` resolved in `contained`). */
function diagnosisCode(encounter: Json, diagnosis: Json): string | undefined {
  const ref = isObject(diagnosis.condition) && typeof diagnosis.condition.reference === 'string' ? diagnosis.condition.reference : '';
  if (!ref.startsWith('#')) return undefined;
  const condition = containedOf(encounter).find((c) => localId(c.id) === ref.slice(1) && c.resourceType === 'Condition');
  const coding = isObject(condition?.code) && Array.isArray(condition.code.coding) ? condition.code.coding.find(isObject) : undefined;
  return typeof coding?.code === 'string' ? coding.code : undefined;
}

/** Diagnoses written: code and the rank written (undefined: no rank). */
const WRITTEN_DIAGNOSES: Array<{ code: string; display: string; rank?: number }> = [
  { code: 'I10', display: 'Essential (primary) hypertension', rank: 1 },
  { code: 'E11.9', display: 'Type 2 diabetes mellitus without complications', rank: 2 },
  { code: 'E78.5', display: 'Hyperlipidaemia, unspecified', rank: 3 },
  { code: 'R51', display: 'Headache' },
];

export const roundTripChecks: CheckDefinition[] = [
  defineCheck({
    id: 'encounter.create-round-trip',
    title: 'what an Encounter create writes (status, class, subject, participants, period, reason) is what the create answers and a read returns',
    area,
    level: 'MUST',
    requirements: ['encounter.create-read-back', 'encounter.create-returns-resource'],
    quote: 'POST `/fhir/R4/Encounter` | `system/Encounter.cru` | Encounter body (server assigns id) | Encounter',
    tags,
    fixtures: ['patient', 'practitioner'],
    async run(ctx: CheckContext) {
      const body = fullBody(ctx);
      const { id, res } = await createFull(ctx, body);
      if (isObject(res.json) && res.json.resourceType === 'Encounter') {
        checkSameMeaning(
          ctx,
          writtenIsRead(judged(body), res.json),
          'the create response does not carry what was written',
          'encounter.create-read-back',
          res,
          'encounter.create-round-trip.response-displays',
        );
      }
      const read = await readEncounter(ctx, id);
      checkSameMeaning(
        ctx,
        writtenIsRead(judged(body), read.encounter),
        'the read after the create does not return what was written',
        'encounter.create-read-back',
        read.res,
        'encounter.create-round-trip.displays',
      );
    },
  }),
  defineCheck({
    id: 'encounter.update-unchanged-round-trip',
    title: 'a PUT of the Encounter exactly as read changes nothing but meta',
    area,
    level: 'MUST',
    requirements: ['encounter.update-read-back', 'encounter.update-returns-resource'],
    quote: 'PUT `/fhir/R4/Encounter/{id}` | `system/Encounter.cru` | Encounter body | Encounter',
    tags,
    fixtures: ['patient', 'practitioner'],
    async run(ctx: CheckContext) {
      const { id } = await createFull(ctx, fullBody(ctx));
      const before = await readEncounter(ctx, id);
      const res = await putEncounter(ctx, id, before.encounter);
      expectSuccess(ctx, res, 'encounter.update-returns-resource', 'update with the Encounter as read');
      const after = await readEncounter(ctx, id);
      checkSameMeaning(
        ctx,
        sameResource(before.encounter, after.encounter),
        'a PUT of the Encounter as read changed it',
        'encounter.update-read-back',
        after.res,
        'encounter.update-unchanged.displays',
      );
    },
  }),
  defineCheck({
    id: 'encounter.diagnoses-round-trip',
    title: 'written diagnoses read back: each on a contained Condition, rank 1 the primary, ranks 2.. the secondaries in the order written',
    area,
    level: 'MUST',
    requirements: [
      'encounter.diagnosis-rank-primary',
      'encounter.diagnosis-rank-secondary-order',
      'encounter.diagnosis-references-contained-condition',
      'encounter.create-read-back',
    ],
    quote: '`rank` 1 marks the primary diagnosis. Ranks 2 and above mark secondary diagnoses in stored order.',
    tags,
    fixtures: ['patient', 'practitioner'],
    async run(ctx: CheckContext) {
      const subject = { reference: `Patient/${ctx.fixture('patient')}` };
      const contained = WRITTEN_DIAGNOSES.map((d, i) => ({
        resourceType: 'Condition',
        id: `condition-${i + 1}`,
        subject,
        code: { coding: [{ system: ICD10, code: d.code, display: d.display }], text: d.display },
      }));
      const diagnosis = WRITTEN_DIAGNOSES.map((d, i) =>
        d.rank === undefined ? { condition: { reference: `#condition-${i + 1}` } } : { condition: { reference: `#condition-${i + 1}` }, rank: d.rank },
      );
      const res = await postEncounter(ctx, { ...fullBody(ctx), contained, diagnosis });
      if (res.status >= 400 && res.status < 500) {
        // How diagnoses are written is not stated; a refusal of written diagnoses is recorded, not failed,
        // and nothing of the read-back rules was verified: a skip, not a pass.
        const code = catalogCodeOf(res);
        ctx.observe(
          'encounter.diagnoses-writable',
          { status: res.status, code: code ?? null },
          'an Encounter with contained Conditions and ranked diagnoses was refused',
        );
        ctx.skip(
          `how diagnoses are written is not stated, and an Encounter with contained Conditions and ranked diagnoses was refused (${res.status}${code ? ` ${code}` : ''}): nothing to read back`,
        );
      }
      expectSuccess(ctx, res, 'encounter.create-returns-resource', 'create with diagnoses');
      const id = createdIdOf(res, 'Encounter');
      if (id === undefined)
        ctx.fail('the create answered neither the Encounter with its id nor a Location naming it', {
          requirement: 'encounter.create-returns-resource',
          exchange: res.exchange.id,
        });
      ctx.observe('encounter.diagnoses-writable', 'accepted');
      const read = await readEncounter(ctx, id);
      const e = read.encounter;
      const exchange = read.res.exchange.id;
      const emitted = diagnosesOf(e).map((d) => ({ code: diagnosisCode(e, d), rank: d.rank, condition: d.condition }));
      const unresolved = emitted.filter((d) => d.code === undefined);
      ctx.check(unresolved.length === 0, `${unresolved.length} diagnoses do not reference a contained Condition`, {
        requirement: 'encounter.diagnosis-references-contained-condition',
        expected: '#id of a contained Condition',
        actual: unresolved.map((d) => d.condition),
        exchange,
      });
      for (const w of WRITTEN_DIAGNOSES) {
        const found = emitted.filter((d) => d.code === w.code);
        if (
          !ctx.check(
            found.length === 1,
            `the diagnosis ${w.code} written ${w.rank === undefined ? 'without rank' : `with rank ${w.rank}`} reads back ${found.length} times`,
            {
              requirement: 'encounter.create-read-back',
              expected: 1,
              actual: found.length,
              exchange,
            },
          )
        )
          continue;
        if (w.rank === undefined) {
          ctx.observe('encounter.unranked-diagnosis-rank', found[0]!.rank ?? null, "a diagnosis written without rank (its kind is the server's reading)");
          continue;
        }
        ctx.check(found[0]!.rank === w.rank, `the diagnosis ${w.code} written with rank ${w.rank} reads back with rank ${JSON.stringify(found[0]!.rank)}`, {
          requirement: w.rank === 1 ? 'encounter.diagnosis-rank-primary' : 'encounter.diagnosis-rank-secondary-order',
          expected: w.rank,
          actual: found[0]!.rank ?? null,
          exchange,
        });
      }
    },
  }),
  defineCheck({
    id: 'encounter.search-entry-matches-read',
    title: 'an Encounter search entry is the resource a read of the same id returns (same version, same content)',
    area,
    level: 'MUST',
    requirements: ['pagination.entry-is-read', 'encounter.search-returns-bundle'],
    quote: '`entry` (array of resources)',
    tags,
    fixtures: ['patient', 'practitioner'],
    async run(ctx: CheckContext) {
      // A record with a second version, so a search that serves an older version shows.
      const { id } = await createFull(ctx, fullBody(ctx));
      const first = await readEncounter(ctx, id);
      const updated = await putEncounter(ctx, id, { ...first.encounter, reasonCode: [{ text: `second version by fhir-conformance run ${ctx.runId}` }] });
      expectSuccess(ctx, updated, 'encounter.update-returns-resource', 'update');
      const results = await searchEncounters(ctx, [
        ['patient', ctx.fixture('patient')],
        ['_id', id],
      ]);
      const read = await readEncounter(ctx, id);
      const entry = results.resources.find((r) => idOf(r).toLowerCase() === id.toLowerCase());
      if (!entry) {
        ctx.fail(`the Encounter ${id} just created does not appear in the search by patient and _id`, {
          requirement: 'pagination.entry-is-read',
          expected: `an entry ${id}`,
          actual: results.resources.map(idOf),
          exchange: results.first.exchange.id,
        });
      }
      const versionOf = (r: Json) => (isObject(r.meta) ? r.meta.versionId : undefined);
      ctx.check(
        versionOf(entry) === versionOf(read.encounter),
        `the search entry is version ${String(versionOf(entry))}, the read version ${String(versionOf(read.encounter))}`,
        {
          requirement: 'pagination.entry-is-read',
          expected: versionOf(read.encounter),
          actual: versionOf(entry),
          exchange: results.first.exchange.id,
        },
      );
      checkSameMeaning(
        ctx,
        sameResource(read.encounter, entry),
        'the search entry differs from the read',
        'pagination.entry-is-read',
        results.first,
        'encounter.search-entry.displays',
      );
    },
  }),
];
