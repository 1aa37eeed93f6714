/**
 * Scopes (spec: Authentication > Using a token; Endpoints > MedicationRequest
 * create rules; Versioning 2): the scope form, scopes shared across FHIR
 * releases, and the MedicationRequest `.c` scope.
 */
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import {
  PATHS,
  createdIdOf,
  createResource,
  discoveryDocument,
  expectError,
  expectStatus,
  FHIR_HEADERS,
  isObject,
  isScopeForm,
  minimalResource,
  tokenFor,
} from '../../src/service/index.js';
import type { ModelOperation } from '../../src/discovery/model.js';

const area = 'scopes';
const SMART_CONFIGURATION = PATHS.smartConfiguration;
const MR_C = 'system/MedicationRequest.c';
const DOCREF_RS = 'system/DocumentReference.rs';
const MR_RS = 'system/MedicationRequest.rs';

async function scopesSupported(ctx: CheckContext, requirement: string): Promise<{ scopes: unknown; exchange: string }> {
  const { res } = await discoveryDocument(ctx, SMART_CONFIGURATION);
  expectStatus(res, 200, requirement);
  return { scopes: isObject(res.json) ? res.json.scopes_supported : undefined, exchange: res.exchange.id };
}

/** GET a fixture record through the target's published read with one token; it must succeed. */
async function readWith(ctx: CheckContext, op: ModelOperation, fixtureKey: string, token: string, requirement: string): Promise<void> {
  const res = await ctx.request({ url: ctx.path(op.path, { id: ctx.fixture(fixtureKey) }), token, client: 'main', headers: FHIR_HEADERS });
  ctx.check(res.status === 200, `${op.release} ${op.resource} read with the shared token gave ${res.status}`, {
    requirement,
    expected: 200,
    actual: res.status,
    exchange: res.exchange.id,
  });
}

export const checks: CheckDefinition[] = [
  defineCheck({
    id: 'scopes.form',
    title: 'scopes_supported and every x-service-scope have the form system/<ResourceType>.<letters>',
    area,
    level: 'MUST',
    requirements: ['scopes.form'],
    quote: 'Scopes have the form `system/<ResourceType>.<letters>`.',
    async run(ctx) {
      const { scopes, exchange } = await scopesSupported(ctx, 'scopes.form');
      const list: unknown[] = Array.isArray(scopes)
        ? scopes
        : ctx.fail('smart-configuration has no scopes_supported list', { requirement: 'scopes.form', expected: 'array of scopes', actual: scopes, exchange });
      for (const scope of list) {
        ctx.check(typeof scope === 'string' && isScopeForm(scope), `scopes_supported entry ${JSON.stringify(scope)} is not system/<ResourceType>.<letters>`, {
          requirement: 'scopes.form',
          expected: 'system/<ResourceType>.<letters>',
          actual: scope,
          exchange,
        });
      }
      for (const op of ctx.model.operations.filter((o) => o.scope !== undefined)) {
        ctx.check(isScopeForm(op.scope!), `${op.operationId} publishes scope ${op.scope} (not system/<ResourceType>.<letters>)`, {
          requirement: 'scopes.form',
          expected: 'system/<ResourceType>.<letters>',
          actual: op.scope,
        });
      }
    },
  }),
  defineCheck({
    id: 'scopes.supported-list',
    title: 'the full list of scopes is recorded from scopes_supported',
    area,
    level: 'observation',
    requirements: ['scopes.full-list-not-shown'],
    quote: 'Full list of scopes: not shown.',
    async run(ctx) {
      const { scopes } = await scopesSupported(ctx, 'scopes.full-list-not-shown');
      ctx.observe('scopes_supported', scopes);
    },
  }),
  defineCheck({
    id: 'scopes.document-reference-rs-both-releases',
    title: 'one token with system/DocumentReference.rs reads DocumentReference on /fhir/R5 and, where published, on /fhir/R4',
    area,
    level: 'MUST',
    requirements: ['scopes.shared-across-releases', 'document-reference.scope-rs'],
    quote: 'Scopes are shared across FHIR releases: one scope covers a resource on both `/fhir/R4` and `/fhir/R5`.',
    fixtures: ['documentReference'],
    async run(ctx) {
      const r5 = ctx.operation('DocumentReference', 'read', 'R5');
      const token = await tokenFor(ctx, [DOCREF_RS]);
      await readWith(ctx, r5, 'documentReference', token, 'scopes.shared-across-releases');
      const r4 = ctx.findOperation('DocumentReference', 'read', 'R4');
      ctx.observe('document-reference.r4-read-published', r4 !== undefined);
      if (r4) await readWith(ctx, r4, 'documentReference', token, 'scopes.shared-across-releases');
    },
  }),
  defineCheck({
    id: 'scopes.one-token-r4-and-r5',
    title: 'a token issued once covers MedicationRequest on /fhir/R4 and DocumentReference on /fhir/R5 in one call sequence',
    area,
    level: 'MUST',
    requirements: ['scopes.shared-across-releases', 'document-reference.mirror-r4'],
    quote: 'The R5 operations mirror the R4 ones and are called with the same token and scopes.',
    fixtures: ['medicationRequest', 'documentReference'],
    async run(ctx) {
      const mr = ctx.operation('MedicationRequest', 'read', 'R4');
      const doc = ctx.operation('DocumentReference', 'read', 'R5');
      const token = await tokenFor(ctx, [MR_RS, DOCREF_RS]);
      await readWith(ctx, mr, 'medicationRequest', token, 'scopes.shared-across-releases');
      await readWith(ctx, doc, 'documentReference', token, 'scopes.shared-across-releases');
      await readWith(ctx, mr, 'medicationRequest', token, 'scopes.shared-across-releases');
    },
  }),
  defineCheck({
    id: 'scopes.medication-request-create-with-c',
    title: 'a token with only system/MedicationRequest.c creates a MedicationRequest',
    area,
    level: 'MUST',
    requirements: ['scopes.medication-request-create-c-only', 'scopes.c-for-medication-request-create', 'medication-request.create-scope'],
    quote: 'Create requires only the `.c` scope',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const create = ctx.operation('MedicationRequest', 'create', 'R4');
      const token = await tokenFor(ctx, [MR_C]);
      const res = await ctx.request({
        method: create.method,
        url: create.path,
        token,
        client: 'main',
        body: minimalResource(ctx, 'R4', 'MedicationRequest'),
        headers: FHIR_HEADERS,
      });
      const id = res.status >= 200 && res.status < 300 ? createdIdOf(res) : undefined;
      if (id) ctx.created('MedicationRequest', id);
      ctx.check(res.status >= 200 && res.status < 300, `create with only ${MR_C} gave ${res.status}`, {
        requirement: 'scopes.medication-request-create-c-only',
        expected: '2xx',
        actual: res.status,
        exchange: res.exchange.id,
      });
    },
  }),
  defineCheck({
    id: 'scopes.medication-request-c-refused-for-others',
    title: 'a token with only system/MedicationRequest.c is refused (403 HPB-00104) on update, read and search',
    area,
    level: 'MUST',
    requirements: ['scopes.medication-request-c-not-enough-for-others', 'scopes.insufficient-403', 'catalog.hpb-00104'],
    quote: 'the other MedicationRequest operations require `.rs` or `.cru`',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const update = ctx.operation('MedicationRequest', 'update', 'R4');
      const read = ctx.operation('MedicationRequest', 'read', 'R4');
      const search = ctx.operation('MedicationRequest', 'search-type', 'R4');
      const id = await createResource(ctx, 'MedicationRequest', 'R4');
      const token = await tokenFor(ctx, [MR_C]);
      const requirement = 'scopes.medication-request-c-not-enough-for-others';
      const body = { ...minimalResource(ctx, 'R4', 'MedicationRequest'), id };
      const put = await ctx.request({ method: update.method, url: ctx.path(update.path, { id }), token, client: 'main', body, headers: FHIR_HEADERS });
      expectError(put, { status: 403, code: 'HPB-00104', requirement });
      const get = await ctx.request({ url: ctx.path(read.path, { id }), token, client: 'main', headers: FHIR_HEADERS });
      expectError(get, { status: 403, code: 'HPB-00104', requirement });
      const query = new URLSearchParams({ patient: ctx.fixture('patient') });
      const found = await ctx.request({ url: `${search.path}?${query}`, token, client: 'main', headers: FHIR_HEADERS });
      expectError(found, { status: 403, code: 'HPB-00104', requirement });
    },
  }),
];

export default checks;
