/**
 * One fault per R4 MedicationRequest and Encounter operation: while the key is
 * over its limit, that operation's 429 loses its catalog code (no `details`,
 * plain-text diagnostics), breaking the "429 `HPB-00105`" cell of its row of
 * the endpoint table. Caught by `rate-limit.operations-429`.
 */
import { OPERATIONS, type OperationDef } from '../../service/api.js';
import type { FaultDef, FaultResponse } from './types.js';

const kebab = (s: string) => s.replace(/([a-z])([A-Z])/g, '$1-$2').replace(/\./g, '-').toLowerCase();
const SHORT: Partial<Record<OperationDef['interaction'], string>> = { read: 'read', update: 'update', 'search-type': 'search', create: 'create' };

/** The 429 body with its catalog code removed: issue code and a plain diagnostics text only. */
function withoutCatalogCode(res: FaultResponse): FaultResponse {
  const body = res.body as { issue?: Array<Record<string, unknown>> } | undefined;
  const issue = body?.issue?.[0];
  if (!issue) return res;
  const { details: _details, ...rest } = issue;
  const diagnostics = typeof rest.diagnostics === 'string' ? rest.diagnostics.replace(/^[A-Z]{3}-\d{5}: /, '') : 'Too many requests';
  return { ...res, body: { ...body, issue: [{ ...rest, diagnostics }, ...body.issue!.slice(1)] } };
}

export const throttledWithoutCode = (op: OperationDef) => `throttled-without-code-${kebab(op.operationId)}`;

export const faults: FaultDef[] = OPERATIONS.filter(
  (op) => op.release === 'R4' && (op.resource === 'MedicationRequest' || op.resource === 'Encounter') && SHORT[op.interaction],
).map((op) => ({
  name: throttledWithoutCode(op),
  area: 'rate-limit',
  violates: [`${kebab(op.resource)}.${SHORT[op.interaction]}-429`],
  symptom: `${op.method} ${op.path} over the key's limit answers 429 without the catalog code HPB-00105.`,
  checks: ['rate-limit.operations-429'],
  transformResponse: (res, req) => (req.op?.operationId === op.operationId && res.status === 429 ? withoutCatalogCode(res) : res),
}));
