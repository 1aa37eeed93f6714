/**
 * One family of faults per published operation, generated from the API
 * description: the operation's scope is not enforced, its own required scope
 * is refused, or a missing token is not answered with 401. Each breaks the
 * operation's own rows of the spec's endpoint tables.
 */
import { OPERATIONS, type OperationDef } from '../../service/api.js';
import { requirementById } from '../../requirements/index.js';
import type { FaultDef } from './types.js';

const KNOWN = requirementById();

const kebab = (s: string) => s.replace(/([a-z])([A-Z])/g, '$1-$2').replace(/\./g, '-').toLowerCase();
const SHORT: Record<OperationDef['interaction'], string> = { read: 'read', update: 'update', 'search-type': 'search', create: 'create', operation: 'upload' };

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

/** The scope decision a per-operation fault forces for this call, or undefined. */
export function perOperationScopeOverride(planted: ReadonlySet<string>, op: OperationDef): boolean | undefined {
  if (planted.has(scopeNotEnforced(op))) return true;
  if (planted.has(requiredScopeRefused(op))) return false;
  return undefined;
}

/** Id of the generated check of this operation (suites/generated: the slug is the kebab-case operationId). */
const generatedCheck = (op: OperationDef, suffix: string) => `generated.${kebab(op.operationId)}.${suffix}`;

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
]).filter((f) => f.violates.length > 0);
