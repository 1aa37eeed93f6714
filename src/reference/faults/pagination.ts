/**
 * Faults of the pagination area: each plants one violation of one Pagination
 * rule (Bundle shape, _count, self/next links, snapshot, ordering, empty result)
 * or of the MedicationRequest search's required parameters. Logic faults are
 * read in src/reference/resources/pagination.ts and medication-request.ts.
 */
import type { FaultDef, FaultRequest, FaultResponse } from './types.js';

type Json = Record<string, unknown>;
type Link = { relation?: unknown; url?: unknown };

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The searchset Bundle of a successful search response, if this is one. */
function searchset(res: FaultResponse, req: FaultRequest): Json | undefined {
  if (req.op?.interaction !== 'search-type' || res.status !== 200 || !isObject(res.body)) return undefined;
  return res.body.resourceType === 'Bundle' && res.body.type === 'searchset' ? res.body : undefined;
}

const linksOf = (b: Json): Link[] => (Array.isArray(b.link) ? (b.link as Link[]) : []);
const linkUrl = (b: Json, relation: string) => linksOf(b).find((l) => l.relation === relation)?.url;
const entriesOf = (b: Json): unknown[] => (Array.isArray(b.entry) ? b.entry : []);

/** A fault that rewrites search Bundles only. */
function onSearchset(edit: (bundle: Json) => Json): NonNullable<FaultDef['transformResponse']> {
  return (res, req) => {
    const bundle = searchset(res, req);
    return bundle ? { ...res, body: edit(bundle) } : res;
  };
}

const noRelation = (b: Json, relation: string): Json => ({ ...b, link: linksOf(b).filter((l) => l.relation !== relation) });
const withNextToSelf = (b: Json): Json => ({ ...b, link: [...linksOf(b), { relation: 'next', url: linkUrl(b, 'self') }] });

const area = 'pagination';

export const faults: FaultDef[] = [
  {
    name: 'pagination-searchset-type-collection',
    area,
    violates: ['pagination.searchset-bundle'],
    symptom: 'Search results are Bundles of type collection.',
    transformResponse: onSearchset((b) => ({ ...b, type: 'collection' })),
  },
  {
    name: 'pagination-total-not-integer',
    area,
    violates: ['pagination.bundle-total-integer'],
    symptom: 'Bundle.total is a string ("160").',
    transformResponse: onSearchset((b) => ({ ...b, total: String(b.total) })),
  },
  {
    name: 'pagination-link-without-url',
    area,
    violates: ['pagination.bundle-link-shape'],
    symptom: 'Search Bundles carry an extra link { relation: "first" } without url.',
    transformResponse: onSearchset((b) => ({ ...b, link: [...linksOf(b), { relation: 'first' }] })),
  },
  {
    name: 'pagination-entry-as-object',
    area,
    violates: ['pagination.bundle-entry-array'],
    symptom: 'Non-empty search Bundles carry entry as an object keyed by position, not an array.',
    transformResponse: onSearchset((b) => (entriesOf(b).length > 0 ? { ...b, entry: { ...entriesOf(b) } } : b)),
  },
  {
    name: 'pagination-self-link-missing',
    area,
    violates: ['pagination.self-link', 'pagination.empty-self-link'],
    symptom: 'Search Bundles have no self link.',
    transformResponse: onSearchset((b) => noRelation(b, 'self')),
  },
  {
    name: 'pagination-next-on-last-page',
    area,
    violates: ['pagination.next-absent-on-last-page'],
    symptom: 'The last (non-empty) page has a next link (to itself).',
    transformResponse: onSearchset((b) => (entriesOf(b).length > 0 && linkUrl(b, 'next') === undefined ? withNextToSelf(b) : b)),
  },
  {
    name: 'pagination-next-missing-on-middle-page',
    area,
    violates: ['pagination.next-present-when-more'],
    symptom: 'A page reached through a cursor has no next link although more results exist.',
    transformResponse: onSearchset((b) => (String(linkUrl(b, 'self') ?? '').includes('_cursor=') ? noRelation(b, 'next') : b)),
  },
  {
    name: 'pagination-next-drops-patient',
    area,
    violates: ['pagination.next-carries-parameters'],
    symptom: 'The next link omits the patient parameter of the search.',
    transformResponse: onSearchset((b) => ({
      ...b,
      link: linksOf(b).map((l) => {
        if (l.relation !== 'next' || typeof l.url !== 'string') return l;
        const url = new URL(l.url);
        url.searchParams.delete('patient');
        return { ...l, url: url.toString() };
      }),
    })),
  },
  {
    name: 'pagination-ordering-broken',
    area,
    violates: ['pagination.ordering-time-uuid'],
    symptom: 'The entries of every page come in reverse order.',
    transformResponse: onSearchset((b) => (Array.isArray(b.entry) ? { ...b, entry: [...b.entry].reverse() } : b)),
  },
  {
    name: 'pagination-ordered-by-id-only',
    area,
    violates: ['pagination.ordering-time-uuid'],
    symptom: 'Search results are ordered by id alone, whatever their time.',
  },
  {
    name: 'pagination-empty-result-without-entry',
    area,
    violates: ['pagination.empty-entry-array'],
    symptom: 'An empty search result has no entry element.',
    transformResponse: onSearchset((b) => (entriesOf(b).length > 0 ? b : Object.fromEntries(Object.entries(b).filter(([k]) => k !== 'entry')))),
  },
  {
    name: 'pagination-empty-result-next-link',
    area,
    violates: ['pagination.empty-no-next'],
    symptom: 'An empty search result has a next link.',
    transformResponse: onSearchset((b) => (entriesOf(b).length === 0 && linkUrl(b, 'next') === undefined ? withNextToSelf(b) : b)),
  },
  {
    name: 'pagination-default-page-size-10',
    area,
    violates: ['pagination.count-default-20', 'limits.page-size'],
    symptom: 'Without _count, pages hold 10 entries.',
  },
  {
    name: 'pagination-count-ignored',
    area,
    violates: ['pagination.count-honoured'],
    symptom: '_count is ignored: every page holds 20 entries.',
  },
  {
    name: 'pagination-count-over-100-unclamped',
    area,
    violates: ['pagination.count-maximum-100'],
    symptom: '_count above 100 is honoured (a page of 101 or more entries).',
  },
  {
    name: 'pagination-invalid-count-accepted',
    area,
    violates: ['medication-request.search-400'],
    symptom: 'A non-integer or negative _count is accepted as the default page size.',
  },
  {
    name: 'pagination-snapshot-not-honoured',
    area,
    violates: ['pagination.snapshot-excludes-new-records'],
    symptom: 'Records created after the first page appear on later pages.',
  },
  {
    name: 'pagination-duplicate-across-pages',
    area,
    violates: ['pagination.paging-terminates'],
    symptom: 'Each page after the first repeats the last entry of the previous page.',
  },
  {
    name: 'pagination-gap-across-pages',
    area,
    violates: ['pagination.next-present-when-more'],
    symptom: 'Each page after the first skips one record.',
  },
  {
    name: 'pagination-garbage-cursor-500',
    area,
    violates: ['medication-request.search-400'],
    symptom: 'A _cursor the server did not issue gives 500 instead of 400 HPB-00101.',
  },
  {
    name: 'pagination-mr-search-without-patient-accepted',
    area,
    violates: ['medication-request.search-patient-or-encounter', 'medication-request.search-400'],
    symptom: 'MedicationRequest search without patient and encounter returns every MedicationRequest of the organization.',
  },
];
