/**
 * Search result paging for every search endpoint (spec "Pagination" rules 1-6).
 *
 * Ordering is by a time then the id (`modes.orderBy`: creation time, immutable,
 * by default; or the resource's own time; or meta.lastUpdated), the id
 * ascending or descending per `modes.tieBreak`. The first request fixes a
 * snapshot (the store's sequence number): rows inserted later never appear while
 * following `next`, and the cursor is a keyset position (time, id), so deleted
 * rows cause no gaps or duplicates. `total` counts the matches in the snapshot.
 */
import { createHash } from 'node:crypto';
import type { HandlerContext, HandlerResponse, ReferenceModes } from '../types.js';
import type { CursorCodec, CursorState } from './cursor.js';
import { invalid } from './errors.js';
import { catalogError } from '../outcome.js';
import type { RecordMeta } from './records.js';

export const DEFAULT_COUNT = 20;
export const MAX_COUNT = 100;
/** Reference choice for the bounds of DocumentReference `_offset`. */
export const MAX_OFFSET = 10_000;

/** Parameters that steer paging rather than filter; excluded from a search's fingerprint. */
const PAGING_PARAMS = new Set(['_count', '_cursor', '_offset']);

export interface PagingEnv {
  modes: ReferenceModes;
  cursors: CursorCodec;
  /** The store's current sequence number (the snapshot of a new search). */
  snapshotSeq(): number;
  /** Planted faults (src/reference/faults/pagination.ts). */
  faults?: ReadonlySet<string>;
}

export interface SearchRequest<T extends RecordMeta> {
  ctx: HandlerContext;
  /** Every row of the caller's organization that matches the filters, whatever its sequence number. */
  matches: T[];
  toResource(row: T): unknown;
  /** Absolute URL of a row (Bundle.entry.fullUrl). */
  fullUrl(row: T): string;
  /** Whether `_offset` is a parameter of this search (DocumentReference). */
  allowOffset: boolean;
}

/** `_count`: default 20; a positive integer; over 100 clamped or refused per `modes.countOver100`. */
export function parseCount(query: URLSearchParams, modes: ReferenceModes, faults: ReadonlySet<string> = new Set()): number {
  const raw = query.get('_count');
  if (raw === null) return faults.has('pagination-default-page-size-10') ? 10 : DEFAULT_COUNT;
  if (faults.has('pagination-count-ignored')) return DEFAULT_COUNT;
  if (!/^\d+$/.test(raw) || Number(raw) === 0) {
    if (faults.has('pagination-invalid-count-accepted')) return DEFAULT_COUNT;
    throw invalid(`_count must be a positive integer (got ${JSON.stringify(raw)})`);
  }
  const count = Number(raw);
  // Fault pagination-count-cap-150: the cap is 50 % too loose.
  const cap = faults.has('pagination-count-cap-150') ? 150 : MAX_COUNT;
  if (count <= cap || faults.has('pagination-count-over-100-unclamped')) return count;
  if (modes.countOver100 === 'reject') throw invalid(`_count must not exceed ${cap} (got ${raw})`);
  return cap;
}

/**
 * Faults of a `_count` over the maximum on one endpoint (src/reference/faults/pagination.ts):
 * document-reference-count-over-100-500 fails the search with 500 SVC-00001 (the store's page cap throws);
 * encounter-count-over-100-refused-unprefixed refuses it with 400 HPB-00101, whose diagnostics prefix the fault's
 * transform then drops.
 */
function overMaximumFaults(ctx: HandlerContext, faults: ReadonlySet<string>): void {
  const raw = ctx.query.get('_count');
  if (raw === null || !/^\d+$/.test(raw) || Number(raw) <= MAX_COUNT) return;
  if (ctx.op.resource === 'DocumentReference' && faults.has('document-reference-count-over-100-500')) throw catalogError('SVC-00001');
  if (ctx.op.resource === 'Encounter' && faults.has('encounter-count-over-100-refused-unprefixed'))
    throw invalid(`_count must not exceed ${MAX_COUNT} (got ${raw})`);
}

/** `_offset`: an integer 0..10000, applied as an initial skip on the first page. */
export function parseOffset(query: URLSearchParams): number {
  const raw = query.get('_offset');
  if (raw === null) return 0;
  if (!/^\d+$/.test(raw) || Number(raw) > MAX_OFFSET) throw invalid(`_offset must be an integer from 0 to ${MAX_OFFSET} (got ${JSON.stringify(raw)})`);
  return Number(raw);
}

/** Identifies an operation plus its filter parameters, so a cursor cannot be replayed against another search. */
export function searchFingerprint(ctx: HandlerContext, faults: ReadonlySet<string> = new Set()): string {
  const filters = [...ctx.query.entries()]
    .filter(
      ([name]) =>
        !PAGING_PARAMS.has(name) &&
        (!faults.has('pagination-next-keeps-patient-only') || name === 'patient') &&
        (!faults.has('pagination-next-drops-date') || name !== 'date'),
    )
    .map((entry) => JSON.stringify(entry))
    .sort();
  return createHash('sha256')
    .update(JSON.stringify([ctx.op.operationId, filters]))
    .digest('base64url')
    .slice(0, 22);
}

export function createComparator(modes: ReferenceModes): (a: { time: number; id: string }, b: { time: number; id: string }) => number {
  const idSign = modes.tieBreak === 'uuid-asc' ? 1 : -1;
  const timeSign = modes.orderDirection === 'descending' ? -1 : 1;
  return (a, b) => (a.time !== b.time ? (a.time - b.time) * timeSign : a.id === b.id ? 0 : (a.id < b.id ? -1 : 1) * idSign);
}

const compareIdsOnly = (a: { id: string }, b: { id: string }) => (a.id === b.id ? 0 : a.id < b.id ? -1 : 1);

/**
 * The row's own time (MedicationRequest.authoredOn, Encounter.period.start,
 * DocumentReference.date), read from the stored row, when it has one.
 */
function ownTimeOf(row: RecordMeta): string | undefined {
  const r = row as RecordMeta & { authoredOn?: unknown; period?: { start?: unknown }; date?: unknown };
  const t = r.authoredOn ?? r.period?.start ?? r.date;
  return typeof t === 'string' && !Number.isNaN(Date.parse(t)) ? t : undefined;
}

/** The ordering key of a row under `modes.orderBy`: the time (ms) and the id. */
export function orderingKey(row: RecordMeta, orderBy: ReferenceModes['orderBy']): { time: number; id: string } {
  const time = orderBy === 'last-updated' ? row.lastUpdated : orderBy === 'resource-time' ? (ownTimeOf(row) ?? row.createdAt) : row.createdAt;
  return { time: Date.parse(time), id: row.id };
}

export function searchBundle<T extends RecordMeta>(env: PagingEnv, req: SearchRequest<T>): HandlerResponse {
  const { ctx } = req;
  const faults = env.faults ?? new Set<string>();
  overMaximumFaults(ctx, faults);
  const count = parseCount(ctx.query, env.modes, faults);
  const search = searchFingerprint(ctx, faults);
  const cursor = ctx.query.get('_cursor');
  const state = cursor === null ? undefined : resumeState(env, ctx, cursor, search, faults);
  const offset = state === undefined && req.allowOffset ? parseOffset(ctx.query) : 0;
  const snapshot = state?.snapshot ?? env.snapshotSeq();

  const keyOf = (row: RecordMeta) => orderingKey(row, env.modes.orderBy);
  const compare = faults.has('pagination-ordered-by-id-only') ? compareIdsOnly : createComparator(env.modes);
  // Fault pagination-patient-search-empty: every search by patient finds nothing.
  const matches = faults.has('pagination-patient-search-empty') && ctx.query.has('patient') ? [] : req.matches;
  // Each row's ordering key computed once (a sort would compute it twice per comparison).
  const keyed = matches
    .filter((row) => row.seq <= snapshot || faults.has('pagination-snapshot-not-honoured'))
    .map((row) => ({ row, key: keyOf(row) }))
    .sort((a, b) => compare(a.key, b.key));
  const inSnapshot = keyed.map((k) => k.row);
  const resumeShift = faults.has('pagination-duplicate-across-pages') ? -1 : faults.has('pagination-gap-across-pages') ? 1 : 0;
  const start = state === undefined ? offset : countWhile(keyed, (k) => compare(k.key, { time: state.afterTime, id: state.afterId }) <= 0) + resumeShift;
  const page = inSnapshot.slice(start, start + count);
  const last = page[page.length - 1];
  // Fault pagination-next-to-empty-page: the last page still links to a next (empty) page.
  // Fault pagination-clamped-page-without-next: a page clamped from a _count over the maximum has no next link.
  const clampedWithoutNext = faults.has('pagination-clamped-page-without-next') && Number(ctx.query.get('_count')) > count;
  const hasNext = last !== undefined && !clampedWithoutNext && (start + count < inSnapshot.length || faults.has('pagination-next-to-empty-page'));
  // Fault pagination-second-page-reversed: the page after the first comes in reverse order (the cursor stays right).
  const emitted = state !== undefined && start === count && faults.has('pagination-second-page-reversed') ? [...page].reverse() : page;

  const link = [{ relation: 'self', url: pageUrl(ctx, ctx.query) }];
  if (hasNext) {
    // Fault pagination-snapshot-first-link-only: the next links of later pages carry the store's state now, not the session's.
    const carried = state !== undefined && faults.has('pagination-snapshot-first-link-only') ? env.snapshotSeq() : snapshot;
    const next = env.cursors.encode({ org: ctx.caller.org, search, snapshot: carried, afterTime: keyOf(last).time, afterId: last.id });
    const nextParams = nextQuery(ctx.query, count, next);
    // Fault pagination-next-keeps-patient-only: the next link is rebuilt from patient, _count and the cursor (and the cursor names that search).
    if (faults.has('pagination-next-keeps-patient-only'))
      for (const name of [...nextParams.keys()]) if (!['patient', '_count', '_cursor'].includes(name)) nextParams.delete(name);
    // Fault pagination-next-drops-date: the next link carries every parameter but date (the cursor names the search without it).
    if (faults.has('pagination-next-drops-date')) nextParams.delete('date');
    // Fault pagination-third-page-default-count: the next link of every page after the first drops _count (page 3 on: 20 entries).
    if (state !== undefined && faults.has('pagination-third-page-default-count')) nextParams.delete('_count');
    link.push({ relation: 'next', url: pageUrl(ctx, nextParams) });
  }
  return {
    status: 200,
    body: {
      resourceType: 'Bundle',
      type: 'searchset',
      total: inSnapshot.length,
      link,
      entry: emitted.map((row) => ({ fullUrl: req.fullUrl(row), resource: req.toResource(row), search: { mode: 'match' } })),
    },
  };
}

/**
 * The organization whose rows a search reads: the caller's. Under fault tenancy-cursor-replay, the
 * organization a `_cursor` was issued to (a next link followed with another organization's token).
 */
export function searchOrg(env: PagingEnv, ctx: HandlerContext): string {
  const cursor = ctx.query.get('_cursor');
  const faults = env.faults ?? new Set<string>();
  if (cursor === null || (!faults.has('tenancy-cursor-replay') && !faults.has('tenancy-cursor-replay-reverse'))) return ctx.caller.org;
  const org = env.cursors.decode(cursor)?.org;
  return org !== undefined && replaysCursor(faults, org, ctx.caller.org) ? org : ctx.caller.org;
}

/**
 * Whether a cursor of another organization is followed: under fault tenancy-cursor-replay always;
 * under tenancy-cursor-replay-reverse only the cursor of the organization sorting after the caller's
 * (org-b's cursor followed with org-a's token: the reverse of the direction checked first).
 */
function replaysCursor(faults: ReadonlySet<string>, cursorOrg: string, callerOrg: string): boolean {
  return faults.has('tenancy-cursor-replay') || (faults.has('tenancy-cursor-replay-reverse') && cursorOrg > callerOrg);
}

function resumeState(env: PagingEnv, ctx: HandlerContext, cursor: string, search: string, faults: ReadonlySet<string>): CursorState {
  const state = env.cursors.decode(cursor);
  if (state === undefined && faults.has('pagination-garbage-cursor-500')) throw new Error('undecodable _cursor');
  if (state === undefined) throw invalid('_cursor is not a cursor issued by this server (take it from a next link)');
  // Faults tenancy-cursor-replay(-reverse): a cursor of another organization is followed (searchOrg serves its organization's rows).
  if ((state.org !== ctx.caller.org && !replaysCursor(faults, state.org, ctx.caller.org)) || state.search !== search)
    throw invalid('_cursor belongs to another search');
  return state;
}

function countWhile<T>(rows: T[], pred: (row: T) => boolean): number {
  let i = 0;
  while (i < rows.length && pred(rows[i]!)) i++;
  return i;
}

/** Every parameter of the request, with `_count` and `_cursor` set for the next page. */
function nextQuery(query: URLSearchParams, count: number, cursor: string): URLSearchParams {
  const next = new URLSearchParams([...query.entries()].filter(([name]) => name !== '_count' && name !== '_cursor'));
  next.set('_count', String(count));
  next.set('_cursor', cursor);
  return next;
}

function pageUrl(ctx: HandlerContext, query: URLSearchParams): string {
  const qs = query.toString();
  return `${ctx.baseUrl}${ctx.op.path}${qs ? `?${qs}` : ''}`;
}
