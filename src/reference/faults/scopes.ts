/**
 * Faults of the scopes and generated areas: scope enforcement (decided in the
 * HTTP core through `scopeOverride`), the codes of 401/403 refusals, the
 * validation error's status and issue code, and the published scope form.
 */
import type { OperationDef } from '../../service/api.js';
import { hasScope } from '../auth.js';
import { catalogError, operationOutcome } from '../outcome.js';
import type { FaultDef, FaultResponse } from './types.js';
import { perOperationScopeOverride } from './generated.js';

/** Scope-enforcement faults: the grant decision each one forces, or undefined where it does not apply. */
const SCOPE_RULES: Record<string, (held: readonly string[], op: OperationDef) => boolean | undefined> = {
  'encounter-read-scope-not-enforced': (_held, op) => (op.operationId === 'Encounter.read' ? true : undefined),
  'rs-accepted-for-update': (held, op) => (op.interaction === 'update' && held.includes(`system/${op.resource}.rs`) ? true : undefined),
  'medication-request-c-accepted-for-others': (held, op) =>
    op.resource === 'MedicationRequest' && op.interaction !== 'create' && held.includes('system/MedicationRequest.c') ? true : undefined,
  // The published scope itself stops counting; only a broader one would do.
  'rs-refused-for-read-search': (held, op) => (op.interaction === 'read' || op.interaction === 'search-type' ? withoutExact(held, op) : undefined),
  'cru-refused-for-update': (held, op) => (op.interaction === 'update' ? withoutExact(held, op) : undefined),
  'cru-refused-for-create': (held, op) => (op.interaction === 'create' && op.scope.endsWith('.cru') ? withoutExact(held, op) : undefined),
  'upload-refuses-cru': (held, op) => (op.interaction === 'operation' ? withoutExact(held, op) : undefined),
  'medication-request-create-refuses-c': (held, op) => (op.operationId === 'MedicationRequest.create' ? withoutExact(held, op) : undefined),
  'r5-scopes-not-shared': (_held, op) => (op.release === 'R5' ? false : undefined),
};

function withoutExact(held: readonly string[], op: OperationDef): boolean {
  return hasScope(held.filter((s) => s !== op.scope), op.scope);
}

/** The scope decision a planted fault forces for this call, or undefined (the normal letter rule applies). */
export function scopeOverride(planted: ReadonlySet<string>, held: readonly string[], op: OperationDef): boolean | undefined {
  const perOperation = perOperationScopeOverride(planted, op);
  if (perOperation !== undefined) return perOperation;
  for (const [name, rule] of Object.entries(SCOPE_RULES)) {
    const verdict = planted.has(name) ? rule(held, op) : undefined;
    if (verdict !== undefined) return verdict;
  }
  return undefined;
}

interface Issue {
  code?: unknown;
  details?: { coding?: Array<{ code?: unknown }> };
}

/** The catalog code of a reference error response. */
function codeOf(res: FaultResponse): string | undefined {
  const issue = (res.body as { issue?: Issue[] } | undefined)?.issue?.[0];
  const code = issue?.details?.coding?.[0]?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The same response turned into another catalog error. */
function asCatalogError(res: FaultResponse, code: string, status?: number): FaultResponse {
  const err = catalogError(code, status === undefined ? {} : { status });
  return { ...res, status: err.status, body: operationOutcome(err) };
}

export const faults: FaultDef[] = [
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
    name: 'medication-request-c-accepted-for-others',
    area: 'scopes',
    violates: ['scopes.medication-request-c-not-enough-for-others'],
    symptom: 'A token with only system/MedicationRequest.c reads, searches and updates MedicationRequests.',
    checks: ['scopes.medication-request-c-refused-for-others', 'generated.medication-request-read.letters-c'],
  },
  {
    name: 'rs-refused-for-read-search',
    area: 'generated',
    violates: ['scopes.rs-for-read-search'],
    symptom: 'Read and search refuse a token holding exactly the .rs scope (403 HPB-00104).',
    checks: ['generated.encounter-read.required-scope', 'generated.medication-request-search.required-scope', 'generated.document-reference-read.required-scope'],
  },
  {
    name: 'cru-refused-for-update',
    area: 'generated',
    violates: ['scopes.cru-for-update-and-create'],
    symptom: 'Updates refuse a token holding exactly the .cru scope (403 HPB-00104).',
    checks: ['generated.encounter-update.required-scope', 'generated.medication-request-update.required-scope', 'generated.document-reference-update.required-scope'],
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
    name: 'medication-request-create-refuses-c',
    area: 'scopes',
    violates: ['scopes.medication-request-create-c-only', 'scopes.c-for-medication-request-create'],
    symptom: 'MedicationRequest create refuses a token holding only system/MedicationRequest.c (403 HPB-00104).',
    checks: ['scopes.medication-request-create-with-c', 'generated.medication-request-create.required-scope'],
  },
  {
    name: 'r5-scopes-not-shared',
    area: 'scopes',
    violates: ['scopes.shared-across-releases', 'document-reference.mirror-r4'],
    symptom: 'Every /fhir/R5 call is refused with 403 HPB-00104, whatever the token holds.',
    checks: ['scopes.document-reference-rs-both-releases', 'scopes.one-token-r4-and-r5'],
  },
  {
    name: 'scope-refusal-wrong-code',
    area: 'generated',
    violates: ['catalog.hpb-00104'],
    symptom: 'A token without the needed scope gets 403 SVC-00005 instead of HPB-00104.',
    checks: ['scopes.medication-request-c-refused-for-others', 'generated.encounter-read.other-resource-scope', 'generated.medication-request-search.letters-c'],
    transformResponse: (res) => (res.status === 403 && codeOf(res) === 'HPB-00104' ? asCatalogError(res, 'SVC-00005') : res),
  },
  {
    name: 'missing-token-403',
    area: 'generated',
    violates: ['auth.missing-bearer-401'],
    symptom: 'A FHIR call without a bearer token gets 403 SVC-00005 instead of 401.',
    checks: ['auth.missing-bearer-401', 'generated.encounter-read.no-token', 'generated.document-reference-upload.no-token'],
    transformResponse: (res) => (res.status === 401 && codeOf(res) === 'SVC-00004' ? asCatalogError(res, 'SVC-00005') : res),
  },
  {
    name: 'missing-token-wrong-code',
    area: 'generated',
    violates: ['catalog.svc-00004'],
    symptom: 'A FHIR call without a bearer token gets 401 carrying HPB-00104 (a 403 code) instead of SVC-00004.',
    checks: ['generated.medication-request-read.no-token', 'generated.encounter-update.no-token'],
    transformResponse: (res) => (res.status === 401 && codeOf(res) === 'SVC-00004' ? asCatalogError(res, 'HPB-00104', 401) : res),
  },
  {
    name: 'validation-error-500',
    area: 'generated',
    violates: ['catalog.hpb-00101'],
    symptom: 'An invalid write body gets 500 SVC-00001 instead of 400/422 HPB-00101.',
    checks: ['generated.medication-request-create.invalid-missing-subject', 'generated.encounter-update.invalid-wrong-type-class'],
    transformResponse: (res, req) =>
      req.method !== 'GET' && req.path.startsWith('/fhir/') && codeOf(res) === 'HPB-00101' ? asCatalogError(res, 'SVC-00001') : res,
  },
  {
    name: 'validation-error-issue-processing',
    area: 'generated',
    violates: ['errors.invalid-issue-code'],
    symptom: 'A 400 HPB-00101 carries issue code processing instead of invalid.',
    checks: ['generated.medication-request-create.invalid-missing-subject', 'errors.invalid-body-hpb-00101'],
    transformResponse: (res) => {
      if (res.status !== 400 || codeOf(res) !== 'HPB-00101') return res;
      const body = res.body as { issue: Issue[] };
      return { ...res, body: { ...body, issue: body.issue.map((i, n) => (n === 0 ? { ...i, code: 'processing' } : i)) } };
    },
  },
  {
    name: 'scopes-supported-wrong-form',
    area: 'scopes',
    violates: ['scopes.form'],
    symptom: 'smart-configuration lists scopes without the system/ prefix (e.g. MedicationRequest.rs).',
    checks: ['scopes.form'],
    transformResponse: (res, req) => {
      if (req.path !== '/fhir/.well-known/smart-configuration' || res.status !== 200) return res;
      const body = res.body as { scopes_supported?: string[] };
      return { ...res, body: { ...body, scopes_supported: (body.scopes_supported ?? []).map((s) => s.replace(/^system\//, '')) } };
    },
  },
  {
    name: 'encounter-read-scope-refusal-500',
    area: 'generated',
    violates: ['encounter.read-403', 'catalog.hpb-00104'],
    symptom: 'GET /fhir/R4/Encounter/{id} with a token lacking system/Encounter.rs answers 500 SVC-00001, every time, instead of 403 HPB-00104.',
    checks: ['generated.encounter-read.other-resource-scope'],
    transformResponse: (res, req) => (req.op?.operationId === 'Encounter.read' && res.status === 403 && codeOf(res) === 'HPB-00104' ? asCatalogError(res, 'SVC-00001') : res),
  },
  {
    name: 'encounter-update-500',
    area: 'generated',
    violates: ['encounter.update-returns-resource'],
    symptom: 'A valid PUT /fhir/R4/Encounter/{id} answers 500 SVC-00001, every time; other calls are served normally.',
    checks: ['generated.encounter-update.required-scope'],
    transformResponse: (res, req) => (req.op?.operationId === 'Encounter.update' && res.status < 300 ? asCatalogError(res, 'SVC-00001') : res),
  },
];
