/**
 * Faults of the pagination area: each plants one violation of one Pagination
 * rule (Bundle shape, _count, self/next links, snapshot, ordering, empty result)
 * or of the MedicationRequest search's required parameters. Logic faults are
 * read in src/reference/resources/pagination.ts and medication-request.ts.
 */
import { errorResponse, isObject, issue0, type Json } from './edit.js';
import type { FaultDef, FaultRequest, FaultResponse } from './types.js';

type Link = { relation?: unknown; url?: unknown };

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
    checks: ['pagination.searchset.medication-request', 'pagination.searchset.encounter', 'pagination.searchset.document-reference'],
    symptom: 'Search results are Bundles of type collection.',
    transformResponse: onSearchset((b) => ({ ...b, type: 'collection' })),
  },
  {
    name: 'pagination-total-not-integer',
    area,
    violates: ['pagination.bundle-total-integer'],
    checks: ['pagination.searchset.medication-request', 'pagination.searchset.encounter', 'pagination.searchset.document-reference'],
    symptom: 'Bundle.total is a string ("160").',
    transformResponse: onSearchset((b) => ({ ...b, total: String(b.total) })),
  },
  {
    name: 'pagination-link-without-url',
    area,
    violates: ['pagination.bundle-link-shape'],
    checks: ['pagination.searchset.medication-request', 'pagination.searchset.encounter', 'pagination.searchset.document-reference'],
    symptom: 'Search Bundles carry an extra link { relation: "first" } without url.',
    transformResponse: onSearchset((b) => ({ ...b, link: [...linksOf(b), { relation: 'first' }] })),
  },
  {
    name: 'pagination-entry-as-object',
    area,
    violates: ['pagination.bundle-entry-array'],
    checks: ['pagination.searchset.medication-request', 'pagination.searchset.encounter', 'pagination.searchset.document-reference'],
    symptom: 'Non-empty search Bundles carry entry as an object keyed by position, not an array.',
    transformResponse: onSearchset((b) => (entriesOf(b).length > 0 ? { ...b, entry: { ...entriesOf(b) } } : b)),
  },
  {
    name: 'pagination-self-link-missing',
    area,
    violates: ['pagination.self-link', 'pagination.empty-self-link'],
    checks: [
      'pagination.self-link.medication-request',
      'pagination.self-link.encounter',
      'pagination.self-link.document-reference',
      'pagination.empty-result.medication-request',
      'pagination.empty-result.encounter',
      'pagination.empty-result.document-reference',
    ],
    symptom: 'Search Bundles have no self link.',
    transformResponse: onSearchset((b) => noRelation(b, 'self')),
  },
  {
    name: 'pagination-next-on-last-page',
    area,
    violates: ['pagination.next-absent-on-last-page'],
    checks: ['pagination.next-links.medication-request', 'pagination.next-links.encounter', 'pagination.next-links.document-reference'],
    symptom: 'The last (non-empty) page has a next link (to itself).',
    transformResponse: onSearchset((b) => (entriesOf(b).length > 0 && linkUrl(b, 'next') === undefined ? withNextToSelf(b) : b)),
  },
  {
    name: 'pagination-next-missing-on-middle-page',
    area,
    violates: ['pagination.next-present-when-more'],
    checks: ['pagination.next-links.medication-request', 'pagination.next-links.encounter', 'pagination.next-links.document-reference'],
    symptom: 'A page reached through a cursor has no next link although more results exist.',
    transformResponse: onSearchset((b) => (String(linkUrl(b, 'self') ?? '').includes('_cursor=') ? noRelation(b, 'next') : b)),
  },
  {
    name: 'pagination-next-drops-patient',
    area,
    violates: ['pagination.next-carries-parameters'],
    checks: [
      'pagination.next-carries-parameters.medication-request',
      'pagination.next-carries-parameters.encounter',
      'pagination.next-carries-parameters.document-reference',
    ],
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
    checks: ['pagination.ordering.medication-request', 'pagination.ordering.encounter', 'pagination.ordering.document-reference'],
    symptom: 'The entries of every page come in reverse order.',
    transformResponse: onSearchset((b) => (Array.isArray(b.entry) ? { ...b, entry: [...b.entry].reverse() } : b)),
  },
  {
    name: 'pagination-ordered-by-id-only',
    area,
    violates: ['pagination.ordering-time-uuid'],
    checks: ['pagination.ordering-created.medication-request', 'pagination.ordering-created.encounter', 'pagination.ordering-created.document-reference'],
    symptom: 'Search results are ordered by id alone, whatever their time.',
  },
  {
    name: 'pagination-empty-result-without-entry',
    area,
    violates: ['pagination.empty-entry-array'],
    checks: ['pagination.empty-result.medication-request', 'pagination.empty-result.encounter', 'pagination.empty-result.document-reference'],
    symptom: 'An empty search result has no entry element.',
    transformResponse: onSearchset((b) => (entriesOf(b).length > 0 ? b : Object.fromEntries(Object.entries(b).filter(([k]) => k !== 'entry')))),
  },
  {
    name: 'pagination-empty-result-next-link',
    area,
    violates: ['pagination.empty-no-next'],
    checks: ['pagination.empty-result.medication-request', 'pagination.empty-result.encounter', 'pagination.empty-result.document-reference'],
    symptom: 'An empty search result has a next link.',
    transformResponse: onSearchset((b) => (entriesOf(b).length === 0 && linkUrl(b, 'next') === undefined ? withNextToSelf(b) : b)),
  },
  {
    name: 'pagination-default-page-size-10',
    area,
    violates: ['pagination.count-default-20', 'limits.page-size'],
    checks: ['pagination.default-page-size.medication-request', 'pagination.default-page-size.encounter', 'pagination.default-page-size.document-reference'],
    symptom: 'Without _count, pages hold 10 entries.',
  },
  {
    name: 'pagination-count-ignored',
    area,
    violates: ['pagination.count-honoured'],
    checks: ['pagination.count-honoured.medication-request', 'pagination.count-honoured.encounter', 'pagination.count-honoured.document-reference'],
    symptom: '_count is ignored: every page holds 20 entries.',
  },
  {
    name: 'pagination-count-over-100-unclamped',
    area,
    violates: ['pagination.count-maximum-100'],
    checks: ['pagination.count-maximum.medication-request', 'pagination.count-maximum.encounter', 'pagination.count-maximum.document-reference'],
    symptom: '_count above 100 is honoured (a page of 101 or more entries).',
  },
  {
    name: 'document-reference-count-over-100-500',
    area,
    violates: ['pagination.count-maximum-100', 'limits.page-size'],
    checks: ['pagination.count-maximum.document-reference'],
    symptom:
      'A DocumentReference search with _count above 100 answers 500 SVC-00001 (the store refuses a page over its cap) instead of a page of at most 100 or a 400; other searches are unchanged.',
  },
  {
    name: 'encounter-count-over-100-refused-unprefixed',
    area,
    violates: ['errors.catalog-code-format'],
    checks: ['pagination.count-maximum.encounter', 'invariants.error-catalog-code-format'],
    symptom:
      'An Encounter search with _count above 100 is refused with 400 HPB-00101 (details.coding kept) whose diagnostics lack the "HPB-00101: " prefix; other errors keep it.',
    transformResponse: (res, req) => {
      const issue = issue0(res);
      if (req.op?.operationId !== 'Encounter.search' || res.status !== 400 || !issue?.diagnostics?.includes('_count must not exceed')) return res;
      const outcome = structuredClone(res.body) as { issue: Array<{ diagnostics: string }> };
      outcome.issue[0]!.diagnostics = issue.diagnostics.replace(/^HPB-00101: /, '');
      return { ...res, body: outcome };
    },
  },
  {
    name: 'pagination-invalid-count-accepted',
    area,
    violates: ['medication-request.search-400'],
    checks: ['pagination.invalid-count.medication-request'],
    symptom: 'A non-integer or negative _count is accepted as the default page size.',
  },
  {
    name: 'pagination-snapshot-not-honoured',
    area,
    violates: ['pagination.snapshot-excludes-new-records'],
    checks: ['pagination.snapshot.medication-request', 'pagination.snapshot.encounter', 'pagination.snapshot.document-reference'],
    symptom: 'Records created after the first page appear on later pages.',
  },
  {
    name: 'pagination-duplicate-across-pages',
    area,
    violates: ['pagination.paging-terminates'],
    checks: ['pagination.next-links.medication-request', 'pagination.next-links.encounter', 'pagination.next-links.document-reference'],
    symptom: 'Each page after the first repeats the last entry of the previous page.',
  },
  {
    name: 'pagination-gap-across-pages',
    area,
    violates: ['pagination.next-present-when-more'],
    checks: ['pagination.next-links.medication-request', 'pagination.next-links.encounter', 'pagination.next-links.document-reference'],
    symptom: 'Each page after the first skips one record.',
  },
  {
    name: 'pagination-garbage-cursor-500',
    area,
    violates: ['medication-request.search-400'],
    checks: ['pagination.forged-cursor.medication-request'],
    symptom: 'A _cursor the server did not issue gives 500 instead of 400 HPB-00101.',
  },
  {
    name: 'pagination-mr-search-without-patient-accepted',
    area,
    violates: ['medication-request.search-patient-or-encounter', 'medication-request.search-400'],
    checks: ['pagination.patient-or-encounter-required.medication-request', 'medication-request.search-needs-patient-or-encounter'],
    symptom: 'MedicationRequest search without patient and encounter returns every MedicationRequest of the organization.',
  },
  {
    name: 'pagination-second-page-reversed',
    area,
    violates: ['pagination.ordering-time-uuid'],
    checks: ['pagination.ordering.medication-request', 'pagination.ordering.encounter', 'pagination.ordering.document-reference'],
    symptom: 'The page after the first comes in reverse order (the first page and the cursor are right).',
  },
  {
    name: 'pagination-next-to-empty-page',
    area,
    violates: ['pagination.next-absent-on-last-page'],
    checks: ['pagination.next-links.medication-request', 'pagination.next-links.encounter', 'pagination.next-links.document-reference'],
    symptom: 'The last page still has a next link; it leads to an empty page without next.',
  },
  {
    name: 'pagination-clamped-page-without-next',
    area,
    violates: ['pagination.next-present-when-more'],
    checks: ['pagination.count-maximum.medication-request', 'pagination.count-maximum.encounter', 'pagination.count-maximum.document-reference'],
    symptom: 'A _count above 100 is clamped to 100, but that page has no next link although more match (other pages keep theirs).',
  },
  {
    name: 'pagination-count-cap-150',
    area,
    violates: ['pagination.count-maximum-100', 'limits.page-size'],
    checks: ['pagination.count-maximum.medication-request', 'pagination.count-maximum.encounter', 'pagination.count-maximum.document-reference'],
    symptom: 'The _count cap is 150, 50 % too loose: _count=101 gives a page of 101 entries.',
  },
  {
    name: 'pagination-patient-search-empty',
    area,
    violates: ['medication-request.search-by-patient', 'encounter.search-patient', 'document-reference.search-patient'],
    checks: [
      'medication-request.search-by-patient',
      'encounter.search-patient',
      'pagination.searchset.medication-request',
      'pagination.searchset.encounter',
      'pagination.searchset.document-reference',
    ],
    symptom: 'Every search by patient answers an empty searchset, the records of the fixture patient included.',
  },
  {
    name: 'empty-search-total-missing',
    area: 'pagination',
    violates: ['pagination.empty-total-zero'],
    symptom: 'An empty searchset carries total 1.',
    checks: ['pagination.empty-result.medication-request', 'pagination.empty-result.encounter', 'pagination.empty-result.document-reference'],
    transformResponse: (res) => {
      const b = res.body as Json | undefined;
      return isObject(b) && b.resourceType === 'Bundle' && Array.isArray(b.entry) && b.entry.length === 0 ? { ...res, body: { ...b, total: 1 } } : res;
    },
  },
  {
    name: 'mr-search-without-patient-500',
    area,
    violates: ['medication-request.search-patient-or-encounter', 'medication-request.search-400'],
    checks: ['pagination.patient-or-encounter-required.medication-request', 'medication-request.search-needs-patient-or-encounter'],
    symptom:
      'A MedicationRequest search with neither patient nor encounter gives 500 SVC-00001 (an unguarded query), every time, instead of 400 HPB-00101; other searches are served normally.',
    transformResponse: (res, req) =>
      req.op?.operationId === 'MedicationRequest.search' && res.status === 400 && /patient or encounter/.test(issue0(res)?.diagnostics ?? '')
        ? errorResponse(res, 500, 'SVC-00001')
        : res,
  },
  {
    name: 'pagination-snapshot-first-link-only',
    area: 'pagination',
    violates: ['pagination.snapshot-excludes-new-records'],
    symptom:
      "The first page's next link keeps the paging session's snapshot; the next links of later pages carry the store as it is then: a record created after the first page stays out of page 2 and shows from page 3 on.",
    checks: ['pagination.snapshot.medication-request', 'pagination.snapshot.encounter', 'pagination.snapshot.document-reference'],
  },
  {
    name: 'pagination-next-drops-date',
    area: 'pagination',
    violates: ['pagination.next-carries-parameters'],
    symptom:
      "Next links carry every parameter of the search but date: an Encounter or DocumentReference search by date holds to it on the first page only, and later pages serve the patient's records of every date (the other filters hold).",
    checks: ['pagination.next-carries-filter.encounter', 'pagination.next-carries-filter.document-reference'],
  },
  {
    name: 'pagination-next-keeps-patient-only',
    area: 'pagination',
    violates: ['pagination.next-carries-parameters'],
    symptom:
      "Next links are rebuilt from patient, _count and the cursor: a search's other filters (MedicationRequest's encounter, Encounter's status and class, DocumentReference's type and category) hold on the first page only, and later pages serve the patient's every record.",
    checks: [
      'pagination.next-carries-filter.medication-request',
      'pagination.next-carries-filter.encounter',
      'pagination.next-carries-filter.document-reference',
    ],
  },
  {
    name: 'pagination-third-page-default-count',
    area: 'pagination',
    violates: ['pagination.next-carries-parameters'],
    symptom:
      'The next link of the first page carries _count; the next links of later pages drop it, so from the third page on a search pages by the default 20 instead of the requested size.',
    checks: [
      'pagination.next-carries-parameters.medication-request',
      'pagination.next-carries-parameters.encounter',
      'pagination.next-carries-parameters.document-reference',
    ],
  },
];
