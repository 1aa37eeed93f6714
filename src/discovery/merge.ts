/** Comparing the OpenAPI document with the R4 CapabilityStatement, and merging both into one model. */
import type { ModelOperation } from './model.js';

const OPENAPI = 'the OpenAPI document';
const CAPABILITY = 'the R4 CapabilityStatement';

export function operationKey(op: ModelOperation): string {
  return `${op.release} ${op.method} ${op.path}`;
}

function label(op: ModelOperation): string {
  const what = op.interaction === 'operation' ? `$${op.operationName}` : op.interaction;
  return `${op.method} ${op.path} (${op.resource} ${what})`;
}

/** Every difference between the R4 operations of the two documents, one readable line each. */
export function divergences(openapiOps: ModelOperation[], capabilityOps: ModelOperation[]): string[] {
  const r4 = (ops: ModelOperation[]) => new Map(ops.filter((o) => o.release === 'R4').map((o) => [operationKey(o), o]));
  const fromOpenApi = r4(openapiOps);
  const fromCapability = r4(capabilityOps);
  const out: string[] = [];
  for (const [key, op] of fromOpenApi) {
    const other = fromCapability.get(key);
    if (!other) {
      out.push(`${label(op)} is in ${OPENAPI} but not in ${CAPABILITY}`);
      continue;
    }
    if (op.interaction === 'search-type') {
      const a = new Set(op.searchParams.map((p) => p.name));
      const b = new Set(other.searchParams.map((p) => p.name));
      const onlyA = [...a].filter((n) => !b.has(n)).sort();
      const onlyB = [...b].filter((n) => !a.has(n)).sort();
      if (onlyA.length || onlyB.length) {
        out.push(
          `${label(op)}: search parameters differ: only in ${OPENAPI}: ${onlyA.join(', ') || '(none)'}; only in ${CAPABILITY}: ${onlyB.join(', ') || '(none)'}`,
        );
      }
    }
    if (op.scope && other.scope && op.scope !== other.scope) {
      out.push(`${label(op)}: scope differs: ${OPENAPI} has ${op.scope}, ${CAPABILITY} has ${other.scope}`);
    }
  }
  for (const [key, op] of fromCapability) {
    if (!fromOpenApi.has(key)) out.push(`${label(op)} is in ${CAPABILITY} but not in ${OPENAPI}`);
  }
  return out;
}

/**
 * One operation per release + method + path. The OpenAPI side wins for ids,
 * scope and schemas; search parameters are the union (CapabilityStatement types first).
 */
export function mergeOperations(...groups: ModelOperation[][]): ModelOperation[] {
  const merged = new Map<string, ModelOperation>();
  for (const op of groups.flat()) {
    const key = operationKey(op);
    const prev = merged.get(key);
    if (!prev) {
      merged.set(key, { ...op, searchParams: [...op.searchParams], sources: [...op.sources] });
      continue;
    }
    const openapiFirst = prev.sources.includes('openapi') ? [prev, op] : [op, prev];
    const [primary, secondary] = openapiFirst;
    const params = new Map(primary.searchParams.map((p) => [p.name, p]));
    for (const p of secondary.searchParams) {
      const existing = params.get(p.name);
      params.set(p.name, !existing || (p.type && !secondary.sources.includes('openapi')) ? { ...existing, ...p } : existing);
    }
    const next: ModelOperation = {
      ...secondary,
      ...primary,
      scope: primary.scope ?? secondary.scope,
      searchParams: [...params.values()],
      errorStatuses: [...new Set([...primary.errorStatuses, ...secondary.errorStatuses])].sort((a, b) => a - b),
      errorCodes: [...new Set([...primary.errorCodes, ...secondary.errorCodes])].sort(),
      sources: [...new Set([...prev.sources, ...op.sources])],
    };
    // A path published by either document is not a guess.
    if (!primary.pathAssumed || !secondary.pathAssumed) delete next.pathAssumed;
    merged.set(key, next);
  }
  const sortKey = (o: ModelOperation) => `${o.release} ${o.path} ${o.method}`;
  const ops = [...merged.values()].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
  return withUniqueIds(ops);
}

/** Suffixes `.R5` (or the release) to ids that would otherwise repeat. */
function withUniqueIds(ops: ModelOperation[]): ModelOperation[] {
  const seen = new Set<string>();
  return ops.map((op) => {
    let id = op.operationId;
    if (seen.has(id)) id = `${id}.${op.release}`;
    for (let n = 2; seen.has(id); n++) id = `${op.operationId}.${op.release}.${n}`;
    seen.add(id);
    return id === op.operationId ? op : { ...op, operationId: id };
  });
}
