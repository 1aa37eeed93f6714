/**
 * Confused identities at the token endpoint (spec: Authentication > Token issuance rule 1, "The
 * server checks the assertion's `iss`, `sub`, `aud`, `exp` and signature"; the scope parameter;
 * What the service does, "Every resource belongs to the caller's organization."). A token request
 * whose form contradicts its verified assertion, or an assertion that names another registered
 * client, must never yield another client's token or a scope the client does not hold. What the
 * token grants is read from its claims (a JWT) or the token response's `scope`, and proven by use:
 * the token on the other organization's record.
 */
import { randomUUID } from 'node:crypto';
import type { ResolvedClient } from '../../src/config/index.js';
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import type { HttpResponse } from '../../src/http/index.js';
import { grantedScopes, isObject, parseScope } from '../../src/service/index.js';
import { registerSecret } from '../../src/redact.js';
import { jwsOf } from './forgery.js';
import { accessTokenOf, answer, ASSERTION_RULE, expectAssertionRefused, READ_SCOPE, tokenRequest } from './support.js';

const area = 'auth';
const FHIR_JSON = { accept: 'application/fhir+json' };
const SCOPE_ROW = 'scope | requested scope(s), for example `system/MedicationRequest.rs`';

/** Another registered client: of another organization (second-org) when configured, else another key of main's. */
function otherClient(ctx: CheckContext, needsOtherOrg: boolean): ResolvedClient {
  const main = ctx.client('main');
  const second = ctx.config.clients.find((c) => c.role === 'second-org' && c.clientId !== main.clientId);
  if (second || needsOtherOrg) return second ?? ctx.skip('no client of another organization is configured (role second-org)');
  return ctx.config.clients.find((c) => c.clientId !== main.clientId) ?? ctx.skip('the config declares no client besides main');
}

/** The identity a token states: its JWT claims sub and client_id, when it is a JWT. */
function statedIdentity(token: string): string[] | undefined {
  const claims = jwsOf(token)?.claims;
  if (!claims) return undefined;
  return [claims.sub, claims.client_id, claims.azp].filter((v): v is string => typeof v === 'string');
}

/** Reads the other organization's fixture MedicationRequest (R4) with `token`: never served to main's token. */
async function otherOrgRead(ctx: CheckContext, token: string): Promise<HttpResponse> {
  const url = ctx.path(ctx.operation('MedicationRequest', 'read', 'R4').path, { id: ctx.fixture('otherOrgMedicationRequest') });
  return ctx.request({ url, token, client: 'main', headers: FHIR_JSON });
}

/** A scope the client is declared not to hold: one a published operation needs (provable by use) when there is one. */
function scopeOutsideGrant(ctx: CheckContext, grant: readonly string[]): { scope: string; op?: ReturnType<CheckContext['findOperation']> } {
  const held = (wanted: string) => {
    const w = parseScope(wanted);
    return grant.some((g) => {
      const h = parseScope(g);
      return g === wanted || (h !== undefined && w !== undefined && h.resource === w.resource && [...w.letters].every((l) => h.letters.includes(l)));
    });
  };
  const op = ctx.model.operations.find((o) => o.method === 'GET' && typeof o.scope === 'string' && !held(o.scope));
  if (op?.scope) return { scope: op.scope, op };
  // Resource types with no operation in the spec (Observation is named by the error catalog): outside any grant it
  // describes, unless the target publishes and grants them too (then the next one).
  const fallbacks = ['system/Observation.rs', 'system/AllergyIntolerance.rs', 'system/Immunization.rs'];
  const fallback = fallbacks.find((s) => !held(s));
  if (!fallback) ctx.skip(`every scope the target's operations name, and ${fallbacks.join(', ')}, is in the declared grant`);
  return { scope: fallback };
}

export const confusionChecks: CheckDefinition[] = [
  defineCheck({
    id: 'auth.token-client-id-parameter-ignored',
    title: "a token request carrying another client's client_id gets no token of that client (claims and a read of its organization's record)",
    area,
    level: 'MUST',
    requirements: ['auth.assertion-iss-checked', 'tenancy.resources-belong-to-org'],
    quote: ASSERTION_RULE,
    fixtures: ['otherOrgMedicationRequest'],
    requests: 2,
    async run(ctx) {
      const other = otherClient(ctx, true);
      const res = await tokenRequest(ctx, { form: { client_id: other.clientId } });
      ctx.observe('client-id-parameter.answer', answer(res));
      const token = accessTokenOf(res);
      if (!token) return; // refused: no token at all, so none of the other client's
      registerSecret(token);
      const identity = statedIdentity(token);
      if (identity)
        ctx.check(!identity.includes(other.clientId), `the token issued for main's assertion with client_id=${other.clientId} names that client`, {
          requirement: 'auth.assertion-iss-checked',
          expected: `sub/client_id ${ctx.client('main').clientId}`,
          actual: identity,
          exchange: res.exchange.id,
        });
      const read = await otherOrgRead(ctx, token);
      ctx.check(read.status < 200 || read.status >= 300, `the token read the other organization's MedicationRequest (HTTP ${read.status})`, {
        requirement: 'tenancy.resources-belong-to-org',
        expected: "404 (not the caller organization's record)",
        actual: read.status,
        exchange: read.exchange.id,
      });
    },
  }),
  defineCheck({
    id: 'auth.token-scope-outside-grant-not-granted',
    title: "a token request for a scope outside the client's declared grant never yields a token that grants it",
    area,
    level: 'MUST',
    requirements: ['auth.token-scope-parameter', 'scopes.insufficient-403'],
    quote: SCOPE_ROW,
    requests: 2,
    async run(ctx) {
      const grant = ctx.client('main').scopes ?? ctx.skip("the config does not declare the main client's grant (clients[].scopes)");
      const { scope, op } = scopeOutsideGrant(ctx, grant);
      const res = await tokenRequest(ctx, { scopes: [READ_SCOPE, scope] });
      ctx.observe('outside-grant.answer', { scope, ...answer(res) });
      const token = accessTokenOf(res);
      if (!token) return; // refused (a conforming choice)
      registerSecret(token);
      const stated =
        grantedScopes(token) ?? (isObject(res.json) && typeof res.json.scope === 'string' ? res.json.scope.split(' ').filter((s) => s !== '') : undefined);
      if (stated)
        ctx.check(!stated.includes(scope), `the token grants ${scope}, which the client does not hold (clients[].scopes)`, {
          requirement: 'auth.token-scope-parameter',
          expected: `not ${scope}`,
          actual: stated,
          exchange: res.exchange.id,
        });
      if (op) {
        const use = await ctx.request({ url: ctx.path(op.path, { id: randomUUID() }), token, client: 'main', headers: FHIR_JSON });
        ctx.check(use.status === 403, `${op.method} ${op.path} (needs ${scope}) with the token answered ${use.status}, not 403`, {
          requirement: 'scopes.insufficient-403',
          expected: 403,
          actual: use.status,
          exchange: use.exchange.id,
        });
      } else if (!stated) {
        ctx.openChoice(
          `the token states no scope (not a JWT with a scope claim, no scope in the response) and no operation needs ${scope}: the grant could not be read`,
        );
      }
    },
  }),
  defineCheck({
    id: 'auth.assertion-other-client-identity',
    title: "an assertion signed with the client's key naming another registered client as sub or iss is refused with 401 HPB-00106",
    area,
    level: 'MUST',
    requirements: ['auth.assertion-sub-checked', 'auth.assertion-iss-checked', 'auth.assertion-failure-401', 'catalog.hpb-00106'],
    quote: ASSERTION_RULE,
    requests: 2,
    async run(ctx) {
      const other = otherClient(ctx, false);
      const main = ctx.client('main');
      for (const [claim, requirement] of [
        ['sub', 'auth.assertion-sub-checked'],
        ['iss', 'auth.assertion-iss-checked'],
      ] as const) {
        const res = await tokenRequest(ctx, { assertion: { [claim]: other.clientId } });
        const token = accessTokenOf(res);
        if (token && other.role === 'second-org' && ctx.hasFixture('otherOrgMedicationRequest')) {
          registerSecret(token);
          const read = await otherOrgRead(ctx, token);
          ctx.observe(
            `other-client-${claim}.use`,
            answer(read),
            `the token issued for ${main.clientId}'s assertion with ${claim}=${other.clientId}, on the other organization's record`,
          );
        }
        expectAssertionRefused(ctx, res, requirement);
      }
    },
  }),
];
