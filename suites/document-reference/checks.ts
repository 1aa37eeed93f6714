/**
 * DocumentReference (spec: Endpoints > DocumentReference (R5 surface); catalog
 * HPB-00118/00119/00120) and the two releases being served. The R5 paths and
 * scopes are the spec's wherever the target publishes none (src/discovery/spec.ts).
 */
import { randomUUID } from 'node:crypto';
import { type CheckContext, type CheckDefinition, defineCheck, coveringTokens } from '../../src/engine/index.js';
import {
  bundleResources,
  catalogCodeOf,
  checkFiltered,
  codingMatchesToken,
  codingsOf,
  type Collected,
  createDocument,
  DATE_PREFIXES,
  dateFilter,
  documentBody,
  expectError,
  expectSuccess,
  idOf,
  isObject,
  type Json,
  postDocument,
  putDocument,
  readDocument,
  referencedId,
  searchDocuments,
  searchUrl,
  tokenOf,
} from '../../src/service/index.js';
import { missingFrom } from './compare.js';
import { documentChecks } from './document-checks.js';
import { roundTripChecks } from './round-trip-checks.js';
import { uploadChecks } from './upload-checks.js';
import { uploadTenancyChecks } from './upload-tenancy-check.js';
import { area, firstAnswer, RS, writable } from './support.js';

interface Baseline {
  /** The fixture DocumentReference, when it names its patient. */
  document?: Json;
  patientId: string;
  base: Collected;
}

/**
 * The patient searched by, and every DocumentReference of that patient: the patient of
 * the fixture DocumentReference, else the patient fixture.
 */
async function baseline(ctx: CheckContext): Promise<Baseline> {
  const { document } = await readDocument(ctx, ctx.fixture('documentReference'));
  const own = referencedId(document.subject, 'Patient');
  if (own) return { document, patientId: own, base: await searchDocuments(ctx, [['patient', own]]) };
  if (!ctx.hasFixture('patient')) ctx.skip('the fixture DocumentReference read names no Patient subject, and no patient fixture is configured to search by');
  const patientId = ctx.fixture('patient');
  return { patientId, base: await searchDocuments(ctx, [['patient', patientId]]) };
}

/**
 * A DocumentReference of the baseline's patient that has what `has` asks for: one of its
 * documents, else one this check creates (when the profile allows writes) and the
 * baseline searched again. Skips only when the data lack it and the profile forbids writing it.
 */
async function documentWith(ctx: CheckContext, b: Baseline, has: (r: Json) => boolean, what: string): Promise<{ b: Baseline; document: Json }> {
  const found = [b.document, ...b.base.resources].find((r): r is Json => r !== undefined && has(r));
  if (found) return { b, document: found };
  if (ctx.profile === 'read-only') ctx.skip(`no DocumentReference of patient ${b.patientId} has ${what}, and the read-only profile does not create one`);
  const { document } = await createDocument(ctx, { subject: { reference: `Patient/${b.patientId}` } });
  if (!has(document))
    ctx.fail(`a DocumentReference created with ${what} reads back without it`, { requirement: 'document-reference.create', actual: document });
  return { b: { ...b, base: await searchDocuments(ctx, [['patient', b.patientId]]) }, document };
}

const subjectIs = (id: string) => (r: Json) => referencedId(r.subject, 'Patient') === id;

/** A token parameter (type or category) checked against the data, from the fixture's first coding. */
function tokenCheck(param: 'type' | 'category'): CheckDefinition {
  return defineCheck({
    id: `document-reference.search-${param}`,
    title: `DocumentReference search ${param} returns only documents with that ${param} coding`,
    area,
    level: 'MUST',
    requirements: [`document-reference.search-${param}`],
    quote: `\`${param}\` (token)`,
    fixtures: ['documentReference'],
    async run(ctx) {
      const codingOf = (r: Json) => codingsOf(r[param]).find((c) => typeof c.code === 'string');
      const { b, document } = await documentWith(ctx, await baseline(ctx), (r) => codingOf(r) !== undefined, `a ${param} coding`);
      const token = tokenOf(codingOf(document)!);
      const results = await searchDocuments(ctx, [
        ['patient', b.patientId],
        [param, token],
      ]);
      checkFiltered(ctx, {
        what: `${param}=${token}`,
        requirement: `document-reference.search-${param}`,
        results,
        base: b.base,
        matches: (r) => subjectIs(b.patientId)(r) && codingsOf(r[param]).some((c) => codingMatchesToken(c, token)),
        describe: (r) => codingsOf(r[param]).map(tokenOf),
      });
    },
  });
}

export const checks: CheckDefinition[] = coveringTokens([
  defineCheck({
    id: 'document-reference.r4-and-r5-served',
    title: 'resources are served under /fhir/R4 (Encounter) and /fhir/R5 (DocumentReference)',
    area,
    level: 'MUST',
    requirements: ['general.r4-and-r5-served'],
    quote: 'Two FHIR releases are served: R4 under `{base_url}/fhir/R4` and R5 under `{base_url}/fhir/R5`.',
    fixtures: ['encounter', 'documentReference'],
    async run(ctx) {
      const reads = [
        { url: `/fhir/R4/Encounter/${encodeURIComponent(ctx.fixture('encounter'))}`, scopes: ['system/Encounter.rs'], resourceType: 'Encounter' },
        { url: `/fhir/R5/DocumentReference/${encodeURIComponent(ctx.fixture('documentReference'))}`, scopes: RS, resourceType: 'DocumentReference' },
      ];
      for (const read of reads) {
        const res = await ctx.fhir({ scopes: read.scopes, url: read.url });
        const served = res.status === 200 && isObject(res.json) && res.json.resourceType === read.resourceType;
        ctx.check(served, `GET ${read.url} does not answer 200 with a ${read.resourceType}`, {
          requirement: 'general.r4-and-r5-served',
          expected: { status: 200, resourceType: read.resourceType },
          actual: { status: res.status, resourceType: isObject(res.json) ? res.json.resourceType : undefined },
          exchange: res.exchange.id,
        });
      }
    },
  }),
  defineCheck({
    id: 'document-reference.read',
    title: 'a DocumentReference read on /fhir/R5 with .rs answers the DocumentReference',
    area,
    level: 'MUST',
    requirements: ['document-reference.read'],
    quote: 'read (`GET /fhir/R5/DocumentReference/{id}`)',
    fixtures: ['documentReference'],
    async run(ctx) {
      const id = ctx.fixture('documentReference');
      const { res, document } = await readDocument(ctx, id);
      ctx.check(document.resourceType === 'DocumentReference' && document.id === id, 'the read does not answer the DocumentReference that was read', {
        requirement: 'document-reference.read',
        expected: { resourceType: 'DocumentReference', id },
        actual: { resourceType: document.resourceType, id: document.id },
        exchange: res.exchange.id,
      });
    },
  }),
  defineCheck({
    id: 'document-reference.fields',
    title: 'records the fields of a DocumentReference read and its FHIR R5 schema validity',
    area,
    level: 'observation',
    requirements: ['document-reference.fields-not-shown', 'document-reference.payload-shapes-not-shown'],
    quote: 'Fields of DocumentReference: not shown.',
    fixtures: ['documentReference'],
    async run(ctx) {
      const op = ctx.operation('DocumentReference', 'read', 'R5');
      const res = await ctx.fhir({ scopes: RS, url: ctx.path(op.path, { id: ctx.fixture('documentReference') }) });
      const document = res.json;
      // A failed read is the read check's failure; here it is only recorded.
      if (res.status !== 200 || !isObject(document))
        return ctx.observe('document-reference.fields', `the read answered ${res.status}${catalogCodeOf(res) ? ` ${catalogCodeOf(res)}` : ''}`);
      ctx.observe('document-reference.fields', Object.keys(document).sort());
      const issues = ctx.validate('R5', document);
      ctx.observe(
        'document-reference.r5-schema-issues',
        issues.slice(0, 5).map((i) => `${i.path}: ${i.message}`),
      );
    },
  }),
  defineCheck({
    id: 'document-reference.read-unknown-404',
    title: 'a DocumentReference read of an unknown id gives 404 HPB-00102 or HPB-00118',
    area,
    level: 'MUST',
    requirements: ['document-reference.read-404', 'catalog.hpb-00118', 'document-reference.not-found-code'],
    quote: 'The R5 operations mirror the R4 ones',
    async run(ctx) {
      const op = ctx.operation('DocumentReference', 'read', 'R5');
      const url = ctx.path(op.path, { id: randomUUID() });
      // The first answer is the verdict: a 500 for an unknown id is the failure, not an outage to retry (an error when the target is down).
      const res = await firstAnswer((retry) => ctx.fhir({ scopes: RS, url, retry }));
      expectError(res, { status: 404, code: ['HPB-00102', 'HPB-00118'], requirement: 'document-reference.read-404' });
      ctx.observe('document-reference.not-found-code', catalogCodeOf(res));
    },
  }),
  defineCheck({
    id: 'document-reference.r4-surface',
    title: 'records what GET /fhir/R4/DocumentReference/{id} answers',
    area,
    level: 'observation',
    requirements: ['document-reference.r4-not-shown'],
    quote: 'DocumentReference R4 operations',
    fixtures: ['documentReference'],
    async run(ctx) {
      const res = await ctx.fhir({ scopes: RS, url: `/fhir/R4/DocumentReference/${encodeURIComponent(ctx.fixture('documentReference'))}` });
      ctx.observe('document-reference.r4-read', {
        status: res.status,
        code: catalogCodeOf(res),
        resourceType: isObject(res.json) ? res.json.resourceType : undefined,
      });
    },
  }),
  defineCheck({
    id: 'document-reference.search',
    title: 'a DocumentReference search on /fhir/R5 answers a searchset Bundle of DocumentReferences',
    area,
    level: 'MUST',
    requirements: ['document-reference.search'],
    quote: 'search (`GET /fhir/R5/DocumentReference`)',
    fixtures: ['documentReference'],
    async run(ctx) {
      const { base, document } = await baseline(ctx);
      const others = base.resources.filter((r) => r.resourceType !== 'DocumentReference');
      ctx.check(others.length === 0, 'the searchset holds resources other than DocumentReference', {
        requirement: 'document-reference.search',
        actual: others.slice(0, 3).map((r) => r.resourceType),
        exchange: base.first.exchange.id,
      });
      if (!document) return;
      ctx.check(
        !base.complete || base.resources.some((r) => idOf(r) === idOf(document)),
        "the search for the fixture's patient lacks the fixture DocumentReference",
        {
          requirement: 'document-reference.search',
          expected: idOf(document),
          exchange: base.first.exchange.id,
        },
      );
    },
  }),
  defineCheck({
    id: 'document-reference.search-patient',
    title: "DocumentReference search patient returns only that patient's documents",
    area,
    level: 'MUST',
    requirements: ['document-reference.search-patient'],
    quote: '`patient` (reference, UUID)',
    fixtures: ['documentReference'],
    async run(ctx) {
      const { document, patientId, base } = await baseline(ctx);
      checkFiltered(ctx, {
        what: `patient=${patientId}`,
        requirement: 'document-reference.search-patient',
        results: base,
        base: { ...base, resources: document ? [document] : [] },
        matches: subjectIs(patientId),
        describe: (r) => r.subject,
      });
      if (!ctx.hasFixture('patientNoRecords')) return;
      const none = ctx.fixture('patientNoRecords');
      const results = await searchDocuments(ctx, [['patient', none]]);
      checkFiltered(ctx, {
        what: `patient=${none}`,
        requirement: 'document-reference.search-patient',
        results,
        base: results,
        matches: subjectIs(none),
        describe: (r) => r.subject,
      });
    },
  }),
  tokenCheck('type'),
  tokenCheck('category'),
  defineCheck({
    id: 'document-reference.search-combined-type-date',
    title: "DocumentReference search patient + type + date returns exactly the patient's documents satisfying both",
    area,
    level: 'MUST',
    requirements: ['document-reference.search-type', 'document-reference.search-date'],
    quote: 'Search parameters: `patient` (reference, UUID), `type` (token), `category` (token), `date` (date, same prefixes as Encounter)',
    fixtures: ['documentReference'],
    surfaces: {
      release: 'R5',
      resource: 'DocumentReference',
      parameters: 'patient with type and date together (each with patient alone: search-type, search-date)',
    },
    async run(ctx) {
      const typeOf = (r: Json) => codingsOf(r.type).find((c) => typeof c.code === 'string');
      const dated = (r: Json) => typeof r.date === 'string' && /^\d{4}-\d{2}-\d{2}/.test(r.date);
      const { b, document } = await documentWith(ctx, await baseline(ctx), (r) => typeOf(r) !== undefined && dated(r), 'a type coding and a date');
      const token = tokenOf(typeOf(document)!);
      const day = (document.date as string).slice(0, 10);
      const dateOf = (r: Json) => r.date;
      const date = dateFilter('eq', day, dateOf);
      const results = await searchDocuments(ctx, [
        ['patient', b.patientId],
        ['type', token],
        ['date', day],
      ]);
      const what = `type=${token}&date=${day}`;
      const typeMatches = (r: Json) => codingsOf(r.type).some((c) => codingMatchesToken(c, token));
      if (results.complete || results.resources.length === 0)
        ctx.check(
          results.resources.some((r) => idOf(r) === idOf(document)),
          `${what}: the DocumentReference ${String(idOf(document))}, which satisfies both, is not returned`,
          {
            requirement: 'document-reference.search-date',
            expected: `entries including DocumentReference/${String(idOf(document))}`,
            actual: { entries: results.resources.length },
            exchange: results.first.exchange.id,
          },
        );
      checkFiltered(ctx, {
        what,
        requirement: 'document-reference.search-date',
        results,
        base: b.base,
        matches: (r) => subjectIs(b.patientId)(r) && typeMatches(r) && date.matches(r),
        surely: (r) => subjectIs(b.patientId)(r) && typeMatches(r) && (date.surely ?? date.matches)(r),
        describe: (r) => ({ type: codingsOf(r.type).map(tokenOf), date: dateOf(r) }),
      });
    },
  }),
  defineCheck({
    id: 'document-reference.search-date',
    title: 'DocumentReference search date with each prefix (and none) is satisfied by every result',
    area,
    level: 'MUST',
    requirements: ['document-reference.search-date'],
    quote: '`date` (date, same prefixes as Encounter)',
    fixtures: ['documentReference'],
    async run(ctx) {
      const dated = (r: Json) => typeof r.date === 'string' && /^\d{4}-\d{2}-\d{2}/.test(r.date);
      const { b, document } = await documentWith(ctx, await baseline(ctx), dated, 'a date');
      const day = (document.date as string).slice(0, 10);
      const dateOf = (r: Json) => r.date;
      for (const prefix of ['', ...DATE_PREFIXES] as const) {
        const results = await searchDocuments(ctx, [
          ['patient', b.patientId],
          ['date', `${prefix}${day}`],
        ]);
        const filter = dateFilter(prefix === '' ? 'eq' : prefix, day, dateOf);
        checkFiltered(ctx, {
          what: `date=${prefix}${day}`,
          requirement: 'document-reference.search-date',
          results,
          base: b.base,
          ...filter,
          describe: dateOf,
        });
      }
    },
  }),
  defineCheck({
    id: 'document-reference.offset',
    title: 'records what _offset does on a DocumentReference search',
    area,
    level: 'observation',
    requirements: ['document-reference.offset-not-shown'],
    quote: 'Meaning and bounds of `_offset`: not shown.',
    fixtures: ['patient'],
    async run(ctx) {
      const patientId = ctx.fixture('patient');
      const op = ctx.operation('DocumentReference', 'search-type', 'R5');
      const page = async (params: Array<[string, string]>) => {
        const res = await ctx.fhir({ scopes: RS, url: searchUrl(op.path, [['patient', patientId], ['_count', '5'], ...params]) });
        const ids = isObject(res.json) && res.json.resourceType === 'Bundle' ? bundleResources(res.json).map(idOf) : undefined;
        return { status: res.status, code: catalogCodeOf(res), ids };
      };
      const plain = await page([]);
      const skipped = await page([['_offset', '2']]);
      const meaning =
        !plain.ids || !skipped.ids ? 'not answered' : skipped.ids[0] === plain.ids[2] ? 'skip count' : skipped.ids[0] === plain.ids[0] ? 'ignored' : 'other';
      ctx.observe('document-reference._offset=2', meaning);
      const negative = await page([['_offset', '-1']]);
      ctx.observe('document-reference._offset=-1', { status: negative.status, code: negative.code });
      const huge = await page([['_offset', '1000000']]);
      ctx.observe('document-reference._offset=1000000', { status: huge.status, code: huge.code, entries: huge.ids?.length });
    },
  }),
  defineCheck({
    id: 'document-reference.create',
    title: 'a DocumentReference create on /fhir/R5 with .cru answers the DocumentReference with its server-assigned id',
    area,
    level: 'MUST',
    requirements: ['document-reference.create'],
    quote: 'create (`POST /fhir/R5/DocumentReference`)',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const res = await postDocument(ctx, documentBody(ctx));
      // "Success status codes of create and update: not shown": any 2xx is success; the status is recorded.
      expectSuccess(ctx, res, 'document-reference.create', 'DocumentReference create');
      ctx.observe('document-reference.create.status', { status: res.status, location: res.headers.location !== undefined });
      const d = isObject(res.json) ? res.json : {};
      // "The R5 operations mirror the R4 ones": a create answers the resource, with the id the server assigns.
      ctx.check(
        d.resourceType === 'DocumentReference' && typeof d.id === 'string' && d.id !== '',
        'the create response is not the DocumentReference with its id',
        {
          requirement: 'document-reference.create',
          expected: { resourceType: 'DocumentReference', id: 'a server-assigned id' },
          actual: { resourceType: d.resourceType, id: d.id },
          exchange: res.exchange.id,
        },
      );
      ctx.check(referencedId(d.subject, 'Patient') === ctx.fixture('patient'), 'the created DocumentReference does not carry the subject sent', {
        requirement: 'document-reference.create',
        expected: `Patient/${ctx.fixture('patient')}`,
        actual: d.subject,
        exchange: res.exchange.id,
      });
    },
  }),
  defineCheck({
    id: 'document-reference.update',
    title: 'a DocumentReference update on /fhir/R5 with the same .cru token answers and keeps the updated DocumentReference',
    area,
    level: 'MUST',
    requirements: ['document-reference.update'],
    quote: 'The R5 operations mirror the R4 ones and are called with the same token and scopes.',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const { document } = await createDocument(ctx);
      const id = document.id as string;
      const description = `updated by fhir-conformance run ${ctx.runId}`;
      const sent = { ...writable(document), description };
      const res = await putDocument(ctx, id, sent);
      expectSuccess(ctx, res, 'document-reference.update', 'DocumentReference update');
      ctx.observe('document-reference.update.status', res.status);
      const d = isObject(res.json) ? res.json : {};
      ctx.check(
        d.resourceType === 'DocumentReference' && d.id === id && d.description === description,
        'the update response is not the updated DocumentReference',
        {
          requirement: 'document-reference.update',
          expected: { resourceType: 'DocumentReference', id, description },
          actual: { resourceType: d.resourceType, id: d.id, description: d.description },
          exchange: res.exchange.id,
        },
      );
      const after = await readDocument(ctx, id);
      const lost = missingFrom(sent, after.document);
      ctx.check(lost.length === 0, `the updated DocumentReference reads back without what was sent: ${lost.slice(0, 3).join('; ')}`, {
        requirement: 'document-reference.update',
        expected: 'every field sent',
        actual: lost.slice(0, 10),
        exchange: after.res.exchange.id,
      });
    },
  }),
  ...roundTripChecks,
  ...documentChecks,
  ...uploadChecks,
  ...uploadTenancyChecks,
]);

export default checks;
