/**
 * X-Correlation-Id (spec: Authentication > Audit; Limits > "Rate-limit response headers (on
 * every response)"). The run-wide invariant examines every exchange; these checks probe each
 * kind of response on purpose, so a target that drops the header on one kind fails by name.
 */
import { randomUUID } from 'node:crypto';
import { type CheckContext, type CheckDefinition, defineCheck, coveringTokens } from '../../src/engine/index.js';
import { PATHS, expectStatus } from '../../src/service/index.js';
import type { HttpResponse } from '../../src/http/index.js';

const area = 'headers';
const HEADER = 'x-correlation-id';
const SCOPE = 'system/MedicationRequest.rs';
const FHIR_JSON = { accept: 'application/fhir+json' };
const AUDIT_QUOTE = 'The correlation id is returned in the `X-Correlation-Id` response header.';
const EVERY_RESPONSE_QUOTE = 'X-Correlation-Id | Request correlation id.';

/** Soft: the response carries a non-empty X-Correlation-Id; returns it. */
function expectCorrelationId(ctx: CheckContext, res: HttpResponse, what: string, requirement = 'headers.correlation-id-every-response'): string | undefined {
  const value = res.headers[HEADER]?.trim();
  ctx.check(!!value, `${what} (HTTP ${res.status}) has no X-Correlation-Id`, {
    requirement,
    expected: 'a non-empty X-Correlation-Id header',
    actual: res.headers[HEADER] ?? 'absent',
    exchange: res.exchange.id,
  });
  return value || undefined;
}

function readUrl(ctx: CheckContext, id: string): string {
  return ctx.path(ctx.operation('MedicationRequest', 'read', 'R4').path, { id });
}

export const checks: CheckDefinition[] = coveringTokens([
  defineCheck({
    id: 'headers.correlation-id-on-success',
    title: 'a successful authenticated FHIR read carries X-Correlation-Id',
    area,
    level: 'MUST',
    requirements: ['headers.correlation-id', 'headers.correlation-id-every-response'],
    quote: AUDIT_QUOTE,
    fixtures: ['medicationRequest'],
    async run(ctx) {
      const res = await ctx.fhir({ scopes: [SCOPE], url: readUrl(ctx, ctx.fixture('medicationRequest')), headers: FHIR_JSON, share: true });
      expectStatus(res, 200, 'headers.correlation-id');
      expectCorrelationId(ctx, res, 'the read', 'headers.correlation-id');
    },
  }),
  defineCheck({
    id: 'headers.correlation-id-on-errors',
    title: 'error responses (401 without a token, 404 for an unknown id) carry X-Correlation-Id',
    area,
    level: 'MUST',
    requirements: ['headers.correlation-id-every-response', 'headers.correlation-id'],
    quote: EVERY_RESPONSE_QUOTE,
    async run(ctx) {
      const url = readUrl(ctx, randomUUID());
      const unauthenticated = await ctx.request({ url, headers: FHIR_JSON });
      expectStatus(unauthenticated, 401, 'headers.correlation-id-every-response', 'request without a token: status');
      expectCorrelationId(ctx, unauthenticated, 'the 401 response');
      const notFound = await ctx.fhir({ scopes: [SCOPE], url, headers: FHIR_JSON });
      expectStatus(notFound, 404, 'headers.correlation-id', 'read of an unknown id: status');
      expectCorrelationId(ctx, notFound, 'the 404 response of an authenticated read', 'headers.correlation-id');
    },
  }),
  defineCheck({
    id: 'headers.correlation-id-on-token-endpoint',
    title: 'the token endpoint response carries X-Correlation-Id',
    area,
    level: 'MUST',
    requirements: ['headers.correlation-id-every-response'],
    quote: EVERY_RESPONSE_QUOTE,
    async run(ctx) {
      const res = await ctx.tokens.request('main', { scopes: [SCOPE] });
      expectCorrelationId(ctx, res, 'the token response');
    },
  }),
  defineCheck({
    id: 'headers.correlation-id-on-discovery',
    title: 'discovery documents (metadata, OpenAPI, smart-configuration, JWKS) carry X-Correlation-Id',
    area,
    level: 'MUST',
    requirements: ['headers.correlation-id-every-response'],
    quote: EVERY_RESPONSE_QUOTE,
    async run(ctx) {
      const documents = [
        { url: PATHS.metadata.R4, accept: 'application/fhir+json' },
        { url: PATHS.openapi, accept: 'application/json' },
        { url: PATHS.smartConfiguration, accept: 'application/json' },
        { url: PATHS.jwks, accept: 'application/json' },
      ];
      for (const doc of documents) {
        const res = await ctx.request({ url: doc.url, headers: { accept: doc.accept } });
        expectCorrelationId(ctx, res, `GET ${doc.url}`);
      }
    },
  }),
  defineCheck({
    id: 'headers.correlation-id-distinct',
    title: 'separate requests get distinct correlation ids',
    area,
    level: 'MUST',
    requirements: ['headers.correlation-id', 'headers.correlation-id-every-response'],
    quote: EVERY_RESPONSE_QUOTE,
    async run(ctx) {
      const url = readUrl(ctx, randomUUID());
      const responses = [
        await ctx.request({ url: PATHS.metadata.R4, headers: FHIR_JSON }),
        await ctx.request({ url: PATHS.metadata.R4, headers: FHIR_JSON }),
        await ctx.fhir({ scopes: [SCOPE], url, headers: FHIR_JSON }),
        await ctx.fhir({ scopes: [SCOPE], url, headers: FHIR_JSON }),
      ];
      const seen = new Map<string, string>();
      for (const res of responses) {
        const id = expectCorrelationId(ctx, res, `${res.exchange.request.method} ${res.exchange.request.url}`);
        if (id === undefined) continue;
        const earlier = seen.get(id);
        ctx.check(earlier === undefined, `exchanges ${earlier} and ${res.exchange.id} share the correlation id "${id}"`, {
          requirement: 'headers.correlation-id',
          expected: 'one correlation id per request',
          actual: id,
          exchange: res.exchange.id,
        });
        seen.set(id, res.exchange.id);
      }
    },
  }),
]);

export default checks;
