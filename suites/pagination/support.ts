/**
 * Helpers of the pagination suite: the search endpoints it covers, fetching a
 * page, walking `next` links to the end, and the ordering rule.
 */
import type { CheckContext } from '../../src/engine/index.js';
import { bundleLink, expectSearchset, isObject } from '../../src/service/index.js';
import type { HttpResponse } from '../../src/http/index.js';

/** A search endpoint of the spec and the time fields its ordering may use (requirement notes). */
export interface SearchEndpoint {
  slug: string;
  resource: 'MedicationRequest' | 'Encounter' | 'DocumentReference';
  release: 'R4' | 'R5';
  /** The exposed time fields an order may follow: the resource's own date, then meta.lastUpdated (recorded, never required). */
  timeFields: string[];
  /** The resource's own date field (dotted path), set on the records the ordering check creates. */
  ownTime: string;
  /** Fixture key of a record of this type; when it reads as the fixture patient's, that patient's search is not empty. */
  fixture: string;
  /** The requirement a search by patient that leaves out the patient's records breaks. */
  patientRequirement: string;
}

export const ENDPOINTS: readonly SearchEndpoint[] = [
  {
    slug: 'medication-request',
    resource: 'MedicationRequest',
    release: 'R4',
    timeFields: ['authoredOn', 'meta.lastUpdated'],
    ownTime: 'authoredOn',
    fixture: 'medicationRequest',
    patientRequirement: 'medication-request.search-by-patient',
  },
  {
    slug: 'encounter',
    resource: 'Encounter',
    release: 'R4',
    timeFields: ['period.start', 'meta.lastUpdated'],
    ownTime: 'period.start',
    fixture: 'encounter',
    patientRequirement: 'encounter.search-patient',
  },
  {
    slug: 'document-reference',
    resource: 'DocumentReference',
    release: 'R5',
    timeFields: ['date', 'meta.lastUpdated'],
    ownTime: 'date',
    fixture: 'documentReference',
    patientRequirement: 'document-reference.search-patient',
  },
];

/** Safety bound of a walk over `next` links; reaching it is a failure, never a way to stop early. */
export const MAX_PAGES = 10_000;

export interface Search {
  endpoint: SearchEndpoint;
  path: string;
  scopes: string[];
  /** The operation path with these query parameters. */
  url(params: Record<string, string>): string;
  /** GET a URL (a first page, or a `next` link as given). */
  get(url: string, opts?: { retry?: 'spec' | 'none' }): Promise<HttpResponse>;
}

/** The target's published search operation of the endpoint (the check skips when it publishes none). */
export function searchOf(ctx: CheckContext, endpoint: SearchEndpoint): Search {
  const op = ctx.operation(endpoint.resource, 'search-type', endpoint.release);
  const scopes = [op.scope ?? `system/${endpoint.resource}.rs`];
  return {
    endpoint,
    path: op.path,
    scopes,
    url: (params) => `${op.path}?${new URLSearchParams(params).toString()}`,
    // A plain GET may be answered with the exchange another check made for the same page (src/engine/exchange-cache.ts).
    get: (url, opts) => ctx.fhir({ scopes, method: 'GET', url, retry: opts?.retry, share: opts?.retry === undefined }),
  };
}

export interface Entry {
  /** resource.id, else entry.fullUrl. */
  key: string;
  resource: Record<string, unknown>;
}

export interface Page {
  res: HttpResponse;
  bundle: Record<string, unknown>;
  entries: Entry[];
  self?: string;
  next?: string;
}

/** GET one page; it must be a searchset Bundle whose entries each hold a resource with an id. */
export async function fetchPage(ctx: CheckContext, search: Search, url: string, requirement: string): Promise<Page> {
  const res = await search.get(url);
  const bundle = expectSearchset(res, requirement);
  const raw = Array.isArray(bundle.entry) ? bundle.entry : [];
  const entries = raw.map((e, i): Entry => {
    const resource = isObject(e) && isObject(e.resource) ? e.resource : undefined;
    const key = typeof resource?.id === 'string' ? resource.id : isObject(e) && typeof e.fullUrl === 'string' ? e.fullUrl : undefined;
    if (!resource || key === undefined)
      ctx.fail(`entry[${i}] holds no resource with an id`, {
        requirement: 'pagination.bundle-entry-array',
        expected: '{ resource: { id } }',
        actual: e,
        exchange: res.exchange.id,
      });
    return { key, resource };
  });
  return { res, bundle, entries, self: bundleLink(bundle, 'self'), next: bundleLink(bundle, 'next') };
}

export interface Walk {
  pages: Page[];
  entries: Entry[];
  keys: Set<string>;
}

/**
 * Follows `next` links as given until a page has none. No cap on the number of
 * pages other than MAX_PAGES (a failure). Fails when a page repeats an entry, or
 * when a `next` link leads to a page with no new entry (it was the last page).
 */
export async function walk(ctx: CheckContext, search: Search, firstUrl: string, requirement: string): Promise<Walk> {
  const result: Walk = { pages: [], entries: [], keys: new Set() };
  let url: string | undefined = firstUrl;
  while (url !== undefined) {
    if (result.pages.length >= MAX_PAGES)
      ctx.fail(`still a next link after ${MAX_PAGES} pages`, {
        requirement: 'pagination.paging-terminates',
        expected: 'a page without next',
        actual: `${MAX_PAGES} pages`,
      });
    const page = await fetchPage(ctx, search, url, requirement);
    const fresh = page.entries.filter((e) => !result.keys.has(e.key));
    if (result.pages.length > 0 && fresh.length === 0)
      ctx.fail(`the next link of page ${result.pages.length} led to a page with no new entry: next must be absent on the last page`, {
        requirement: 'pagination.next-absent-on-last-page',
        expected: 'no next link on the last page',
        actual: `page ${result.pages.length + 1} holds ${page.entries.length} entries, none new`,
        exchange: page.res.exchange.id,
      });
    const repeated = page.entries.filter((e, i) => result.keys.has(e.key) || page.entries.findIndex((x) => x.key === e.key) !== i);
    if (repeated.length > 0)
      ctx.fail(`page ${result.pages.length + 1} repeats ${repeated.length} entr${repeated.length === 1 ? 'y' : 'ies'} already returned`, {
        requirement: 'pagination.paging-terminates',
        expected: 'every entry once',
        actual: repeated.slice(0, 5).map((e) => e.key),
        exchange: page.res.exchange.id,
      });
    for (const e of page.entries) result.keys.add(e.key);
    result.entries.push(...page.entries);
    result.pages.push(page);
    url = page.next;
  }
  return result;
}

/** A page size that spreads `n` entries over about three pages (at least 1, at most 100). */
export function smallPageSize(n: number): number {
  return Math.min(100, Math.max(1, Math.ceil(n / 3)));
}

/** A page size that spreads `n` entries over at least five pages when there are five (at least 1, at most 100): next links are judged from the third page on too. */
export function walkPageSize(n: number): number {
  return Math.min(100, Math.max(1, Math.ceil(n / 5)));
}

/** Whether the resource's subject is the patient (a relative or absolute reference). */
export function refersToPatient(resource: Record<string, unknown>, patientId: string): boolean {
  const ref = isObject(resource.subject) ? resource.subject.reference : undefined;
  return typeof ref === 'string' && (ref === `Patient/${patientId}` || ref.endsWith(`/Patient/${patientId}`));
}

/** The `_cursor` value of a URL, if any. */
export function cursorOf(url: string): string | undefined {
  return new URL(url, 'http://x').searchParams.get('_cursor') ?? undefined;
}

/** The URL with `_cursor` replaced (every other parameter kept as given). */
export function withCursor(url: string, cursor: string): string {
  const u = new URL(url, 'http://x');
  u.searchParams.set('_cursor', cursor);
  return /^https?:\/\//i.test(url) ? u.toString() : `${u.pathname}${u.search}`;
}

/** The cursor with a few characters changed (same length, same alphabet where possible). */
export function tamper(cursor: string): string {
  const chars = [...cursor];
  for (const at of new Set([Math.floor(chars.length / 2), chars.length - 2].filter((i) => i >= 0))) {
    chars[at] = chars[at] === 'A' ? 'B' : 'A';
  }
  return chars.join('');
}

// ---- ordering ------------------------------------------------------------

function valueAt(resource: Record<string, unknown>, path: string): unknown {
  let v: unknown = resource;
  for (const part of path.split('.')) v = isObject(v) ? v[part] : undefined;
  return v;
}

/** The time (ms) of a dotted field of a resource, when it holds a date-time. */
export function timeAt(resource: Record<string, unknown>, field: string): number | undefined {
  return timeOf(resource, field);
}

function timeOf(resource: Record<string, unknown>, field: string): number | undefined {
  const v = valueAt(resource, field);
  const t = typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isNaN(t) ? undefined : t;
}

type Direction = 1 | -1;

/** Whether b may follow a under one of the fields: its time moves in `timeDir`, or ties and its id moves in `idDir`. */
function ordered(a: Entry, b: Entry, fields: string[], timeDir: Direction, idDir: Direction): boolean {
  return fields.some((field) => {
    const ta = timeOf(a.resource, field);
    const tb = timeOf(b.resource, field);
    if (ta === undefined || tb === undefined) return false;
    if (ta !== tb) return Math.sign(tb - ta) === timeDir;
    const ia = a.key.toLowerCase();
    const ib = b.key.toLowerCase();
    return ia !== ib && (ib > ia ? 1 : -1) === idDir;
  });
}

export interface OrderingVerdict {
  /** The directions that fit every adjacent pair, when one does. */
  fits?: { time: 'ascending' | 'descending'; id: 'ascending' | 'descending' };
  /** Otherwise the first out-of-order pair under the closest directions. */
  offending?: { index: number; a: string; b: string };
}

/**
 * Whether the order follows exposed time fields (then the id on a tie): every
 * adjacent pair is ordered by at least one of `fields`, in one time direction
 * and one id direction throughout. Which time orders results is not shown, so
 * a misfit is no failure by itself (the server may order by a time it does not
 * expose, such as the creation time): the ordering checks record it.
 */
export function checkOrdering(entries: Entry[], fields: string[]): OrderingVerdict {
  const name = (d: Direction) => (d === 1 ? 'ascending' : 'descending');
  let best: { bad: number[] } | undefined;
  for (const timeDir of [1, -1] as const) {
    for (const idDir of [1, -1] as const) {
      const bad: number[] = [];
      for (let i = 1; i < entries.length; i++) if (!ordered(entries[i - 1]!, entries[i]!, fields, timeDir, idDir)) bad.push(i);
      if (bad.length === 0) return { fits: { time: name(timeDir), id: name(idDir) } };
      if (!best || bad.length < best.bad.length) best = { bad };
    }
  }
  const i = best!.bad[0]!;
  return { offending: { index: i, a: entries[i - 1]!.key, b: entries[i]!.key } };
}

/**
 * The first key whose relative order differs between two walks of the same
 * search (keys present in only one walk, e.g. records another check created in
 * between, are left out): a total order by time and UUID does not depend on
 * the page size.
 */
export function firstOrderDifference(a: readonly string[], b: readonly string[]): { index: number; expected: string[]; actual: string[] } | undefined {
  const inB = new Set(b);
  const inA = new Set(a);
  const common = a.filter((k) => inB.has(k));
  const other = b.filter((k) => inA.has(k));
  const i = common.findIndex((k, j) => other[j] !== k);
  return i < 0 ? undefined : { index: i, expected: common.slice(i, i + 3), actual: other.slice(i, i + 3) };
}

/** A record the ordering check created, with the interval in which the server created it (our clock). */
export interface CreatedRecord {
  id: string;
  sentAt: number;
  answeredAt: number;
}

export interface CreationOrderVerdict {
  /** Ascending (oldest first) or descending, when the positions fit one. */
  fits?: 'ascending' | 'descending';
  /** Otherwise what breaks the closest direction. */
  problem?: string;
}

/**
 * Whether the walk is ordered by creation time in one direction, judged on
 * what is certain about creation times: each created record after the ones
 * created a second or more before it (a coarser clock may tie closer ones, and
 * the UUID then decides), and after every `older` record (records that existed
 * well before the first create). Records neither created nor older (e.g. made
 * by other checks of the run) are not constrained.
 */
export function checkCreationOrder(keys: readonly string[], created: readonly CreatedRecord[], older: ReadonlySet<string>): CreationOrderVerdict {
  const pos = new Map(keys.map((k, i) => [k.toLowerCase(), i]));
  const at = created.map((c) => ({ ...c, i: pos.get(c.id.toLowerCase()) }));
  const missing = at.filter((c) => c.i === undefined);
  if (missing.length > 0) return { problem: `created record(s) ${missing.map((c) => c.id).join(', ')} missing from the results` };
  const olderPos = keys.map((k, i) => (older.has(k.toLowerCase()) ? i : -1)).filter((i) => i >= 0);
  const problems: string[] = [];
  for (const dir of [1, -1] as const) {
    const name = dir === 1 ? 'ascending' : 'descending';
    let problem: string | undefined;
    for (const a of at) {
      for (const b of at) {
        if (b.sentAt - a.answeredAt < 1000) continue; // possibly the same tick: either order
        if (Math.sign(b.i! - a.i!) !== dir) problem ??= `${b.id}, created after ${a.id}, comes ${dir === 1 ? 'before' : 'after'} it`;
      }
      const wrongSide = olderPos.find((p) => Math.sign(a.i! - p) !== dir);
      if (wrongSide !== undefined)
        problem ??= `${a.id}, created during the check, comes ${dir === 1 ? 'before' : 'after'} ${keys[wrongSide]}, which existed before it`;
    }
    if (problem === undefined) return { fits: name };
    problems.push(`${name}: ${problem}`);
  }
  return { problem: problems.join('; ') };
}
