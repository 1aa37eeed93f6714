/**
 * Faults of the scopes and generated areas: scope enforcement (decided in the
 * HTTP core through `scopeOverride`), the codes of 401/403 refusals, the
 * validation error's status and issue code, and the published scope form.
 */
import type { OperationDef } from '../../service/api.js';
import { hasScope } from '../auth.js';
import type { FaultDef } from './types.js';
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
  return hasScope(
    held.filter((s) => s !== op.scope),
    op.scope,
  );
}

/** The scope decision a planted fault forces for this call, or undefined (the normal letter rule applies). */
export function scopeOverride(planted: ReadonlySet<string>, held: readonly string[], op: OperationDef): boolean | undefined {
  const perOperation = perOperationScopeOverride(planted, held, op);
  if (perOperation !== undefined) return perOperation;
  for (const [name, rule] of Object.entries(SCOPE_RULES)) {
    const verdict = planted.has(name) ? rule(held, op) : undefined;
    if (verdict !== undefined) return verdict;
  }
  return undefined;
}

export const faults: FaultDef[] = [
  {
    name: 'medication-request-c-accepted-for-others',
    area: 'scopes',
    violates: ['scopes.medication-request-c-not-enough-for-others'],
    symptom: 'A token with only system/MedicationRequest.c reads, searches and updates MedicationRequests.',
    checks: ['scopes.medication-request-c-refused-for-others', 'generated.medication-request-read.letters-c'],
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
];
