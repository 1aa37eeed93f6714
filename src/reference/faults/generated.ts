/**
 * One family of faults per published operation, generated from the API
 * description: the operation's scope is not enforced, its own required scope
 * is refused, a missing token is not answered with 401, a letter set of the
 * resource the spec refuses for the operation is served, or (creates and
 * updates with a published body schema) one rule of the body is not enforced.
 * Each breaks the operation's own rows of the spec's endpoint tables.
 */
import { OPERATIONS, type OperationDef } from '../../service/api.js';
import { COMPONENT_SCHEMAS, writeSchemaName } from '../../service/schemas.js';
import { letterVerdict, parseScope } from '../../service/scope-letters.js';
import { requirementById } from '../../requirements/index.js';
import { asCatalogError, kebab, outcomeCode, SHORT, type Issue } from './edit.js';
import type { FaultDef } from './types.js';

const KNOWN = requirementById();

/** Requirement ids of the operation's table row (only those the catalog has). */
function rowIds(op: OperationDef, suffix: 'scope' | '401' | '403'): string[] {
  const res = kebab(op.resource);
  const ids = [`${res}.${SHORT[op.interaction]}-${suffix}`];
  if (op.resource === 'DocumentReference' && suffix !== '401') ids.push(`document-reference.scope-${op.scope.endsWith('.rs') ? 'rs' : 'cru'}`);
  if (suffix === '401') ids.push('auth.bearer-on-fhir-calls');
  if (suffix === '403') ids.push('scopes.insufficient-403');
  return ids.filter((id) => KNOWN.has(id));
}

export const scopeNotEnforced = (op: OperationDef) => `scope-not-enforced-${kebab(op.operationId)}`;
export const requiredScopeRefused = (op: OperationDef) => `required-scope-refused-${kebab(op.operationId)}`;

export const lettersAccepted = (op: OperationDef, letters: string) => `scope-letters-${letters}-accepted-${kebab(op.operationId)}`;

/** The letter rule each required letter set is stated in (as suites/generated names it). */
const LETTER_RULE: Record<string, string> = {
  rs: 'scopes.rs-for-read-search',
  cru: 'scopes.cru-for-update-and-create',
  c: 'scopes.c-for-medication-request-create',
};

/**
 * The other letter sets published for the operation's resource that no reading of the
 * spec lets perform it (src/service/scope-letters.ts): the ones it must refuse with 403.
 */
function refusedLetterSets(op: OperationDef): string[] {
  return REFUSED_LETTERS.get(op.operationId) ?? [];
}

function refusedLetterSetsUncached(op: OperationDef): string[] {
  const own = parseScope(op.scope);
  if (!own) return [];
  const sets = new Set(OPERATIONS.filter((o) => o.resource === op.resource).map((o) => parseScope(o.scope)?.letters));
  return [...sets].filter((l): l is string => l !== undefined && l !== own.letters && letterVerdict(l, own.letters, op.interaction) === 'refused').sort();
}

const REFUSED_LETTERS = new Map(OPERATIONS.map((op) => [op.operationId, refusedLetterSetsUncached(op)]));

/** The scope decision a per-operation fault forces for this call, or undefined. */
export function perOperationScopeOverride(planted: ReadonlySet<string>, held: readonly string[], op: OperationDef): boolean | undefined {
  if (planted.size === 0) return undefined; // the clean reference: no fault names to make (every request)
  if (planted.has(scopeNotEnforced(op))) return true;
  if (planted.has(requiredScopeRefused(op))) return false;
  for (const letters of refusedLetterSets(op)) {
    if (planted.has(lettersAccepted(op, letters)) && held.includes(`system/${op.resource}.${letters}`)) return true;
  }
  return undefined;
}

/** Id of the generated check of this operation (suites/generated: the slug is the kebab-case operationId). */
const generatedCheck = (op: OperationDef, suffix: string) => `generated.${kebab(op.operationId)}.${suffix}`;

/** Requirement ids a served letter set breaks: the operation's 403 row, the letter rule of its scope, the resource's scope. */
function lettersIds(op: OperationDef, letters: string): string[] {
  const own = parseScope(op.scope)!.letters;
  const ids = [`${kebab(op.resource)}.${SHORT[op.interaction]}-403`, LETTER_RULE[own]];
  if (op.resource === 'MedicationRequest' && letters === 'c') ids.push('scopes.medication-request-c-not-enough-for-others');
  if (op.resource === 'DocumentReference') ids.push(`document-reference.scope-${own}`);
  return ids.filter((id): id is string => id !== undefined && KNOWN.has(id));
}

// ---- body rules of creates and updates ----------------------------------

type SchemaNode = { type?: unknown; $ref?: unknown; required?: unknown; properties?: Record<string, SchemaNode> };

const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array']);

/**
 * One rule of a write body, as suites/generated/invalid-variants.ts derives its invalid
 * variants from the published schema: a required field present, resourceType right, a
 * required field of its JSON type.
 */
export interface BodyRule {
  kind: 'missing' | 'wrong-resource-type' | 'wrong-type';
  field: string;
  /** For `wrong-type`: the JSON type the schema gives the field. */
  jsonType?: string;
  /** The variant slug of the check (`missing-status`, `wrong-type-class`, `wrong-resource-type`). */
  slug: string;
}

/** The published write schema of a create or update (the OpenAPI document covers R4 only). */
function writeSchemaOf(op: OperationDef): SchemaNode | undefined {
  if ((op.interaction !== 'create' && op.interaction !== 'update') || op.release !== 'R4') return undefined;
  return COMPONENT_SCHEMAS[writeSchemaName(op.resource)] as SchemaNode | undefined;
}

function jsonTypeOfField(schema: SchemaNode, field: string): string | undefined {
  const node = schema.properties?.[field];
  const target = typeof node?.$ref === 'string' ? (COMPONENT_SCHEMAS[node.$ref.replace('#/components/schemas/', '')] as SchemaNode | undefined) : node;
  return typeof target?.type === 'string' && JSON_TYPES.has(target.type) ? target.type : undefined;
}

const fieldSlug = (f: string) => f.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();

function bodyRulesUncached(op: OperationDef): BodyRule[] {
  const schema = writeSchemaOf(op);
  const required = Array.isArray(schema?.required) ? schema.required.filter((f): f is string => typeof f === 'string') : [];
  const rules: BodyRule[] = required.map((field) => ({ kind: 'missing', field, slug: `missing-${fieldSlug(field)}` }));
  if (required.includes('resourceType')) rules.push({ kind: 'wrong-resource-type', field: 'resourceType', slug: 'wrong-resource-type' });
  for (const field of required) {
    const jsonType = field === 'resourceType' ? undefined : jsonTypeOfField(schema!, field);
    if (jsonType) rules.push({ kind: 'wrong-type', field, jsonType, slug: `wrong-type-${fieldSlug(field)}` });
  }
  return rules;
}

const BODY_RULES = new Map(OPERATIONS.map((op) => [op.operationId, bodyRulesUncached(op)]));

/** The body rules of an operation (none for reads, searches, operations and unpublished bodies). */
export function bodyRules(op: OperationDef): BodyRule[] {
  return BODY_RULES.get(op.operationId) ?? [];
}

export const bodyRuleNotEnforced = (op: OperationDef, rule: BodyRule) => `body-${rule.slug}-accepted-${kebab(op.operationId)}`;

function hasJsonType(value: unknown, jsonType: string | undefined): boolean {
  if (jsonType === 'array') return Array.isArray(value);
  if (jsonType === 'object') return typeof value === 'object' && value !== null && !Array.isArray(value);
  if (jsonType === 'integer') return Number.isInteger(value);
  return typeof value === jsonType;
}

/** Which body rules of one operation a planted fault switched off (every method false on the clean reference). */
export interface BodyLeniency {
  /**
   * True when `value` (undefined: absent) of `field` breaks a rule a planted fault switched
   * off for this operation: the handler then skips every check of that field.
   */
  skips(field: string, value: unknown): boolean;
}

/** No body rule switched off (the clean reference). */
const STRICT: BodyLeniency = { skips: () => false };

export function bodyLeniency(planted: ReadonlySet<string>, operationId: string): BodyLeniency {
  if (planted.size === 0) return STRICT;
  const op = OPERATIONS.find((o) => o.operationId === operationId);
  const off = op ? bodyRules(op).filter((r) => planted.has(bodyRuleNotEnforced(op, r))) : [];
  return {
    skips(field, value) {
      return off.some((r) => {
        if (r.field !== field) return false;
        if (r.kind === 'missing') return value === undefined;
        if (r.kind === 'wrong-resource-type') return value !== undefined && value !== op!.resource;
        return value !== undefined && !hasJsonType(value, r.jsonType);
      });
    },
  };
}

/** Checks of the resource suites that send a body breaking the same rule to the same operation: they fail with the fault too. */
const SAME_BODY_CHECKS: Record<string, string[]> = {
  'Encounter.create missing-status': ['encounter.create-invalid-400'],
  'Encounter.update missing-class': ['encounter.update-invalid-400'],
  'MedicationRequest.create missing-medication-codeable-concept': ['medication-request.create-without-medication-refused'],
  'MedicationRequest.create missing-subject': ['medication-request.create-without-subject-refused'],
};

/** Requirement ids an unenforced body rule breaks: the HPB-00101 statement and the operation's 400 row. */
function bodyRuleIds(op: OperationDef, rule: BodyRule): string[] {
  const statement = rule.kind === 'missing' ? 'catalog.hpb-00101-required-fields' : 'catalog.hpb-00101-schema';
  return [statement, `${kebab(op.resource)}.${SHORT[op.interaction]}-400`].filter((id) => KNOWN.has(id));
}

function bodySymptom(op: OperationDef, rule: BodyRule): string {
  const call = `${op.method} ${op.path}`;
  const refused = 'instead of 400/422 HPB-00101';
  if (rule.field === 'resourceType') {
    const what = rule.kind === 'missing' ? 'without resourceType' : "with another type's resourceType";
    return `${call} ${what} answers 2xx and stores the body as ${op.resource} (the URL gives the type), ${refused}.`;
  }
  const what = rule.kind === 'missing' ? `without ${rule.field}` : `with ${rule.field} not a JSON ${rule.jsonType}`;
  // A MedicationRequest has no patient to hang from without a usable subject: a create stores it without one, an update keeps the stored one.
  const stored =
    op.resource === 'MedicationRequest' && rule.field === 'subject'
      ? op.interaction === 'create'
        ? 'stores the MedicationRequest without a subject'
        : 'keeps the stored subject'
      : rule.kind === 'missing'
        ? `stores the ${op.resource} without it`
        : `stores ${rule.field} as sent`;
  return `${call} ${what} answers 2xx and ${stored}, ${refused}.`;
}

export const faults: FaultDef[] = OPERATIONS.flatMap((op): FaultDef[] => [
  {
    name: scopeNotEnforced(op),
    area: 'generated',
    violates: rowIds(op, '403'),
    symptom: `${op.method} ${op.path} serves a token that lacks ${op.scope}.`,
    checks: [generatedCheck(op, 'other-resource-scope')],
  },
  {
    name: requiredScopeRefused(op),
    area: 'generated',
    violates: rowIds(op, 'scope'),
    symptom: `${op.method} ${op.path} refuses a token holding exactly ${op.scope} with 403.`,
    checks: [generatedCheck(op, 'required-scope')],
  },
  {
    name: `missing-token-not-401-${kebab(op.operationId)}`,
    area: 'generated',
    violates: rowIds(op, '401'),
    symptom: `${op.method} ${op.path} without a bearer token answers 400 instead of 401.`,
    checks: [generatedCheck(op, 'no-token')],
    transformResponse: (res, req) => (req.op?.operationId === op.operationId && res.status === 401 ? { ...res, status: 400 } : res),
  },
  ...refusedLetterSets(op).map(
    (letters): FaultDef => ({
      name: lettersAccepted(op, letters),
      area: 'generated',
      violates: lettersIds(op, letters),
      symptom: `${op.method} ${op.path} serves a token holding only system/${op.resource}.${letters}, which no reading of the letter rule lets it (it requires ${op.scope}).`,
      // The scopes suite's c-only check calls read, search and update with the same token.
      checks: [
        generatedCheck(op, `letters-${letters}`),
        ...(op.resource === 'MedicationRequest' && letters === 'c' ? ['scopes.medication-request-c-refused-for-others'] : []),
      ],
    }),
  ),
  ...bodyRules(op).map(
    (rule): FaultDef => ({
      name: bodyRuleNotEnforced(op, rule),
      area: 'generated',
      violates: bodyRuleIds(op, rule),
      symptom: bodySymptom(op, rule),
      checks: [generatedCheck(op, `invalid-${rule.slug}`), ...(SAME_BODY_CHECKS[`${op.operationId} ${rule.slug}`] ?? [])],
    }),
  ),
]).filter((f) => f.violates.length > 0);

faults.push(
  {
    name: 'invalid-body-accepted',
    area: 'generated',
    violates: ['catalog.hpb-00101-schema', 'catalog.hpb-00101-required-fields'],
    symptom: 'A create or update whose body breaks the schema or lacks required fields is answered 200 instead of 400/422 HPB-00101.',
    checks: [
      'generated.medication-request-create.invalid-missing-subject',
      'generated.medication-request-update.invalid-wrong-type-subject',
      'generated.encounter-create.invalid-missing-class',
      'generated.encounter-update.invalid-wrong-resource-type',
      // R5 DocumentReference: the target publishes no request schema; the variants come from the HL7 FHIR R5 schema.
      'generated.document-reference-create.invalid-missing-content',
      'generated.document-reference-update.invalid-wrong-type-content',
    ],
    transformResponse: (res, req) => {
      const issue = (res.body as { issue?: Array<{ details?: { coding?: Array<{ code?: unknown }> } }> } | undefined)?.issue?.[0];
      const validation = issue?.details?.coding?.some((c) => c.code === 'HPB-00101');
      return (req.method === 'POST' || req.method === 'PUT') && req.op && validation && (res.status === 400 || res.status === 422)
        ? { ...res, status: 200 }
        : res;
    },
  },
  {
    name: 'encounter-read-scope-not-enforced',
    area: 'generated',
    violates: ['encounter.read-403'],
    symptom: 'GET /fhir/R4/Encounter/{id} answers any valid token, whatever its scopes.',
    checks: ['generated.encounter-read.other-resource-scope'],
  },
  {
    name: 'rs-accepted-for-update',
    area: 'generated',
    violates: ['scopes.cru-for-update-and-create'],
    symptom: 'An update succeeds with a token holding only system/<ResourceType>.rs.',
    checks: ['generated.encounter-update.letters-rs', 'generated.medication-request-update.letters-rs', 'generated.document-reference-update.letters-rs'],
  },
  {
    name: 'rs-refused-for-read-search',
    area: 'generated',
    violates: ['scopes.rs-for-read-search'],
    symptom: 'Read and search refuse a token holding exactly the .rs scope (403 HPB-00104).',
    checks: [
      'generated.encounter-read.required-scope',
      'generated.medication-request-search.required-scope',
      'generated.document-reference-read.required-scope',
    ],
  },
  {
    name: 'cru-refused-for-update',
    area: 'generated',
    violates: ['scopes.cru-for-update-and-create'],
    symptom: 'Updates refuse a token holding exactly the .cru scope (403 HPB-00104).',
    checks: [
      'generated.encounter-update.required-scope',
      'generated.medication-request-update.required-scope',
      'generated.document-reference-update.required-scope',
    ],
  },
  {
    name: 'cru-refused-for-create',
    area: 'generated',
    violates: ['scopes.cru-for-update-and-create'],
    symptom: 'Encounter and DocumentReference create refuse a token holding exactly the .cru scope (403 HPB-00104).',
    checks: ['generated.encounter-create.required-scope', 'generated.document-reference-create.required-scope'],
  },
  {
    name: 'upload-refuses-cru',
    area: 'generated',
    violates: ['document-reference.scope-cru'],
    symptom: 'The DocumentReference $upload operation refuses a token holding exactly system/DocumentReference.cru (403 HPB-00104).',
    checks: ['generated.document-reference-upload.required-scope'],
  },
  {
    name: 'scope-refusal-wrong-code',
    area: 'generated',
    violates: ['catalog.hpb-00104'],
    symptom: 'A token without the needed scope gets 403 SVC-00005 instead of HPB-00104.',
    checks: [
      'scopes.medication-request-c-refused-for-others',
      'generated.encounter-read.other-resource-scope',
      'generated.medication-request-search.letters-c',
    ],
    transformResponse: (res) => (res.status === 403 && outcomeCode(res.body) === 'HPB-00104' ? asCatalogError(res, 'SVC-00005') : res),
  },
  {
    name: 'missing-token-403',
    area: 'generated',
    violates: ['auth.missing-bearer-401'],
    symptom: 'A FHIR call without a bearer token gets 403 SVC-00005 instead of 401.',
    checks: ['auth.missing-bearer-401', 'generated.encounter-read.no-token', 'generated.document-reference-upload.no-token'],
    transformResponse: (res) => (res.status === 401 && outcomeCode(res.body) === 'SVC-00004' ? asCatalogError(res, 'SVC-00005') : res),
  },
  {
    name: 'missing-token-wrong-code',
    area: 'generated',
    violates: ['catalog.svc-00004'],
    symptom: 'A FHIR call without a bearer token gets 401 carrying HPB-00104 (a 403 code) instead of SVC-00004.',
    checks: ['generated.medication-request-read.no-token', 'generated.encounter-update.no-token'],
    transformResponse: (res) => (res.status === 401 && outcomeCode(res.body) === 'SVC-00004' ? asCatalogError(res, 'HPB-00104', 401) : res),
  },
  {
    name: 'validation-error-500',
    area: 'generated',
    violates: ['catalog.hpb-00101'],
    symptom: 'An invalid write body gets 500 SVC-00001 instead of 400/422 HPB-00101.',
    checks: ['generated.medication-request-create.invalid-missing-subject', 'generated.encounter-update.invalid-wrong-type-class'],
    transformResponse: (res, req) =>
      req.method !== 'GET' && req.path.startsWith('/fhir/') && outcomeCode(res.body) === 'HPB-00101' ? asCatalogError(res, 'SVC-00001') : res,
  },
  {
    name: 'validation-error-issue-processing',
    area: 'generated',
    violates: ['errors.invalid-issue-code'],
    symptom: 'A 400 HPB-00101 carries issue code processing instead of invalid.',
    checks: ['generated.medication-request-create.invalid-missing-subject', 'errors.invalid-body-hpb-00101'],
    transformResponse: (res) => {
      if (res.status !== 400 || outcomeCode(res.body) !== 'HPB-00101') return res;
      const body = res.body as { issue: Issue[] };
      return { ...res, body: { ...body, issue: body.issue.map((i, n) => (n === 0 ? { ...i, code: 'processing' } : i)) } };
    },
  },
  {
    name: 'encounter-read-scope-refusal-500',
    area: 'generated',
    violates: ['encounter.read-403', 'catalog.hpb-00104'],
    symptom: 'GET /fhir/R4/Encounter/{id} with a token lacking system/Encounter.rs answers 500 SVC-00001, every time, instead of 403 HPB-00104.',
    checks: ['generated.encounter-read.other-resource-scope'],
    transformResponse: (res, req) =>
      req.op?.operationId === 'Encounter.read' && res.status === 403 && outcomeCode(res.body) === 'HPB-00104' ? asCatalogError(res, 'SVC-00001') : res,
  },
  {
    name: 'encounter-update-500',
    area: 'generated',
    violates: ['encounter.update-returns-resource'],
    symptom: 'A valid PUT /fhir/R4/Encounter/{id} answers 500 SVC-00001, every time; other calls are served normally.',
    checks: ['generated.encounter-update.required-scope'],
    transformResponse: (res, req) => (req.op?.operationId === 'Encounter.update' && res.status < 300 ? asCatalogError(res, 'SVC-00001') : res),
  },
);
