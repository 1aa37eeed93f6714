/**
 * Versioning (spec: Versioning; MedicationRequest update rules 4-5): versionId,
 * ETag and Last-Modified on reads and updates, conditional updates with
 * If-Match, and release selection by path prefix.
 */
import { type CheckContext, type CheckDefinition, defineCheck, coveringTokens } from '../../src/engine/index.js';
import {
  PATHS,
  createOwn,
  describeDifferences,
  expectError,
  expectResource,
  expectStatus,
  expectSuccess,
  isObject,
  putMedicationRequest,
  readMedicationRequest,
  refusalProbe,
  type Resource,
  searchMedicationRequests,
  WRITE_SCOPES,
  writtenIsRead,
} from '../../src/service/index.js';
import type { HttpResponse } from '../../src/http/index.js';
import { everyTypeChecks } from './every-type.js';
import { httpDateForm, isEntityTag, opaqueTag, versionedReads, waitPastSecond } from './support.js';

const area = 'versioning';
const FHIR_JSON = { accept: 'application/fhir+json' };
/** Versions a record is written to (created, then updated): a rule may break only from the third version. */
const VERSIONS = 4;

function versionIdOf(resource: Resource): unknown {
  return isObject(resource.meta) ? resource.meta.versionId : undefined;
}

function noteUpdate(ctx: CheckContext, resource: Resource, text: string): Resource {
  return { ...resource, note: [{ text: `${text} (fhir-conformance run ${ctx.runId})` }] };
}

/**
 * One of our own MedicationRequests, as last read. The validator is the read's
 * ETag; a read without a usable ETag (a failure of versioning.read-etag) falls
 * back to FHIR's `W/"<meta.versionId>"`, so the If-Match rules are still judged.
 */
async function ownRecord(ctx: CheckContext): Promise<{ id: string; res: HttpResponse; resource: Resource; etag: string }> {
  const { id } = await createOwn(ctx);
  const { res, resource } = await readMedicationRequest(ctx, id);
  const header = res.headers.etag;
  const version = versionIdOf(resource);
  const etag = isEntityTag(header) ? header : typeof version === 'string' && version !== '' ? `W/"${version}"` : undefined;
  if (etag === undefined)
    ctx.skip(`the read returned neither an ETag nor a meta.versionId to build a validator from; see versioning.read-etag and versioning.meta-version-id`);
  if (!isEntityTag(header)) ctx.observe('versioning.validator', `W/"${String(version)}" built from meta.versionId (the read has no usable ETag)`);
  return { id, res, resource, etag };
}

/** An update succeeded (any 2xx: success statuses are not shown) and answered the MedicationRequest. */
function expectUpdateAccepted(ctx: CheckContext, res: HttpResponse, requirement: string): Resource {
  expectSuccess(ctx, res, requirement, 'update');
  return expectResource(ctx, res, 'MedicationRequest', requirement);
}

export const checks: CheckDefinition[] = coveringTokens([
  defineCheck({
    id: 'versioning.read-etag',
    title: 'reads return an ETag',
    area,
    level: 'MUST',
    requirements: ['versioning.read-etag'],
    quote: 'Reads return an `ETag`',
    async run(ctx) {
      for (const { label, res } of await versionedReads(ctx, 'versioning.read-etag')) {
        const etag = res.headers.etag;
        ctx.check(isEntityTag(etag), `read of ${label}: ETag ${etag === undefined ? 'missing' : `${JSON.stringify(etag)} is not an entity-tag`}`, {
          requirement: 'versioning.read-etag',
          expected: 'W/"<tag>" or "<tag>"',
          actual: etag ?? null,
          exchange: res.exchange.id,
        });
      }
    },
  }),
  defineCheck({
    id: 'versioning.read-last-modified',
    title: 'reads return Last-Modified as an HTTP-date',
    area,
    level: 'MUST',
    requirements: ['versioning.read-last-modified'],
    quote: 'Reads return an `ETag` and `Last-Modified`',
    async run(ctx) {
      for (const { label, res } of await versionedReads(ctx, 'versioning.read-last-modified')) {
        const value = res.headers['last-modified'];
        const form = httpDateForm(value);
        ctx.check(form !== undefined, `read of ${label}: Last-Modified ${value === undefined ? 'missing' : `${JSON.stringify(value)} is not an HTTP-date`}`, {
          requirement: 'versioning.read-last-modified',
          expected: 'HTTP-date, e.g. Sun, 06 Nov 1994 08:49:37 GMT',
          actual: value ?? null,
          exchange: res.exchange.id,
        });
        if (form && form !== 'IMF-fixdate') ctx.observe(`versioning.last-modified-form.${label}`, form);
      }
    },
  }),
  defineCheck({
    id: 'versioning.meta-version-id',
    title: 'every resource read or searched carries meta.versionId',
    area,
    level: 'MUST',
    requirements: ['versioning.meta-version-id'],
    quote: 'Each resource carries `meta.versionId`.',
    async run(ctx) {
      const seen: Array<{ label: string; resource: Resource; res: HttpResponse }> = await versionedReads(ctx, 'versioning.meta-version-id');
      if (ctx.hasFixture('patient') && ctx.findOperation('MedicationRequest', 'search-type', 'R4')) {
        const { resources, pages } = await searchMedicationRequests(ctx, { patient: ctx.fixture('patient'), _count: '20' }, 1);
        for (const resource of resources) seen.push({ label: 'MedicationRequest search entry', resource, res: pages[0]! });
      }
      for (const { label, resource, res } of seen) {
        const v = versionIdOf(resource);
        ctx.check(typeof v === 'string' && v !== '', `${label} ${String(resource.id)} has no meta.versionId`, {
          requirement: 'versioning.meta-version-id',
          expected: 'meta.versionId',
          actual: v ?? null,
          exchange: res.exchange.id,
        });
      }
    },
  }),
  defineCheck({
    id: 'versioning.if-match-current-succeeds',
    title: 'an update with If-Match carrying the current ETag succeeds and makes a new version',
    area,
    level: 'MUST',
    requirements: ['medication-request.if-match-current-succeeds', 'versioning.if-match-conditional'],
    quote: 'when the `If-Match` header carries the `ETag` from the last read, the update is conditional',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const { id, resource, etag } = await ownRecord(ctx);
      const written = noteUpdate(ctx, resource, 'conditional update');
      const res = await putMedicationRequest(ctx, id, written, { 'if-match': etag });
      const updated = expectUpdateAccepted(ctx, res, 'medication-request.if-match-current-succeeds');
      ctx.check(versionIdOf(updated) !== versionIdOf(resource), 'the update response carries the old meta.versionId', {
        requirement: 'versioning.if-match-conditional',
        expected: `a versionId other than ${String(versionIdOf(resource))}`,
        actual: versionIdOf(updated),
        exchange: res.exchange.id,
      });
      const after = await readMedicationRequest(ctx, id);
      ctx.check(versionIdOf(after.resource) === versionIdOf(updated), 'a read after the update does not show the version the update returned', {
        requirement: 'versioning.if-match-conditional',
        expected: versionIdOf(updated),
        actual: versionIdOf(after.resource),
        exchange: after.res.exchange.id,
      });
    },
  }),
  defineCheck({
    id: 'versioning.update-response-etag',
    surfaces: { resource: 'MedicationRequest (the update rules are stated for it)', version: 'versions 2, 3 and 4 (create, then three updates)' },
    title: 'an update response carries the ETag of the new version',
    area,
    level: 'MUST',
    requirements: ['medication-request.update-response-etag'],
    quote: 'The response carries `ETag` and `Last-Modified` for the new version.',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const { id, resource, etag: first } = await ownRecord(ctx);
      // Three updates (four versions): a rule of the update response may break only from the third version on.
      const seen = [first];
      let current: Resource = resource;
      for (let version = 2; version <= VERSIONS; version++) {
        const res = await putMedicationRequest(ctx, id, noteUpdate(ctx, current, `version ${version}`));
        current = expectUpdateAccepted(ctx, res, 'medication-request.update-response-etag');
        const etag = res.headers.etag;
        if (!isEntityTag(etag)) {
          ctx.fail(`the update response of version ${version} has ${etag === undefined ? 'no ETag' : `a malformed ETag ${JSON.stringify(etag)}`}`, {
            requirement: 'medication-request.update-response-etag',
            expected: 'W/"<tag>" or "<tag>"',
            actual: etag ?? null,
            exchange: res.exchange.id,
          });
        }
        const repeated = seen.find((tag) => opaqueTag(tag) === opaqueTag(etag));
        ctx.check(repeated === undefined, `the update response of version ${version} repeats the ETag of an earlier version (${repeated})`, {
          requirement: 'medication-request.update-response-etag',
          expected: `an ETag other than ${seen.join(', ')}`,
          actual: etag,
          exchange: res.exchange.id,
        });
        seen.push(etag);
        const after = await readMedicationRequest(ctx, id);
        const read = after.res.headers.etag;
        ctx.check(
          read !== undefined && opaqueTag(read) === opaqueTag(etag),
          `the ETag of the update response of version ${version} is not the one a read returns for it`,
          {
            requirement: 'medication-request.update-response-etag',
            expected: etag,
            actual: read ?? null,
            exchange: after.res.exchange.id,
          },
        );
        current = after.resource;
      }
      ctx.observe('surfaces', { versions: VERSIONS });
    },
  }),
  defineCheck({
    id: 'versioning.update-response-last-modified',
    title: 'an update response carries Last-Modified of the new version',
    area,
    level: 'MUST',
    requirements: ['medication-request.update-response-last-modified'],
    quote: 'The response carries `ETag` and `Last-Modified` for the new version.',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const { id, res: readRes, resource } = await ownRecord(ctx);
      const res = await putMedicationRequest(ctx, id, noteUpdate(ctx, resource, 'new version'));
      expectUpdateAccepted(ctx, res, 'medication-request.update-response-last-modified');
      const value = res.headers['last-modified'];
      if (httpDateForm(value) === undefined) {
        ctx.fail(`the update response has ${value === undefined ? 'no Last-Modified' : `a Last-Modified that is not an HTTP-date: ${JSON.stringify(value)}`}`, {
          requirement: 'medication-request.update-response-last-modified',
          expected: 'HTTP-date',
          actual: value ?? null,
          exchange: res.exchange.id,
        });
      }
      const previous = readRes.headers['last-modified'];
      if (httpDateForm(previous) !== undefined) {
        ctx.check(Date.parse(value!) >= Date.parse(previous!), `Last-Modified of the new version (${value!}) is before the previous one (${previous!})`, {
          requirement: 'medication-request.update-response-last-modified',
          expected: `not before ${previous!}`,
          actual: value,
          exchange: res.exchange.id,
        });
      }
    },
  }),
  defineCheck({
    id: 'versioning.last-modified-moves-with-versions',
    surfaces: {
      release: 'R4',
      resource: 'MedicationRequest (a record of its own)',
      version: "versions 1, 2 and 3: each update sent once the previous version is a whole second old on the target's clock (its Date header)",
      channel: "each update's response and the read after it",
    },
    title: "Last-Modified moves with every version: each update's answer, and the read after it, name a time later than the previous version's",
    area,
    level: 'MUST',
    requirements: ['medication-request.update-response-last-modified', 'versioning.read-last-modified'],
    quote: 'The response carries `ETag` and `Last-Modified` for the new version.',
    tags: ['writes', 'waits'],
    // A create and its read, then two updates each with a read.
    requests: 6,
    fixtures: ['patient'],
    async run(ctx) {
      const { id, res: created, resource } = await ownRecord(ctx);
      let previous = { value: created.headers['last-modified'], res: created };
      const seen: Record<string, unknown> = { 'version 1 (read)': previous.value ?? null };
      let body = resource;
      for (const version of [2, 3]) {
        if (httpDateForm(previous.value) === undefined)
          ctx.skip(`version ${version - 1}'s answer has no Last-Modified HTTP-date (versioning.read-last-modified, versioning.update-response-last-modified)`);
        await waitPastSecond(ctx, previous.value!, previous.res);
        const res = await putMedicationRequest(ctx, id, noteUpdate(ctx, body, `version ${version}`));
        body = expectUpdateAccepted(ctx, res, 'medication-request.update-response-last-modified');
        const answered = res.headers['last-modified'];
        const read = await readMedicationRequest(ctx, id);
        const readValue = read.res.headers['last-modified'];
        seen[`version ${version} (update)`] = answered ?? null;
        seen[`version ${version} (read)`] = readValue ?? null;
        for (const [what, value, r, requirement] of [
          ['update answer', answered, res, 'medication-request.update-response-last-modified'],
          ['read after it', readValue, read.res, 'versioning.read-last-modified'],
        ] as const) {
          ctx.check(
            httpDateForm(value) !== undefined && Date.parse(value!) > Date.parse(previous.value!),
            `version ${version}'s ${what}: Last-Modified ${value === undefined ? 'absent' : JSON.stringify(value)}, not later than version ${version - 1}'s ${previous.value}`,
            { requirement, expected: `after ${previous.value}`, actual: value ?? null, exchange: r.exchange.id },
          );
        }
        previous = { value: readValue ?? answered, res: read.res };
      }
      ctx.observe('versioning.last-modified-by-version', seen);
    },
  }),
  defineCheck({
    id: 'versioning.stale-if-match-refused',
    surfaces: {
      resource: 'MedicationRequest',
      version: 'version 2 (a stale validator of version 1)',
      leftOut: [
        'Encounter and DocumentReference: versioning.stale-if-match-every-type (the spec states the 409 HPB-00103 for MedicationRequest update; another type may refuse with 412)',
      ],
    },
    title: 'an update with a stale If-Match is refused with 409 HPB-00103 and changes nothing',
    area,
    level: 'MUST',
    requirements: ['medication-request.if-match-stale-409', 'medication-request.update-409', 'catalog.hpb-00103', 'versioning.if-match-conditional'],
    quote: 'A stale validator fails with 409 in the `HPB-00103` shape (version conflict).',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const { id, resource, etag: stale } = await ownRecord(ctx);
      const firstWriter = noteUpdate(ctx, resource, 'first writer');
      const first = await putMedicationRequest(ctx, id, firstWriter);
      expectUpdateAccepted(ctx, first, 'medication-request.if-match-stale-409');
      // The answer must be 409 HPB-00103: a 412, a 500 (judged, not retried away) or an acceptance fails.
      const op = ctx.operation('MedicationRequest', 'update', 'R4');
      const res = await refusalProbe(ctx, {
        scopes: WRITE_SCOPES,
        method: 'PUT',
        url: ctx.path(op.path, { id }),
        body: noteUpdate(ctx, resource, 'second writer'),
        headers: { 'if-match': stale },
      });
      ctx.observe('versioning.stale-validator', stale.startsWith('W/') ? 'weak' : 'strong');
      expectError(res, { status: 409, code: 'HPB-00103', requirement: 'medication-request.if-match-stale-409' });
      const after = await readMedicationRequest(ctx, id);
      const kept = writtenIsRead({ note: firstWriter.note }, after.resource);
      ctx.check(kept.differences.length === 0, `the refused conditional update changed the record: ${describeDifferences(kept.differences)}`, {
        requirement: 'medication-request.if-match-stale-409',
        expected: firstWriter.note,
        actual: after.resource.note,
        exchange: after.res.exchange.id,
      });
    },
  }),
  ...everyTypeChecks,
  defineCheck({
    id: 'versioning.release-by-path-prefix',
    title: '/fhir/R4 answers FHIR R4 and /fhir/R5 answers FHIR R5',
    area,
    level: 'MUST',
    requirements: ['versioning.release-by-path-prefix'],
    quote: 'FHIR releases are selected by path prefix: `/fhir/R4` and `/fhir/R5`.',
    async run(ctx) {
      const requirement = 'versioning.release-by-path-prefix';
      const r4 = await ctx.request({ url: PATHS.metadata.R4, headers: FHIR_JSON });
      expectStatus(r4, 200, requirement, 'GET /fhir/R4/metadata');
      const cs4 = expectResource(ctx, r4, 'CapabilityStatement', requirement, 'R4');
      ctx.check(
        typeof cs4.fhirVersion === 'string' && cs4.fhirVersion.startsWith('4.0.'),
        `/fhir/R4/metadata declares fhirVersion ${String(cs4.fhirVersion)}`,
        {
          requirement,
          expected: '4.0.x',
          actual: cs4.fhirVersion,
          exchange: r4.exchange.id,
        },
      );
      const r5 = await ctx.request({ url: PATHS.metadata.R5, headers: FHIR_JSON });
      ctx.observe('versioning.r5-metadata-status', r5.status);
      if (r5.status === 200) {
        const cs5 = expectResource(ctx, r5, 'CapabilityStatement', requirement, 'R5');
        ctx.check(
          typeof cs5.fhirVersion === 'string' && cs5.fhirVersion.startsWith('5.0.'),
          `/fhir/R5/metadata declares fhirVersion ${String(cs5.fhirVersion)}`,
          {
            requirement,
            expected: '5.0.x',
            actual: cs5.fhirVersion,
            exchange: r5.exchange.id,
          },
        );
      }
      // Resources read under each prefix validate against that release's schema.
      await versionedReads(ctx, requirement);
    },
  }),
  defineCheck({
    id: 'versioning.v1',
    title: 'records how the target exposes the interface version',
    area,
    level: 'observation',
    requirements: ['versioning.v1'],
    quote: 'The public interface is version v1.',
    async run(ctx) {
      const info =
        isObject(ctx.model.openapi) && isObject((ctx.model.openapi as Record<string, unknown>).info)
          ? ((ctx.model.openapi as Record<string, unknown>).info as Record<string, unknown>)
          : undefined;
      const cs = isObject(ctx.model.capabilityR4) ? (ctx.model.capabilityR4 as Record<string, unknown>) : undefined;
      ctx.observe('versioning.openapi-info-version', info?.version ?? null);
      ctx.observe('versioning.capability-version', cs?.version ?? null);
    },
  }),
]);

export default checks;
