/**
 * Checks generated from the target's published operation model: for every
 * operation, authentication and scope checks (no token, another resource's
 * scope, letter sets of the same resource, the published scope), and for every
 * write invalid bodies (HPB-00101), from the same schema as its valid body: the
 * published request schema, else the HL7 FHIR schema of the release and type.
 */
import { type CheckContext, type CheckDefinition, type CheckTag, defineCheck } from '../../src/engine/index.js';
import {
  catalogCodeOf,
  createdIdOf,
  expectError,
  fhirResourceSchema,
  firstIssue,
  letterVerdict,
  parseScope,
  tokenFor,
  writeBody,
} from '../../src/service/index.js';
import type { ModelOperation, OperationModel } from '../../src/discovery/model.js';
import type { HttpResponse } from '../../src/http/index.js';
import { requirementById } from '../../src/requirements/index.js';
import { applyVariant, type InvalidVariant, invalidVariants, seedOf, validShapedInstance, variantSlug } from './invalid-variants.js';
import { isWrite, kebab, prepareCall, readsCreated, send } from './support.js';

const area = 'generated';

const QUOTE_401 = 'A missing or invalid bearer token gives 401 (generic code `SVC-00004`).';
const QUOTE_403 = 'A token without the needed scope gives 403 `HPB-00104`.';
const QUOTE_LETTERS =
  'Letters required per operation as shown: `rs` for read and search, `cru` for update (and for Encounter and DocumentReference create), `c` for MedicationRequest create.';
const QUOTE_HPB_00101 = 'Validation error. Body must match the FHIR R4 schema; `resourceType` and required fields present.';

/** 401 codes the spec supports for a missing token: SVC-00004 (Using a token), HPB-00106 (endpoint tables), HPB-00107 (see auth.bearer-401-code). */
const CODES_401 = ['SVC-00004', 'HPB-00106', 'HPB-00107'];

const VERB: Partial<Record<ModelOperation['interaction'], string>> = { read: 'read', 'search-type': 'search', create: 'create', update: 'update' };
/** The letter rule each required letter set is stated in. */
const LETTER_RULE: Record<string, string> = {
  rs: 'scopes.rs-for-read-search',
  cru: 'scopes.cru-for-update-and-create',
  c: 'scopes.c-for-medication-request-create',
};

/** The letter rule an operation's scope is stated in (operations such as `$upload` have none). */
function letterRuleOf(op: ModelOperation, letters: string | undefined): string | undefined {
  return VERB[op.interaction] && letters ? LETTER_RULE[letters] : undefined;
}

const known = requirementById();
const existing = (ids: (string | undefined)[]) => [...new Set(ids.filter((id): id is string => id !== undefined && known.has(id)))];

/** Per-operation requirement id, e.g. `medication-request.read-403`, when the catalog has it. */
function perOp(op: ModelOperation, suffix: string): string | undefined {
  const verb = VERB[op.interaction];
  return verb ? `${kebab(op.resource)}.${verb}-${suffix}` : undefined;
}

/** Resource-wide scope ids (`document-reference.scope-rs`) and, on R5, the mirror rule. */
function resourceScopeIds(op: ModelOperation): (string | undefined)[] {
  const letters = parseScope(op.scope)?.letters;
  return [letters ? `${kebab(op.resource)}.scope-${letters}` : undefined, op.release === 'R5' ? `${kebab(op.resource)}.mirror-r4` : undefined];
}

const describeOp = (op: ModelOperation) => `${op.method} ${op.path}`;
const tagsOf = (op: ModelOperation): CheckTag[] | undefined => (isWrite(op) || readsCreated(op) ? ['writes'] : undefined);

/** Resources the run creates by accident (a faulty target accepting a refused create) go to the ledger too. */
function recordCreated(ctx: CheckContext, op: ModelOperation, res: HttpResponse): void {
  const id = op.interaction === 'create' && res.status >= 200 && res.status < 300 ? createdIdOf(res) : undefined;
  if (id) ctx.created(op.resource, id);
}

function slugs(ops: readonly ModelOperation[]): Map<ModelOperation, string> {
  const count = new Map<string, number>();
  for (const op of ops) count.set(kebab(op.operationId), (count.get(kebab(op.operationId)) ?? 0) + 1);
  return new Map(
    ops.map((op) => {
      const base = kebab(op.operationId);
      return [op, count.get(base)! > 1 ? `${base}-${op.release.toLowerCase()}` : base];
    }),
  );
}

/** A scope of another resource, preferring the same letters (so only the resource differs). */
function otherResourceScope(model: OperationModel, op: ModelOperation): string | undefined {
  const own = parseScope(op.scope);
  const others = [...new Set(model.operations.map((o) => o.scope))]
    .filter((s): s is string => parseScope(s) !== undefined && parseScope(s)!.resource !== op.resource)
    .sort();
  return others.find((s) => parseScope(s)!.letters === own?.letters) ?? others[0];
}

/** The other letter sets the target publishes for this operation's resource. */
function otherLetterSets(model: OperationModel, op: ModelOperation): string[] {
  const own = parseScope(op.scope);
  if (!own) return [];
  const sets = model.operations
    .map((o) => parseScope(o.scope))
    .filter((p) => p?.resource === op.resource)
    .map((p) => p!.letters);
  return [...new Set(sets)].filter((l) => l !== own.letters).sort();
}

function noTokenCheck(op: ModelOperation, slug: string): CheckDefinition {
  const requirement = existing([perOp(op, '401')])[0] ?? 'auth.missing-bearer-401';
  return defineCheck({
    id: `generated.${slug}.no-token`,
    title: `${describeOp(op)} without a bearer token gives 401`,
    area,
    level: 'MUST',
    requirements: existing([perOp(op, '401'), 'auth.missing-bearer-401', 'auth.bearer-on-fhir-calls', 'catalog.svc-00004', ...resourceScopeIds(op).slice(1)]),
    quote: QUOTE_401,
    tags: tagsOf(op),
    async run(ctx) {
      const res = await send(ctx, await prepareCall(ctx, op), undefined);
      recordCreated(ctx, op, res);
      expectError(res, { status: 401, code: CODES_401, requirement });
      ctx.observe('missing-token.code', catalogCodeOf(res));
    },
  });
}

function otherResourceCheck(model: OperationModel, op: ModelOperation, slug: string): CheckDefinition {
  const scope = otherResourceScope(model, op);
  const requirement = existing([perOp(op, '403')])[0] ?? 'scopes.insufficient-403';
  return defineCheck({
    id: `generated.${slug}.other-resource-scope`,
    title: `${describeOp(op)} with only another resource's scope gives 403 HPB-00104`,
    area,
    level: 'MUST',
    requirements: existing([perOp(op, '403'), 'scopes.insufficient-403', 'catalog.hpb-00104', ...resourceScopeIds(op)]),
    quote: QUOTE_403,
    tags: tagsOf(op),
    async run(ctx) {
      if (!op.scope) ctx.skip(`the target publishes no scope for ${op.operationId}`);
      const other = scope ?? ctx.skip('the target publishes no scope of another resource type');
      const res = await send(ctx, await prepareCall(ctx, op), await tokenFor(ctx, [other]));
      recordCreated(ctx, op, res);
      expectError(res, { status: 403, code: 'HPB-00104', requirement });
    },
  });
}

function lettersCheck(op: ModelOperation, slug: string, letters: string): CheckDefinition {
  const own = parseScope(op.scope)!;
  const held = `system/${op.resource}.${letters}`;
  const verdict = letterVerdict(letters, own.letters, op.interaction);
  const cOnlyRule = op.resource === 'MedicationRequest' && letters === 'c' ? 'scopes.medication-request-c-not-enough-for-others' : undefined;
  const cruCreate =
    op.resource === 'MedicationRequest' && op.interaction === 'create' && letters === 'cru' ? 'scopes.medication-request-create-with-cru' : undefined;
  const id = `generated.${slug}.letters-${letters}`;
  if (verdict === 'open') {
    return defineCheck({
      id,
      title: `${describeOp(op)} with only ${held}: the spec leaves it open (recorded)`,
      area,
      level: 'observation',
      requirements: existing([cruCreate ?? letterRuleOf(op, own.letters) ?? 'scopes.insufficient-403']),
      quote: QUOTE_LETTERS,
      tags: tagsOf(op),
      async run(ctx) {
        const res = await send(ctx, await prepareCall(ctx, op), await tokenFor(ctx, [held]));
        recordCreated(ctx, op, res);
        ctx.observe(`${held} on ${op.operationId}`, { status: res.status, code: catalogCodeOf(res) }, `the operation requires ${op.scope}`);
      },
    });
  }
  const requirement = existing([perOp(op, '403')])[0] ?? 'scopes.insufficient-403';
  return defineCheck({
    id,
    title: `${describeOp(op)} with only ${held} gives 403 HPB-00104`,
    area,
    level: 'MUST',
    requirements: existing([
      perOp(op, '403'),
      'scopes.insufficient-403',
      'catalog.hpb-00104',
      letterRuleOf(op, own.letters),
      cOnlyRule,
      ...resourceScopeIds(op),
    ]),
    quote: QUOTE_403,
    tags: tagsOf(op),
    async run(ctx) {
      const res = await send(ctx, await prepareCall(ctx, op), await tokenFor(ctx, [held]));
      recordCreated(ctx, op, res);
      expectError(res, { status: 403, code: 'HPB-00104', requirement });
    },
  });
}

function requiredScopeCheck(op: ModelOperation, slug: string): CheckDefinition {
  const ids = existing([perOp(op, 'scope'), letterRuleOf(op, parseScope(op.scope)?.letters), ...resourceScopeIds(op)]);
  // Without a stated rule for this operation, the published scope itself is the contract.
  const requirements = ids.length > 0 ? ids : ['discovery.openapi-x-service-scope'];
  const requirement = requirements[0]!;
  return defineCheck({
    id: `generated.${slug}.required-scope`,
    title: `${describeOp(op)} with only its published scope is neither 401 nor 403`,
    area,
    level: 'MUST',
    requirements,
    quote: QUOTE_LETTERS,
    tags: tagsOf(op),
    async run(ctx) {
      const scope = op.scope ?? ctx.skip(`the target publishes no scope for ${op.operationId}`);
      const res = await send(ctx, await prepareCall(ctx, op), await tokenFor(ctx, [scope]));
      recordCreated(ctx, op, res);
      ctx.observe(`${scope} on ${op.operationId}`, res.status);
      ctx.check(res.status !== 401 && res.status !== 403, `a token with ${op.scope} was refused with ${res.status} (${catalogCodeOf(res) ?? 'no code'})`, {
        requirement,
        expected: 'neither 401 nor 403',
        actual: res.status,
        exchange: res.exchange.id,
      });
      if (!isWrite(op)) {
        ctx.check(res.status >= 200 && res.status < 300, `${op.operationId} with ${op.scope} did not succeed`, {
          requirement,
          expected: '2xx',
          actual: res.status,
          exchange: res.exchange.id,
        });
      } else {
        // A valid write may be refused for what the spec leaves open (a 4xx); a server error is no answer to it.
        ctx.check(res.status < 500, `${op.operationId} with ${op.scope} answered ${res.status}`, {
          requirement,
          expected: 'a 2xx, or a 4xx refusal',
          actual: res.status,
          exchange: res.exchange.id,
        });
      }
    },
  });
}

function invalidPayloadCheck(op: ModelOperation, slug: string, schema: object, variant: InvalidVariant): CheckDefinition {
  const id = `generated.${slug}.invalid-${variantSlug(variant)}`;
  const rule =
    variant.kind === 'missing'
      ? ['catalog.hpb-00101-required-fields']
      : variant.kind === 'wrong-resource-type'
        ? ['catalog.hpb-00101-required-fields', 'catalog.hpb-00101-schema']
        : ['catalog.hpb-00101-schema'];
  const requirement = rule[0]!;
  const what =
    variant.kind === 'missing'
      ? `without ${variant.field}`
      : variant.kind === 'wrong-resource-type'
        ? 'with a wrong resourceType'
        : `with ${variant.field} not of type ${variant.jsonType}`;
  return defineCheck({
    id,
    title: `${describeOp(op)} ${what} gives 400 or 422 HPB-00101`,
    area,
    level: 'MUST',
    requirements: existing([...rule, perOp(op, '400'), 'catalog.hpb-00101', 'errors.invalid-issue-code']),
    quote: QUOTE_HPB_00101,
    tags: ['writes'],
    async run(ctx) {
      const scope = op.scope ?? ctx.skip(`the target publishes no scope for ${op.operationId}`);
      const instance = await validShapedInstance(
        schema,
        seedOf(id),
        await writeBody(ctx, {
          release: op.release,
          resource: op.resource,
          requestSchema: op.requestSchema,
          ...(op.profile ? { profile: op.profile } : {}),
        }),
      );
      const call = await prepareCall(ctx, op, applyVariant(instance, variant));
      // The first answer is the verdict: a 5xx here is the failure, not something to retry (an error, not a fail, when the target is down).
      const res = await send(ctx, call, await tokenFor(ctx, [scope]), { retry: 'none' });
      recordCreated(ctx, op, res);
      expectError(res, { status: [400, 422], code: 'HPB-00101', requirement });
      const issueCode = firstIssue(res)?.code;
      ctx.observe('validation.status', res.status);
      if (res.status === 400) {
        ctx.check(issueCode === 'invalid', `issue[0].code of a 400 HPB-00101 is ${String(issueCode)}`, {
          requirement: 'errors.invalid-issue-code',
          expected: 'invalid',
          actual: issueCode,
          exchange: res.exchange.id,
        });
      } else {
        ctx.observe('validation.issue-code-with-422', issueCode, 'the spec names no issue code for 422 HPB-00101');
      }
    },
  });
}

type ObjectSchema = { required?: unknown; properties?: Record<string, unknown>; definitions?: Record<string, unknown> };
const requiredOf = (s: ObjectSchema | undefined): string[] => (Array.isArray(s?.required) ? s.required.filter((f): f is string => typeof f === 'string') : []);

/**
 * The schema the invalid variants of a write come from: the one its valid body comes from
 * (src/service/derived-body.ts). The published request schema, and where it leaves out a field
 * the HL7 FHIR schema of the release and type requires (a schema naming only `resourceType`),
 * HL7's required fields besides; with no published schema, HL7's.
 */
function variantSchemaOf(op: ModelOperation): object | undefined {
  const fhir = fhirResourceSchema(op.release, op.resource) as ObjectSchema | undefined;
  if (!op.requestSchema) return fhir;
  const published = op.requestSchema as ObjectSchema;
  const extra = requiredOf(fhir).filter((f) => !requiredOf(published).includes(f));
  if (!fhir || extra.length === 0) return op.requestSchema;
  const fhirProperties = Object.fromEntries(extra.map((f) => [f, fhir.properties?.[f]]).filter(([, p]) => p !== undefined));
  return {
    ...published,
    required: [...requiredOf(published), ...extra],
    properties: { ...fhirProperties, ...(published.properties ?? {}) },
    definitions: { ...(fhir.definitions ?? {}), ...(published.definitions ?? {}) },
  };
}

function checksFor(model: OperationModel, op: ModelOperation, slug: string): CheckDefinition[] {
  const checks = [noTokenCheck(op, slug), otherResourceCheck(model, op, slug)];
  for (const letters of otherLetterSets(model, op)) checks.push(lettersCheck(op, slug, letters));
  checks.push(requiredScopeCheck(op, slug));
  if (op.interaction === 'create' || op.interaction === 'update') {
    const schema = variantSchemaOf(op);
    if (schema) for (const variant of invalidVariants(schema)) checks.push(invalidPayloadCheck(op, slug, schema, variant));
  }
  return checks;
}

export default function generatedChecks(model: OperationModel): CheckDefinition[] {
  const names = slugs(model.operations);
  return model.operations.flatMap((op) => checksFor(model, op, names.get(op)!));
}
