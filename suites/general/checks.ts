/**
 * Resource conventions (spec: Resources and their fields > Conventions) checked
 * on MedicationRequests, and the create/update success statuses the spec leaves
 * open (Endpoints > Pagination, Gaps).
 */
import { type CheckContext, type CheckDefinition, coveringTokens, defineCheck } from '../../src/engine/index.js';
import {
  createdIdOf,
  createOwn,
  expectSuccess,
  isObject,
  newMedicationRequest,
  postMedicationRequest,
  putMedicationRequest,
  randomId,
  READ_SCOPES,
  MEDICATION_REQUEST,
  readMedicationRequest,
  readUrl,
  refusalProbe,
  type Resource,
  searchMedicationRequests,
  UUID_PATTERN,
} from '../../src/service/index.js';
import type { HttpResponse } from '../../src/http/index.js';

import { blockedPatientChecks } from './blocked-patient-checks.js';

const area = 'general';

/** ISO 8601 date-time: a calendar date and a time, seconds, fraction and offset optional. */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?$/;
/** `<ResourceType>/<uuid>`. */
const REFERENCE = /^[A-Z][A-Za-z]+\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Sample {
  resource: Resource;
  res: HttpResponse;
}

/**
 * MedicationRequests to examine: the fixture record, and the first page of a
 * search by encounter (records with an encounter reference) when it is configured.
 */
async function samples(ctx: CheckContext): Promise<Sample[]> {
  const read = await readMedicationRequest(ctx, ctx.fixture('medicationRequest'));
  const out: Sample[] = [read];
  if (ctx.hasFixture('encounter')) {
    const { resources, pages } = await searchMedicationRequests(ctx, { encounter: ctx.fixture('encounter'), _count: '20' }, 1);
    for (const resource of resources) out.push({ resource, res: pages[0]! });
  }
  return out;
}

/** Every object holding a `reference` key, with its JSON path. */
function referencesIn(value: unknown, path = ''): Array<{ path: string; ref: Record<string, unknown> }> {
  if (Array.isArray(value)) return value.flatMap((v, i) => referencesIn(v, `${path}[${i}]`));
  if (!isObject(value)) return [];
  const here = 'reference' in value ? [{ path, ref: value }] : [];
  return [...here, ...Object.entries(value).flatMap(([k, v]) => referencesIn(v, path ? `${path}.${k}` : k))];
}

export const conventionChecks: CheckDefinition[] = [
  defineCheck({
    id: 'general.inner-structure-recorded',
    title: 'the inner structure of MedicationRequest object and array fields (not shown by the spec)',
    area: 'general',
    level: 'observation',
    requirements: ['general.inner-structure-not-shown'],
    quote: 'Inner structure of the object and array fields listed above (medication coding, dosage, dispense, notes, reason codes): not shown.',
    fixtures: ['medicationRequest'],
    async run(ctx) {
      const { resource } = await readMedicationRequest(ctx, ctx.fixture('medicationRequest'));
      const shape = (v: unknown): unknown =>
        Array.isArray(v)
          ? v.length
            ? [shape(v[0])]
            : []
          : isObject(v)
            ? Object.fromEntries(
                Object.keys(v)
                  .sort()
                  .map((k) => [k, shape(v[k])]),
              )
            : typeof v;
      for (const field of ['medicationCodeableConcept', 'dosageInstruction', 'dispenseRequest', 'note', 'reasonCode'])
        if (resource[field] !== undefined) ctx.observe(`medication-request.${field}.shape`, shape(resource[field]));
    },
  }),
  defineCheck({
    id: 'general.id-uuid',
    title: 'MedicationRequest ids are UUIDs',
    area,
    level: 'MUST',
    requirements: ['general.id-uuid'],
    quote: '`id` is a string in UUID format.',
    fixtures: ['medicationRequest'],
    async run(ctx) {
      for (const { resource, res } of await samples(ctx)) {
        ctx.check(typeof resource.id === 'string' && UUID_PATTERN.test(resource.id), `id ${JSON.stringify(resource.id)} is not a UUID`, {
          requirement: 'general.id-uuid',
          expected: '8-4-4-4-12 hex UUID',
          actual: resource.id,
          exchange: res.exchange.id,
        });
      }
    },
  }),
  defineCheck({
    id: 'general.reference-format',
    title: 'references are objects whose reference is <ResourceType>/<uuid>',
    area,
    level: 'MUST',
    requirements: ['general.reference-format'],
    quote: 'References are objects with a `reference` string of the form `<ResourceType>/<uuid>`',
    fixtures: ['medicationRequest'],
    async run(ctx) {
      for (const { resource, res } of await samples(ctx)) {
        const refs = referencesIn(resource);
        ctx.check(
          refs.some((r) => r.path === 'subject'),
          `MedicationRequest ${String(resource.id)} has no subject reference object`,
          {
            requirement: 'general.reference-format',
            expected: 'subject: { reference: "Patient/<uuid>" }',
            actual: resource.subject,
            exchange: res.exchange.id,
          },
        );
        for (const { path, ref } of refs) {
          const value = ref.reference;
          ctx.check(typeof value === 'string' && REFERENCE.test(value), `${String(resource.id)} ${path}.reference is ${JSON.stringify(value)}`, {
            requirement: 'general.reference-format',
            expected: '<ResourceType>/<uuid>',
            actual: value,
            exchange: res.exchange.id,
          });
        }
      }
    },
  }),
  defineCheck({
    id: 'general.reference-display',
    title: 'a reference display, when present, is a string',
    area,
    level: 'MUST',
    requirements: ['general.reference-display'],
    quote: 'They may carry a `display` string.',
    fixtures: ['medicationRequest'],
    async run(ctx) {
      let displays = 0;
      for (const { resource, res } of await samples(ctx)) {
        for (const { path, ref } of referencesIn(resource)) {
          if (!('display' in ref)) continue;
          displays++;
          ctx.check(typeof ref.display === 'string', `${String(resource.id)} ${path}.display is not a string`, {
            requirement: 'general.reference-display',
            expected: 'a string',
            actual: ref.display,
            exchange: res.exchange.id,
          });
        }
      }
      ctx.observe('general.reference-displays-examined', displays);
    },
  }),
  defineCheck({
    id: 'general.timestamps-iso8601',
    title: 'meta.lastUpdated and authoredOn are ISO 8601 date-times',
    area,
    level: 'MUST',
    requirements: ['general.timestamps-iso8601'],
    quote: 'Timestamps are ISO 8601 date-time strings.',
    fixtures: ['medicationRequest'],
    async run(ctx) {
      for (const { resource, res } of await samples(ctx)) {
        const stamps: Array<[string, unknown]> = [['authoredOn', resource.authoredOn]];
        if (isObject(resource.meta)) stamps.push(['meta.lastUpdated', resource.meta.lastUpdated]);
        for (const [field, value] of stamps) {
          if (value === undefined) continue;
          ctx.check(typeof value === 'string' && ISO_DATE_TIME.test(value), `${String(resource.id)} ${field} is ${JSON.stringify(value)}`, {
            requirement: 'general.timestamps-iso8601',
            expected: 'YYYY-MM-DDThh:mm[:ss[.f]][offset]',
            actual: value,
            exchange: res.exchange.id,
          });
        }
      }
    },
  }),
  defineCheck({
    id: 'general.id-server-assigned',
    title: 'a client-supplied id on create is ignored or refused, never kept',
    area,
    level: 'MUST',
    requirements: ['general.id-server-assigned'],
    quote: 'The server assigns it on create.',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const clientId = randomId();
      const res = await postMedicationRequest(ctx, newMedicationRequest(ctx, { id: clientId }));
      if (res.status >= 400 && res.status < 500) {
        ctx.observe('general.client-id-on-create', { handling: 'refused', status: res.status });
        return;
      }
      expectSuccess(ctx, res, 'general.id-server-assigned', 'create with a client-supplied id');
      const id = createdIdOf(res, 'MedicationRequest');
      ctx.check(typeof id === 'string' && id.toLowerCase() !== clientId, `the created MedicationRequest kept the client-supplied id ${clientId}`, {
        requirement: 'general.id-server-assigned',
        expected: 'a server-assigned id',
        actual: id,
        exchange: res.exchange.id,
      });
      // A 404 is the answer: a server error here is judged (no 5xx retries), not left without a verdict.
      const probe = await refusalProbe(ctx, { scopes: READ_SCOPES, url: readUrl(ctx, MEDICATION_REQUEST, clientId) });
      ctx.check(probe.status === 404, `GET of the client-supplied id answered ${probe.status}`, {
        requirement: 'general.id-server-assigned',
        expected: 404,
        actual: probe.status,
        exchange: probe.exchange.id,
      });
      ctx.observe('general.client-id-on-create', { handling: 'ignored', status: res.status });
    },
  }),
  defineCheck({
    id: 'general.create-success-status',
    title: 'records the status of a successful create and whether Location is sent',
    area,
    level: 'observation',
    requirements: ['general.create-success-status'],
    quote: 'Success status codes of create and update: not shown.',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const { res } = await createOwn(ctx);
      ctx.observe('general.create-status', res.status);
      ctx.observe('general.create-location', res.headers.location ?? null);
    },
  }),
  defineCheck({
    id: 'general.update-success-status',
    title: 'records the status of a successful update',
    area,
    level: 'observation',
    requirements: ['general.update-success-status'],
    quote: 'Success status codes of create and update: not shown.',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const { id } = await createOwn(ctx);
      const { resource } = await readMedicationRequest(ctx, id);
      const res = await putMedicationRequest(ctx, id, { ...resource, note: [{ text: `updated by fhir-conformance run ${ctx.runId}` }] });
      ctx.observe('general.update-status', res.status);
    },
  }),
];

export default coveringTokens([...conventionChecks, ...blockedPatientChecks]);
