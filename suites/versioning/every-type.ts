/**
 * Conditional updates on every resource type that publishes an update (spec: Versioning rule 4,
 * "conditional updates use `If-Match`", stated for every resource; MedicationRequest update rule 4
 * gives its 409). MedicationRequest is judged by versioning.stale-if-match-refused; here each other
 * published (release, type) with an update: the current validator is accepted, a stale one is refused
 * and changes nothing.
 */
import type { ModelOperation } from '../../src/discovery/model.js';
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import { catalogCodeOf, createResource, isObject, isSuccess, type Json, outcomeSummary, refusalProbe, surfaceLabel } from '../../src/service/index.js';
import { httpDateForm, isEntityTag, waitPastSecond } from './support.js';

const REQUIREMENT = 'versioning.if-match-conditional';
/** Versions each record is written to (created, then updated conditionally): a rule may break only from the third version. */
const VERSIONS = 4;

/** A field each type keeps as written, and the value a writer puts in it (two writers, two values). */
const CHANGES: Record<string, (text: string) => Json> = {
  Encounter: (text) => ({ reasonCode: [{ text }] }),
  DocumentReference: (text) => ({ description: text }),
};

/** What a field carries: the text of the change, wherever the type keeps it. */
function changedText(resource: string, body: Json): unknown {
  if (resource === 'Encounter') return Array.isArray(body.reasonCode) && isObject(body.reasonCode[0]) ? body.reasonCode[0].text : undefined;
  return body.description;
}

/** A published (release, type) other than MedicationRequest the suite can write versions of. */
interface Writable {
  surface: string;
  update: ModelOperation;
  read: ModelOperation;
  /** The change a writer makes (CHANGES). */
  change: (text: string) => Json;
  /** The read's and the update's scopes. */
  scopes: string[];
}

/** The published types with create, read, update and their scopes, other than MedicationRequest; each other one goes to `notChecked`, with why. */
function writableTypes(ctx: CheckContext, notChecked: string[]): Writable[] {
  return ctx.model.operations
    .filter((op) => op.interaction === 'update' && op.resource !== 'MedicationRequest')
    .flatMap((update) => {
      const surface = surfaceLabel(update);
      const change = CHANGES[update.resource];
      const read = ctx.findOperation(update.resource, 'read', update.release);
      if (!change || !read || !ctx.findOperation(update.resource, 'create', update.release) || !read.scope || !update.scope) {
        notChecked.push(`${surface} (${!change ? 'no field the suite knows it keeps' : 'no published create, read or scope'})`);
        return [];
      }
      return [{ surface, update, read, change, scopes: [...new Set([read.scope, update.scope])] }];
    });
}

/**
 * A record of the type, created by the check, and a reader of it: the answer, the body without its
 * `meta`, and the `meta`. A read that does not answer 200 with a resource fails under `requirement`.
 */
async function ownRecord(ctx: CheckContext, w: Writable, requirement: string) {
  const id = await createResource(ctx, w.update.resource, w.update.release);
  const read = async () => {
    const res = await ctx.fhir({ scopes: w.scopes, url: ctx.path(w.read.path, { id }) });
    if (res.status !== 200 || !isObject(res.json))
      ctx.fail(`${w.surface}: the read of a record the check wrote answered ${res.status}`, {
        requirement,
        expected: 200,
        actual: res.status,
        exchange: res.exchange.id,
      });
    const { meta, ...body } = res.json as Json;
    return { res, body, meta };
  };
  return { id, url: ctx.path(w.update.path, { id }), read };
}

export const everyTypeChecks: CheckDefinition[] = [
  defineCheck({
    id: 'versioning.stale-if-match-every-type',
    surfaces: {
      release: 'every published release with an update (from the operation model)',
      resource: 'every published type with create, read and update other than MedicationRequest (Encounter, DocumentReference)',
      version: 'versions 2, 3 and 4 each written with the validator its read returned, then a stale validator of version 1',
      leftOut: [
        'MedicationRequest: versioning.stale-if-match-refused (its 409 HPB-00103 is stated)',
        'a type without create, read and update, or without a field the suite knows the type keeps: listed in the notChecked observation',
      ],
    },
    title: 'on every resource type with an update, If-Match with the current ETag is accepted and a stale one is refused without changing the record',
    area: 'versioning',
    level: 'MUST',
    requirements: [REQUIREMENT],
    quote: 'Each resource carries `meta.versionId`. Reads return an `ETag` and `Last-Modified`; conditional updates use `If-Match`',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const checked: string[] = [];
      const notChecked: string[] = [];
      for (const w of writableTypes(ctx, notChecked)) {
        const { surface, update, read, change, scopes } = w;
        const { id, url, read: readRecord } = await ownRecord(ctx, w, REQUIREMENT);
        // Each version is written conditionally with the validator its read returns (versions 2 to VERSIONS):
        // a read ETag that stops following the versions (from the third on, say) makes its update refused.
        const readNow = async () => {
          const { res: r, body, meta } = await readRecord();
          const v = isObject(meta) ? meta.versionId : undefined;
          const header = r.headers.etag;
          return { body, validator: isEntityTag(header) ? header : typeof v === 'string' && v !== '' ? `W/"${v}"` : undefined };
        };
        const first = await readNow();
        const validator = first.validator;
        if (validator === undefined) {
          notChecked.push(`${surface} (its read has neither an ETag nor a meta.versionId: versioning.read-etag, versioning.meta-version-id)`);
          continue;
        }
        let current: { body: Json; validator: string | undefined } = { body: first.body, validator };
        let lastText = '';
        for (let written = 2; written <= VERSIONS; written++) {
          if (written > 2) current = await readNow();
          const tag = current.validator ?? validator;
          lastText = `version ${written}, fhir-conformance run ${ctx.runId}`;
          const res = await ctx.fhir({ scopes, method: 'PUT', url, body: { ...current.body, id, ...change(lastText) }, headers: { 'if-match': tag } });
          if (
            !ctx.check(
              isSuccess(res),
              `${surface}: writing version ${written} with If-Match carrying the ETag its read returned (${tag}) answered ${res.status}`,
              {
                requirement: REQUIREMENT,
                expected: '2xx',
                actual: outcomeSummary(res, catalogCodeOf(res)),
                exchange: res.exchange.id,
              },
            )
          )
            break;
        }
        // The second writer still holds version 1's validator: the update must be refused and change nothing.
        const stale = await refusalProbe(ctx, {
          scopes,
          method: 'PUT',
          url,
          body: { ...current.body, id, ...change(`stale writer, fhir-conformance run ${ctx.runId}`) },
          headers: { 'if-match': validator },
        });
        ctx.observe(`versioning.stale-if-match.${update.release}.${update.resource}`, outcomeSummary(stale, catalogCodeOf(stale)));
        // 409 HPB-00103 is MedicationRequest's; another type's refusal may be HTTP's 412 (its status is not stated).
        ctx.check(stale.status === 409 || stale.status === 412, `${surface}: an update with a stale If-Match (${validator}) answered ${stale.status}`, {
          requirement: REQUIREMENT,
          expected: 'refused: 409 (HPB-00103, as MedicationRequest) or 412',
          actual: outcomeSummary(stale, catalogCodeOf(stale)),
          exchange: stale.exchange.id,
        });
        const after = await ctx.fhir({ scopes, url: ctx.path(read.path, { id }) });
        const kept = isObject(after.json) ? changedText(update.resource, after.json) : undefined;
        ctx.check(after.status === 200 && kept === lastText, `${surface}: after the stale update the record reads ${JSON.stringify(kept ?? null)}`, {
          requirement: REQUIREMENT,
          expected: lastText,
          actual: kept ?? after.status,
          exchange: after.exchange.id,
        });
        checked.push(surface);
      }
      ctx.observe('surfaces', { checked, ...(notChecked.length ? { notChecked } : {}) });
      if (checked.length === 0)
        ctx.skip(`no published type other than MedicationRequest to update conditionally: ${notChecked.join('; ') || 'none publishes an update'}`);
    },
  }),
  defineCheck({
    id: 'versioning.last-modified-moves-every-type',
    surfaces: {
      release: 'every published release with an update (from the operation model)',
      resource: 'every published type with create, read and update other than MedicationRequest (Encounter, DocumentReference), a record of its own',
      version: "versions 1, 2 and 3: each update sent once the previous version is a whole second old on the target's clock (its Date header)",
      channel: 'the read after each update',
      leftOut: [
        "MedicationRequest: versioning.last-modified-moves-with-versions (its update answer's Last-Modified is stated too)",
        "another type's update answer: its headers are not stated (a read's are: Versioning rule 4)",
      ],
    },
    title:
      "on every resource type with an update, Last-Modified moves with every version: the read after each update names a time later than the previous version's",
    area: 'versioning',
    level: 'MUST',
    requirements: ['versioning.read-last-modified'],
    quote: 'Each resource carries `meta.versionId`. Reads return an `ETag` and `Last-Modified`; conditional updates use `If-Match`',
    tags: ['writes', 'waits'],
    // Per type (Encounter, DocumentReference): a create and its read, then two updates each with a read.
    requests: 12,
    fixtures: ['patient'],
    async run(ctx) {
      const checked: string[] = [];
      const notChecked: string[] = [];
      const seen: Record<string, unknown> = {};
      for (const w of writableTypes(ctx, notChecked)) {
        const { surface, change, scopes } = w;
        const { id, url, read } = await ownRecord(ctx, w, 'versioning.read-last-modified');
        const readNow = async () => {
          const { res, body } = await read();
          return { res, body, value: res.headers['last-modified'] };
        };
        let previous = await readNow();
        const values: Array<string | null> = [previous.value ?? null];
        if (httpDateForm(previous.value) === undefined) {
          notChecked.push(`${surface} (its read has no Last-Modified HTTP-date: versioning.read-last-modified)`);
          continue;
        }
        let judged = true;
        for (const version of [2, 3]) {
          await waitPastSecond(ctx, previous.value!, previous.res);
          const etag = previous.res.headers.etag;
          const res = await ctx.fhir({
            scopes,
            method: 'PUT',
            url,
            body: { ...previous.body, id, ...change(`version ${version}, fhir-conformance run ${ctx.runId}`) },
            ...(isEntityTag(etag) ? { headers: { 'if-match': etag } } : {}),
          });
          if (!isSuccess(res)) {
            // The update itself is judged by its own checks (versioning.stale-if-match-every-type, the generated ones).
            notChecked.push(`${surface} (writing version ${version} answered ${outcomeSummary(res, catalogCodeOf(res))})`);
            judged = false;
            break;
          }
          const after = await readNow();
          values.push(after.value ?? null);
          ctx.check(
            httpDateForm(after.value) !== undefined && Date.parse(after.value!) > Date.parse(previous.value!),
            `${surface}: the read of version ${version} has Last-Modified ${after.value === undefined ? 'absent' : JSON.stringify(after.value)}, not later than version ${version - 1}'s ${previous.value}`,
            { requirement: 'versioning.read-last-modified', expected: `after ${previous.value}`, actual: after.value ?? null, exchange: after.res.exchange.id },
          );
          if (httpDateForm(after.value) === undefined) break;
          previous = after;
        }
        seen[surface] = values;
        if (judged) checked.push(surface);
      }
      ctx.observe('versioning.last-modified-by-version', seen);
      ctx.observe('surfaces', { checked, ...(notChecked.length ? { notChecked } : {}) });
      if (checked.length === 0)
        ctx.skip(
          `no published type other than MedicationRequest whose Last-Modified could be followed: ${notChecked.join('; ') || 'none publishes an update'}`,
        );
    },
  }),
];
