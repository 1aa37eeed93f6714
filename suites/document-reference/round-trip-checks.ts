/**
 * Round trips of the R5 DocumentReference surface: what the client writes is what
 * it reads back, a PUT of a resource exactly as read changes nothing but `meta`, and
 * a search entry is the resource a read of the same id and version answers. Fields
 * of DocumentReference are not shown, so only what the client itself wrote, or what
 * the server itself answered, is compared.
 */
import { type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import {
  createDocument,
  documentBody,
  expectCreated,
  expectSuccess,
  idOf,
  isObject,
  type Json,
  postDocument,
  putDocument,
  readDocument,
  searchDocuments,
} from '../../src/service/index.js';
import { differences, missingFrom } from './compare.js';
import { area, writable } from './support.js';

const versionOf = (r: Json) => (isObject(r.meta) ? r.meta.versionId : undefined);

export const roundTripChecks: CheckDefinition[] = [
  defineCheck({
    id: 'document-reference.create-read-round-trip',
    title: 'a created DocumentReference reads back with every field the client wrote',
    area,
    level: 'MUST',
    requirements: ['document-reference.create', 'document-reference.read'],
    quote: 'create (`POST /fhir/R5/DocumentReference`)',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const body = documentBody(ctx, { description: `round trip of run ${ctx.runId}` });
      const res = await postDocument(ctx, body);
      const created = expectCreated(ctx, res);
      const sent = writable(body);
      if (isObject(res.json) && res.json.resourceType === 'DocumentReference') {
        const lost = missingFrom(sent, res.json);
        ctx.check(lost.length === 0, `the create response does not carry what was written: ${lost.slice(0, 3).join('; ')}`, {
          requirement: 'document-reference.create',
          expected: 'every written field',
          actual: lost.slice(0, 10),
          exchange: res.exchange.id,
        });
      }
      const read = await readDocument(ctx, created);
      const lost = missingFrom(sent, read.document);
      ctx.check(lost.length === 0, `the read of the created DocumentReference does not carry what was written: ${lost.slice(0, 3).join('; ')}`, {
        requirement: 'document-reference.create',
        expected: 'every written field',
        actual: lost.slice(0, 10),
        exchange: read.res.exchange.id,
      });
    },
  }),
  defineCheck({
    id: 'document-reference.update-as-read-round-trip',
    title: 'a PUT of a DocumentReference exactly as read changes nothing but meta',
    area,
    level: 'MUST',
    requirements: ['document-reference.update'],
    quote: 'update (`PUT /fhir/R5/DocumentReference/{id}`)',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const { document } = await createDocument(ctx);
      const id = document.id as string;
      const before = await readDocument(ctx, id);
      const put = await putDocument(ctx, id, before.document);
      expectSuccess(ctx, put, 'document-reference.update', 'DocumentReference update');
      const after = await readDocument(ctx, id);
      const changed = differences(before.document, after.document, ['meta']);
      ctx.check(changed.length === 0, `a PUT of the resource as read changed it: ${changed.slice(0, 3).join('; ')}`, {
        requirement: 'document-reference.update',
        expected: 'the same resource but meta',
        actual: changed.slice(0, 10),
        exchange: after.res.exchange.id,
      });
      if (isObject(put.json) && put.json.resourceType === 'DocumentReference') {
        const answered = differences(put.json, after.document, ['meta']);
        ctx.check(answered.length === 0, `the update response is not the resource then read: ${answered.slice(0, 3).join('; ')}`, {
          requirement: 'document-reference.update',
          expected: 'the resource as read after the update',
          actual: answered.slice(0, 10),
          exchange: put.exchange.id,
        });
      }
    },
  }),
  defineCheck({
    id: 'document-reference.search-entry-equals-read',
    title: 'a DocumentReference in a search result is the resource a read of the same id and version answers',
    area,
    level: 'MUST',
    requirements: ['document-reference.search', 'document-reference.read'],
    quote: 'search (`GET /fhir/R5/DocumentReference`)',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const { document } = await createDocument(ctx, { description: `search entry of run ${ctx.runId}` });
      const id = document.id as string;
      // The day around the instant, a day either side: which day an instant falls on depends on the zone the
      // server reads a date parameter in (not shown), and the date may be written back at another offset.
      const at = Date.parse(String(document.date ?? ''));
      const day = (offsetDays: number) => new Date(at + offsetDays * 86_400_000).toISOString().slice(0, 10);
      const params: Array<[string, string]> = [
        ['patient', ctx.fixture('patient')],
        ...(Number.isNaN(at)
          ? []
          : ([
              ['date', `ge${day(-1)}`],
              ['date', `le${day(1)}`],
            ] as Array<[string, string]>)),
      ];
      let results = await searchDocuments(ctx, params);
      let entry = results.resources.find((r) => idOf(r) === id);
      if (!entry && !results.complete) ctx.skip(`the search for patient ${ctx.fixture('patient')} around ${day(0)} has more results than the page cap`);
      if (!entry) {
        ctx.fail(`the search ${params.map(([k, v]) => `${k}=${v}`).join('&')} lacks the DocumentReference just created`, {
          requirement: 'document-reference.search',
          expected: id,
          exchange: results.first.exchange.id,
        });
      }
      let read = await readDocument(ctx, id);
      if (versionOf(read.document) !== versionOf(entry!)) {
        // Another writer between the two calls: read and search once more.
        results = await searchDocuments(ctx, params);
        entry = results.resources.find((r) => idOf(r) === id) ?? entry;
        read = await readDocument(ctx, id);
      }
      const differ = differences(entry!, read.document);
      ctx.check(
        differ.length === 0,
        `the search entry differs from the read of version ${String(versionOf(read.document))}: ${differ.slice(0, 3).join('; ')}`,
        {
          requirement: 'document-reference.search',
          expected: 'the resource the read answers',
          actual: differ.slice(0, 10),
          exchange: results.first.exchange.id,
        },
      );
    },
  }),
];
