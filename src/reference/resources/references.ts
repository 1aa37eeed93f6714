/**
 * The records a write's body refers to (a subject, an encounter, a participant), resolved in the
 * caller's organization only: a record of another organization is as missing as one that does not
 * exist ("An id that does not exist in the caller's organization gives 404"), so a write naming one is
 * refused exactly as a write naming no record at all, and tells the caller nothing of other
 * organizations. How such a write is refused is mode unresolvedReference's (types.ts).
 */
import type { ResourceEnv } from './env.js';
import { forbidden, notFound } from './errors.js';
import type { Table } from './store.js';

/**
 * The caller's record `type/id`, or the write's refusal (`refuse`: the handler's 400/422 HPB-00101;
 * mode not-found: 404 HPB-00102). Undefined only in mode unchecked, where references are not resolved.
 * Faults: write-reference-any-organization takes another organization's record; write-foreign-reference-403
 * and -500 answer a reference to one otherwise than a reference to nothing.
 */
export function referencedRecord<T extends { id: string; org: string }>(
  env: Pick<ResourceEnv, 'faults' | 'modes'>,
  table: Table<T>,
  org: string,
  type: string,
  id: string,
  refuse: () => Error,
): T | undefined {
  const own = table.get(org, id);
  if (own) return own;
  const foreign = env.faults.size > 0 ? table.anyOrganization(id) : undefined;
  if (foreign) {
    if (env.faults.has('write-reference-any-organization')) return foreign;
    if (env.faults.has('write-foreign-reference-403')) throw forbidden('HPB-00104', `${type}/${id} belongs to another organization`);
    if (env.faults.has('write-foreign-reference-500'))
      throw new Error(`planted fault write-foreign-reference-500: ${type}/${id} belongs to another organization`);
  }
  if (env.modes.unresolvedReference === 'unchecked') return undefined;
  if (env.modes.unresolvedReference === 'not-found') throw notFound(type, id);
  throw refuse();
}

/**
 * The record a write's already resolved reference names (referencedRecord let the write through): the
 * caller's, another organization's under fault write-reference-any-organization, else undefined
 * (mode unresolvedReference=unchecked: the reference names no record the service knows of).
 */
export function resolvedRecord<T extends { id: string; org: string }>(
  env: Pick<ResourceEnv, 'faults'>,
  table: Table<T>,
  org: string,
  id: string,
): T | undefined {
  return table.get(org, id) ?? (env.faults.has('write-reference-any-organization') ? table.anyOrganization(id) : undefined);
}
