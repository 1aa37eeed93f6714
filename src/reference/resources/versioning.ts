/**
 * Versioning (spec "Versioning" rule 4, MedicationRequest update rules 4-5):
 * `meta.versionId`, `ETag`, `Last-Modified` and `If-Match` for every resource type.
 */
import { FhirError, type HandlerContext, type ReferenceModes } from '../types.js';
import { conflict } from './errors.js';
import type { RecordMeta } from './records.js';

export function metaOf(row: RecordMeta): { versionId: string; lastUpdated: string } {
  return { versionId: String(row.versionId), lastUpdated: row.lastUpdated };
}

export function etagOf(row: RecordMeta, modes: ReferenceModes): string {
  return modes.etag === 'weak' ? `W/"${row.versionId}"` : `"${row.versionId}"`;
}

/**
 * `ETag` and `Last-Modified` (HTTP-date) of the row's current version. `kind`: MedicationRequest's
 * rows, or another type's (Encounter, DocumentReference), for the faults that freeze one or the other.
 */
export function versionHeaders(
  row: RecordMeta,
  modes: ReferenceModes,
  faults?: ReadonlySet<string>,
  kind: 'medication-request' | 'other' = 'medication-request',
): Record<string, string> {
  // Faults last-modified-creation-time (MedicationRequest), last-modified-creation-time-other-types (Encounter,
  // DocumentReference): Last-Modified names the record's creation, whatever its version.
  const frozen = faults?.has(kind === 'other' ? 'last-modified-creation-time-other-types' : 'last-modified-creation-time');
  const modified = frozen ? row.createdAt : row.lastUpdated;
  return { ETag: etagOf(row, modes), 'Last-Modified': new Date(modified).toUTCString() };
}

/** The value of a request header, whatever the case of its name; repeated headers are joined with `, `. */
export function header(ctx: HandlerContext, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [key, value] of Object.entries(ctx.headers)) {
    if (key.toLowerCase() !== lower || value === undefined) continue;
    return Array.isArray(value) ? value.join(', ') : value;
  }
  return undefined;
}

/**
 * Conditional update: when `If-Match` is present, one of its entity tags (weak or
 * strong form, or `*`) must name the current version; otherwise 409 HPB-00103.
 */
export function checkIfMatch(ctx: HandlerContext, row: RecordMeta, status: 409 | 412 = 409): void {
  const value = header(ctx, 'if-match');
  if (value === undefined) return;
  const tags = value
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t.length > 0);
  const current = String(row.versionId);
  const matches = tags.some((tag) => tag === '*' || tag.replace(/^W\//, '') === `"${current}"`);
  if (!matches && status === 412)
    throw new FhirError(412, 'conflict', `Precondition Failed: If-Match ${JSON.stringify(value)} does not match the current version ${current}`);
  if (!matches) {
    throw conflict(
      'HPB-00103',
      `Version conflict: If-Match ${JSON.stringify(value)} does not match the current version ${current}; re-read, reapply, retry with the current meta.versionId`,
    );
  }
}

/** The row's next version, stamped at `now`. */
export function nextVersion<T extends RecordMeta>(row: T, now: number): Pick<T, 'versionId' | 'lastUpdated'> {
  return { versionId: row.versionId + 1, lastUpdated: new Date(now).toISOString() } as Pick<T, 'versionId' | 'lastUpdated'>;
}

/** Meta fields of a new row created at `now` (seq is assigned by the store). */
export function firstVersion(id: string, org: string, now: number): Omit<RecordMeta, 'seq'> {
  const at = new Date(now).toISOString();
  return { id, org, versionId: 1, lastUpdated: at, createdAt: at };
}
