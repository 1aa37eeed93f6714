/**
 * Media type (spec: introduction "Payload media type for FHIR calls:
 * `application/fhir+json`"; Endpoints "Writes carry `Content-Type:
 * application/fhir+json`. Reads may send `Accept: application/fhir+json`.").
 */
import { randomUUID } from 'node:crypto';
import { type CheckContext, type CheckDefinition, defineCheck, coveringTokens } from '../../src/engine/index.js';
import { PATHS, discoveryDocument, expectStatus, formatFindings, isObject, minimalResource, pathOf, reportFindings } from '../../src/service/index.js';
import type { HttpResponse } from '../../src/http/index.js';

const area = 'media-type';
const FHIR_JSON = 'application/fhir+json';
const ACCEPT = { accept: FHIR_JSON };

/** The media type of a response without parameters (charset), lower case. */
export function mediaTypeOf(res: HttpResponse): string | undefined {
  return res.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
}

function expectFhirJson(ctx: CheckContext, res: HttpResponse, what: string, requirement = 'media-type.fhir-json'): boolean {
  return ctx.check(mediaTypeOf(res) === FHIR_JSON, `${what} (${res.status}) answered Content-Type ${res.headers['content-type'] ?? '(none)'}`, {
    requirement,
    expected: FHIR_JSON,
    actual: res.headers['content-type'] ?? null,
    exchange: res.exchange.id,
  });
}

function createdId(res: HttpResponse): string | undefined {
  return isObject(res.json) && typeof res.json.id === 'string' ? res.json.id : undefined;
}

export const checks: CheckDefinition[] = coveringTokens([
  defineCheck({
    id: 'media-type.fhir-responses-are-fhir-json',
    title: 'FHIR responses (success and error, R4 and R5, and the CapabilityStatement) are application/fhir+json',
    area,
    level: 'MUST',
    requirements: ['media-type.fhir-json'],
    quote: 'Payload media type for FHIR calls: `application/fhir+json`.',
    fixtures: ['medicationRequest', 'patient', 'documentReference'],
    async run(ctx: CheckContext) {
      const mrRead = pathOf(ctx, 'R4', 'MedicationRequest', 'read');
      const mrSearch = pathOf(ctx, 'R4', 'MedicationRequest', 'search-type');
      const docRead = pathOf(ctx, 'R5', 'DocumentReference', 'read');
      const mr = ['system/MedicationRequest.rs'];
      const doc = ['system/DocumentReference.rs'];
      const samples: Array<[string, HttpResponse]> = [
        ['R4 read', await ctx.fhir({ scopes: mr, url: ctx.path(mrRead, { id: ctx.fixture('medicationRequest') }), share: true })],
        ['R4 search', await ctx.fhir({ scopes: mr, url: `${mrSearch}?patient=${encodeURIComponent(ctx.fixture('patient'))}&_count=1`, share: true })],
        ['R4 error (unknown id)', await ctx.fhir({ scopes: mr, url: ctx.path(mrRead, { id: randomUUID() }) })],
        ['R4 error (no token)', await ctx.request({ url: ctx.path(mrRead, { id: ctx.fixture('medicationRequest') }), headers: ACCEPT })],
        ['R5 read', await ctx.fhir({ scopes: doc, url: ctx.path(docRead, { id: ctx.fixture('documentReference') }), share: true })],
        ['R5 error (unknown id)', await ctx.fhir({ scopes: doc, url: ctx.path(docRead, { id: randomUUID() }) })],
        ['R4 metadata', await ctx.request({ url: PATHS.metadata.R4, headers: ACCEPT })],
      ];
      for (const [what, res] of samples) expectFhirJson(ctx, res, what);
    },
  }),
  defineCheck({
    id: 'media-type.read-with-accept-fhir-json',
    title: 'a read sent with Accept: application/fhir+json succeeds and answers application/fhir+json',
    area,
    level: 'MUST',
    requirements: ['media-type.read-accept'],
    quote: 'Reads may send `Accept: application/fhir+json`.',
    fixtures: ['medicationRequest', 'documentReference'],
    async run(ctx: CheckContext) {
      const reads: Array<[string, string, string]> = [
        ['R4', ctx.path(pathOf(ctx, 'R4', 'MedicationRequest', 'read'), { id: ctx.fixture('medicationRequest') }), 'system/MedicationRequest.rs'],
        ['R5', ctx.path(pathOf(ctx, 'R5', 'DocumentReference', 'read'), { id: ctx.fixture('documentReference') }), 'system/DocumentReference.rs'],
      ];
      for (const [release, url, scope] of reads) {
        const res = await ctx.fhir({ scopes: [scope], url, headers: ACCEPT });
        if (
          !ctx.check(res.status === 200, `${release} read with Accept: ${FHIR_JSON} answered ${res.status}`, {
            requirement: 'media-type.read-accept',
            expected: 200,
            actual: res.status,
            exchange: res.exchange.id,
          })
        )
          continue;
        expectFhirJson(ctx, res, `${release} read`, 'media-type.read-accept');
      }
    },
  }),
  defineCheck({
    id: 'media-type.write-with-fhir-json-accepted',
    title: 'a create sent with Content-Type: application/fhir+json is accepted',
    area,
    level: 'MUST',
    requirements: ['media-type.write-content-type'],
    quote: 'Writes carry `Content-Type: application/fhir+json`.',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx: CheckContext) {
      const res = await ctx.fhir({
        scopes: ['system/MedicationRequest.c'],
        method: 'POST',
        url: pathOf(ctx, 'R4', 'MedicationRequest', 'create'),
        headers: { 'content-type': FHIR_JSON, ...ACCEPT },
        body: JSON.stringify(minimalResource(ctx, 'R4', 'MedicationRequest')),
      });
      const id = createdId(res);
      if (id) ctx.created('MedicationRequest', id);
      // Success status codes of create: not shown (any 2xx with a body: the create answers the resource).
      expectStatus(res, [200, 201, 202, 203], 'media-type.write-content-type');
      expectFhirJson(ctx, res, 'create', 'media-type.write-content-type');
    },
  }),
  defineCheck({
    id: 'media-type.other-content-type-recorded',
    title: 'records how a write with a non-JSON Content-Type is answered; a refusal is in the error format',
    area,
    level: 'MUST',
    requirements: ['media-type.write-content-type', 'errors.operation-outcome-shape'],
    quote: 'Writes carry `Content-Type: application/fhir+json`.',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx: CheckContext) {
      const res = await ctx.fhir({
        scopes: ['system/MedicationRequest.c'],
        method: 'POST',
        url: pathOf(ctx, 'R4', 'MedicationRequest', 'create'),
        retry: 'none',
        headers: { 'content-type': 'text/plain', ...ACCEPT },
        body: JSON.stringify(minimalResource(ctx, 'R4', 'MedicationRequest')),
      });
      const id = createdId(res);
      if (id && res.status < 300) ctx.created('MedicationRequest', id);
      ctx.observe('media-type.text-plain-write-status', res.status, 'the handling of other content types is not stated');
      if (res.status >= 400) {
        reportFindings(ctx, formatFindings({ kind: 'text/plain write', release: 'R4', res }));
        expectFhirJson(ctx, res, 'text/plain write refusal');
      }
    },
  }),
  defineCheck({
    id: 'media-type.openapi-is-json',
    title: '/openapi.json answers a JSON document (its media type, not stated, is recorded)',
    area,
    level: 'MUST',
    requirements: ['discovery.openapi-3-0-3'],
    quote: 'GET `/openapi.json` | not stated | OpenAPI 3.0.3 description of the R4 endpoints',
    async run(ctx: CheckContext) {
      const { res } = await discoveryDocument(ctx, PATHS.openapi);
      expectStatus(res, 200, 'discovery.openapi-3-0-3');
      ctx.observe('media-type.openapi-content-type', res.headers['content-type'] ?? null, 'the media type of /openapi.json is not stated');
      ctx.check(isObject(res.json), '/openapi.json is not a JSON object', {
        requirement: 'discovery.openapi-3-0-3',
        expected: 'a JSON object',
        actual: res.text.slice(0, 120),
        exchange: res.exchange.id,
      });
    },
  }),
  defineCheck({
    id: 'media-type.interface-version-recorded',
    title: 'records the interface version the published documents state (OpenAPI info.version, CapabilityStatement.version)',
    area,
    level: 'observation',
    requirements: ['versioning.v1'],
    quote: 'The public interface is version v1.',
    async run(ctx: CheckContext) {
      const info = isObject(ctx.model.openapi) && isObject(ctx.model.openapi.info) ? ctx.model.openapi.info.version : undefined;
      const cs = isObject(ctx.model.capabilityR4) ? ctx.model.capabilityR4.version : undefined;
      ctx.observe('versioning.openapi-info-version', info ?? null);
      ctx.observe('versioning.capability-statement-version', cs ?? null);
    },
  }),
]);

export default checks;
