/**
 * Discovery: the CapabilityStatement, the OpenAPI document, smart-configuration
 * and the JWKS (spec: Endpoints > Discovery and token endpoints; Versioning 3).
 */
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import { PATHS, discoveryDocument, expectStatus, isObject, OPERATIONS } from '../../src/service/index.js';
import type { HttpResponse } from '../../src/http/index.js';
import { CLIENT_ASSERTION_TYPE } from '../../src/auth/broker.js';
import { registerSecret } from '../../src/redact.js';
import { loadOpenApi, openApiEntries } from '../../src/discovery/openapi.js';

const area = 'discovery';
const FHIR_JSON = { accept: 'application/fhir+json' };
const TOKEN_SCOPE = 'system/MedicationRequest.rs';

export const checks: CheckDefinition[] = [
  defineCheck({
    id: 'discovery.metadata-without-auth',
    title: 'GET /fhir/R4/metadata answers a CapabilityStatement without authentication',
    area,
    tags: ['early'],
    level: 'MUST',
    requirements: ['discovery.metadata-no-auth', 'discovery.metadata-capability-statement'],
    quote: 'GET `/fhir/R4/metadata` | none | Live CapabilityStatement (send `Accept: application/fhir+json`).',
    async run(ctx) {
      const res = await ctx.request({ url: PATHS.metadata.R4, headers: FHIR_JSON });
      expectStatus(res, 200, 'discovery.metadata-no-auth');
      const cs = res.json;
      if (!isObject(cs) || cs.resourceType !== 'CapabilityStatement')
        ctx.fail('body is not a CapabilityStatement', {
          expected: 'CapabilityStatement',
          actual: isObject(cs) ? cs.resourceType : res.text.slice(0, 80),
          exchange: res.exchange.id,
        });
      const issues = ctx.validate('R4', cs);
      ctx.check(
        issues.length === 0,
        `CapabilityStatement is not valid FHIR R4: ${issues
          .slice(0, 3)
          .map((i) => `${i.path}: ${i.message}`)
          .join('; ')}`,
        {
          requirement: 'discovery.metadata-capability-statement',
          expected: 'valid against the HL7 R4 schema',
          actual: issues.slice(0, 5),
          exchange: res.exchange.id,
        },
      );
    },
  }),
  defineCheck({
    id: 'discovery.openapi-version',
    title: '/openapi.json is an OpenAPI 3.0.3 document',
    area,
    tags: ['early'],
    level: 'MUST',
    requirements: ['discovery.openapi-3-0-3'],
    quote: 'The OpenAPI description is version 3.0.3 and covers the R4 endpoints.',
    async run(ctx) {
      const { res } = await discoveryDocument(ctx, PATHS.openapi);
      expectStatus(res, 200, 'discovery.openapi-3-0-3');
      const doc = res.json;
      ctx.check(isObject(doc) && doc.openapi === '3.0.3', 'openapi version is not 3.0.3', {
        requirement: 'discovery.openapi-3-0-3',
        expected: '3.0.3',
        actual: isObject(doc) ? doc.openapi : res.text.slice(0, 80),
        exchange: res.exchange.id,
      });
      for (const p of ctx.model.problems) ctx.check(false, `OpenAPI/CapabilityStatement problem: ${p}`, { requirement: 'discovery.openapi-3-0-3' });
    },
  }),
  defineCheck({
    id: 'discovery.openapi-service-scope',
    title: 'every OpenAPI operation carries x-service-scope',
    area,
    tags: ['early'],
    level: 'MUST',
    requirements: ['discovery.openapi-x-service-scope'],
    quote: 'each operation carries an `x-service-scope` extension naming the required scope.',
    async run(ctx) {
      const { res } = await discoveryDocument(ctx, PATHS.openapi);
      expectStatus(res, 200, 'discovery.openapi-x-service-scope');
      // As the document defines it: `$ref`s resolved, the path item's extension where the operation has none.
      const api = (await loadOpenApi(res.json, () => {})) ?? res.json;
      let count = 0;
      for (const { path, method, scope } of openApiEntries(api)) {
        count++;
        ctx.check(
          typeof scope === 'string' && /^system\/[A-Za-z]+\.[a-z]+$/.test(scope),
          `${method.toUpperCase()} ${path}: x-service-scope missing or malformed`,
          {
            requirement: 'discovery.openapi-x-service-scope',
            expected: 'system/<ResourceType>.<letters>',
            actual: scope,
            exchange: res.exchange.id,
          },
        );
      }
      ctx.check(count > 0, 'the OpenAPI document has no operations', { requirement: 'discovery.openapi-x-service-scope', exchange: res.exchange.id });
    },
  }),
  defineCheck({
    id: 'discovery.openapi-covers-r4-endpoints',
    title: 'the OpenAPI document describes every R4 endpoint of the spec with its scope',
    area,
    tags: ['early'],
    level: 'MUST',
    requirements: ['discovery.openapi-covers-r4'],
    quote: 'OpenAPI 3.0.3 description of the R4 endpoints; each operation carries an `x-service-scope` extension naming the required scope.',
    async run(ctx) {
      // Fetched again so that an unreachable target is an error, not a missing operation.
      expectStatus((await discoveryDocument(ctx, PATHS.openapi)).res, 200, 'discovery.openapi-covers-r4');
      for (const spec of OPERATIONS.filter((o) => o.release === 'R4')) {
        const op = ctx.model.operations.find((o) => o.sources.includes('openapi') && o.method === spec.method && o.path === spec.path);
        if (
          !ctx.check(op !== undefined, `${spec.method} ${spec.path} is missing from the OpenAPI document`, {
            requirement: 'discovery.openapi-covers-r4',
            expected: `${spec.method} ${spec.path}`,
            actual: 'absent',
          })
        )
          continue;
        ctx.check(op!.scope === spec.scope, `${spec.method} ${spec.path}: x-service-scope ${String(op!.scope)}, the spec says ${spec.scope}`, {
          requirement: 'discovery.openapi-covers-r4',
          expected: spec.scope,
          actual: op!.scope,
        });
      }
    },
  }),
  defineCheck({
    id: 'discovery.capability-agrees-with-openapi',
    title: 'the CapabilityStatement and the OpenAPI document do not diverge',
    area,
    tags: ['early'],
    level: 'MUST',
    requirements: ['discovery.capability-openapi-agree'],
    quote: 'The live CapabilityStatement and the OpenAPI description come from one source and do not diverge.',
    async run(ctx) {
      expectStatus((await discoveryDocument(ctx, PATHS.openapi)).res, 200, 'discovery.capability-openapi-agree');
      expectStatus(await ctx.request({ url: PATHS.metadata.R4, headers: FHIR_JSON }), 200, 'discovery.capability-openapi-agree');
      // A document the suite could not read is judged by discovery.openapi-version / metadata-without-auth, not here.
      if (ctx.model.notCompared) ctx.skip(ctx.model.notCompared);
      for (const d of ctx.model.divergences) ctx.check(false, d, { requirement: 'discovery.capability-openapi-agree' });
    },
  }),
  defineCheck({
    id: 'discovery.smart-configuration-fields',
    title: 'smart-configuration returns token_endpoint, jwks_uri, scopes_supported and grant_types_supported',
    area,
    tags: ['early'],
    level: 'MUST',
    requirements: ['discovery.smart-configuration-fields'],
    quote: 'Returns `token_endpoint`, `jwks_uri`, `scopes_supported`, `grant_types_supported`.',
    async run(ctx) {
      const { res } = await discoveryDocument(ctx, PATHS.smartConfiguration);
      expectStatus(res, 200, 'discovery.smart-configuration-fields');
      const c = isObject(res.json) ? res.json : {};
      const expectString = (k: string) =>
        ctx.check(typeof c[k] === 'string' && c[k] !== '', `${k} missing`, {
          requirement: 'discovery.smart-configuration-fields',
          expected: 'a URL',
          actual: c[k],
          exchange: res.exchange.id,
        });
      const expectList = (k: string) =>
        ctx.check(Array.isArray(c[k]) && (c[k] as unknown[]).every((x) => typeof x === 'string'), `${k} missing or not a list of strings`, {
          requirement: 'discovery.smart-configuration-fields',
          expected: 'array of strings',
          actual: c[k],
          exchange: res.exchange.id,
        });
      expectString('token_endpoint');
      expectString('jwks_uri');
      expectList('scopes_supported');
      if (expectList('grant_types_supported'))
        ctx.check((c.grant_types_supported as string[]).includes('client_credentials'), 'grant_types_supported lacks client_credentials', {
          requirement: 'discovery.smart-configuration-fields',
          expected: 'client_credentials',
          actual: c.grant_types_supported,
          exchange: res.exchange.id,
        });
      ctx.observe('smart-configuration.keys', Object.keys(c).sort());
    },
  }),
  defineCheck({
    id: 'discovery.token-endpoint-on-base',
    title: 'POST /auth/token on the base address issues an access token for a valid request',
    area,
    tags: ['early'],
    level: 'MUST',
    requirements: ['discovery.token-endpoint-path'],
    quote: "the token endpoint is `POST /auth/token` on the service's base address",
    async run(ctx) {
      const onBase = `${ctx.config.baseUrl.replace(/\/$/, '')}/auth/token`;
      const advertised = await advertisedTokenEndpoint(ctx);
      const res = await validTokenRequest(ctx, onBase, advertised.value);
      expectIssued(ctx, res, `POST ${onBase}`, 'discovery.token-endpoint-path');
    },
  }),
  defineCheck({
    id: 'discovery.token-endpoint-advertised',
    title: "smart-configuration's token_endpoint is an absolute URL that issues access tokens",
    area,
    level: 'MUST',
    requirements: ['discovery.token-endpoint-path', 'discovery.smart-configuration-fields'],
    quote: 'Returns `token_endpoint`, `jwks_uri`, `scopes_supported`, `grant_types_supported`.',
    async run(ctx) {
      const onBase = `${ctx.config.baseUrl.replace(/\/$/, '')}/auth/token`;
      const advertised = await advertisedTokenEndpoint(ctx);
      const value = advertised.value;
      const url =
        typeof value === 'string' && /^https?:\/\/[^/]/i.test(value)
          ? value
          : ctx.fail('token_endpoint is not an absolute http(s) URL', {
              requirement: 'discovery.smart-configuration-fields',
              expected: 'an absolute URL',
              actual: value ?? null,
              exchange: advertised.exchange,
            });
      // The spec's header also names a separate "Token address: {auth_url}": another spelling or another
      // address is recorded, and it must work as a token endpoint (a client that follows discovery goes there).
      const form = sameUrl(url, onBase)
        ? 'the base address /auth/token'
        : sameEndpoint(url, onBase)
          ? 'the base address /auth/token, spelt otherwise'
          : 'another address';
      ctx.observe('token-endpoint.advertised', { form, url });
      if (sameUrl(url, onBase)) return; // discovery.token-endpoint-on-base sends the valid request there
      const res = await validTokenRequest(ctx, url, url);
      expectIssued(ctx, res, `POST ${url} (the advertised token_endpoint)`, 'discovery.token-endpoint-path');
    },
  }),
  defineCheck({
    id: 'discovery.jwks-verifies-access-tokens',
    title: 'the published JWKS verifies issued access tokens',
    area,
    tags: ['early'],
    level: 'MUST',
    requirements: ['discovery.jwks-verifies-tokens'],
    quote: 'GET `/fhir/.well-known/jwks.json` | not stated | Public key set for verifying issued access tokens.',
    // Any issued token shows whether the key set verifies it: the key's widest one serves.
    coveringTokens: true,
    async run(ctx) {
      const { res } = await discoveryDocument(ctx, PATHS.jwks);
      expectStatus(res, 200, 'discovery.jwks-verifies-tokens');
      const jwks = res.json;
      if (!isObject(jwks) || !Array.isArray(jwks.keys) || jwks.keys.length === 0)
        ctx.fail('jwks.json is not a JWK set with keys', {
          requirement: 'discovery.jwks-verifies-tokens',
          expected: '{ keys: [...] }',
          actual: res.text.slice(0, 120),
          exchange: res.exchange.id,
        });
      const token = await ctx.token(['system/MedicationRequest.rs']);
      // A signature the set verifies: a JWT, or a JWS over an opaque payload (the spec shows no token content).
      try {
        await compactVerify(token, createLocalJWKSet(jwks as unknown as JSONWebKeySet));
      } catch (e) {
        ctx.fail(`an issued access token does not verify against jwks.json: ${(e as Error).message}`, {
          requirement: 'discovery.jwks-verifies-tokens',
          expected: 'signature verifies with a key of the set',
          actual: (e as { code?: string }).code ?? 'verification failed',
        });
      }
    },
  }),
];

/** smart-configuration's token_endpoint (any JSON value), with the exchange it came from. */
async function advertisedTokenEndpoint(ctx: CheckContext): Promise<{ value: unknown; exchange: string }> {
  const { res } = await discoveryDocument(ctx, PATHS.smartConfiguration);
  expectStatus(res, 200, 'discovery.smart-configuration-fields');
  return { value: isObject(res.json) ? res.json.token_endpoint : undefined, exchange: res.exchange.id };
}

/** Same URL once parsed (scheme and host case, default port, dot segments). */
function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return false;
  }
}

/** Same URL up to a trailing slash of the path. */
function sameEndpoint(a: string, b: string): boolean {
  try {
    const [x, y] = [new URL(a), new URL(b)];
    return x.origin === y.origin && x.pathname.replace(/\/+$/, '') === y.pathname.replace(/\/+$/, '') && x.search === y.search;
  } catch {
    return false;
  }
}

/**
 * A valid token request for the main client, sent to `url`. Through the token broker (issuance
 * pacing) when `url` is where the broker sends its requests (the configured tokenUrl, else the
 * advertised one), else directly, with an assertion for the broker's audience.
 */
async function validTokenRequest(ctx: CheckContext, url: string, advertised: unknown): Promise<HttpResponse> {
  const brokerUrl = ctx.config.tokenUrl ?? (typeof advertised === 'string' ? advertised : undefined);
  if (brokerUrl !== undefined && sameUrl(brokerUrl, url)) return ctx.tokens.request('main', { scopes: [TOKEN_SCOPE] });
  return ctx.request({
    method: 'POST',
    url,
    form: {
      grant_type: 'client_credentials',
      client_assertion_type: CLIENT_ASSERTION_TYPE,
      client_assertion: await ctx.tokens.assertion('main'),
      scope: TOKEN_SCOPE,
    },
    secretFields: ['client_assertion'],
  });
}

function expectIssued(ctx: CheckContext, res: HttpResponse, what: string, requirement: string): void {
  expectStatus(res, [200, 201, 202, 203, 204], requirement, `${what}: status`);
  const token = isObject(res.json) ? res.json.access_token : undefined;
  if (typeof token === 'string' && token !== '') registerSecret(token);
  ctx.check(typeof token === 'string' && token !== '', `${what} answered ${res.status} without an access_token`, {
    requirement,
    expected: 'access_token: <string>',
    actual: isObject(res.json) ? Object.keys(res.json) : res.text.slice(0, 80),
    exchange: res.exchange.id,
  });
}

/** Whether a discovery document needs authentication is "not stated": record it. */
function authObservation(id: string, url: string, requirement: string, what: string): CheckDefinition {
  return defineCheck({
    id,
    title: `whether ${what} answers without authentication (not stated)`,
    area,
    tags: ['early'],
    level: 'observation',
    requirements: [requirement],
    async run(ctx) {
      const { withoutAuth, res, authenticated } = await discoveryDocument(ctx, url);
      ctx.observe(`${what}.status-without-auth`, withoutAuth.status);
      // Protected: what the main client's bearer got (the checks of the document read it that way).
      if (authenticated) ctx.observe(`${what}.status-with-bearer`, res.status, "answered 401/403 without a token; read with the main client's bearer");
    },
  });
}

checks.push(
  authObservation('discovery.openapi-auth', PATHS.openapi, 'discovery.openapi-auth-not-stated', 'openapi.json'),
  authObservation('discovery.smart-configuration-auth', PATHS.smartConfiguration, 'discovery.smart-configuration-auth-not-stated', 'smart-configuration'),
  authObservation('discovery.jwks-auth', PATHS.jwks, 'discovery.jwks-auth-not-stated', 'jwks.json'),
  defineCheck({
    id: 'discovery.published-resource-types',
    title: 'the resource types and interactions the target publishes (the full list is not shown)',
    area,
    tags: ['early'],
    level: 'observation',
    requirements: ['general.resource-types-not-shown'],
    quote: 'Full list of resource types and of the operations each supports: not shown beyond those named here.',
    async run(ctx) {
      const res = await ctx.request({ url: PATHS.metadata.R4, headers: FHIR_JSON });
      expectStatus(res, 200);
      const byRelease = new Map<string, string[]>();
      for (const op of ctx.model.operations)
        byRelease.set(`${op.release} ${op.resource}`, [
          ...(byRelease.get(`${op.release} ${op.resource}`) ?? []),
          op.operationName ? `$${op.operationName}` : op.interaction,
        ]);
      ctx.observe('published-operations', Object.fromEntries([...byRelease].sort()));
    },
  }),
);

export default checks;
