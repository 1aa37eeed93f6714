/**
 * Pagination of every search endpoint (spec: Endpoints > Pagination rules 1-6;
 * Resources > Other structures "Bundle"; Limits "Page size"), the MedicationRequest
 * search's required parameters and 400, and what DocumentReference `_offset` does.
 * Each rule is checked on MedicationRequest (R4), Encounter (R4) and
 * DocumentReference (R5) searches by the fixture patient.
 */
import { filterCarryChecks } from './filter-carry.js';
import { snapshotChecks } from './snapshot.js';
import { type CheckContext, type CheckDefinition, defineCheck, coveringTokens } from '../../src/engine/index.js';
import {
  bundleLink,
  catalogCodeOf,
  createdIdOf,
  documentBody,
  expectError,
  expectSearchset,
  hasRunTag,
  isObject,
  isSuccess,
  noCreatedId,
  refusedCreate,
  runMeta,
} from '../../src/service/index.js';
import type { HttpResponse } from '../../src/http/index.js';
import {
  checkCreationOrder,
  checkOrdering,
  type CreatedRecord,
  cursorOf,
  ENDPOINTS,
  type Entry,
  fetchPage,
  firstOrderDifference,
  type Page,
  refersToPatient,
  type Search,
  type SearchEndpoint,
  searchOf,
  smallPageSize,
  walkPageSize,
  tamper,
  timeAt,
  walk,
  withCursor,
} from './support.js';

const area = 'pagination';
/** Page size of walks to the end: the maximum, so long results cost few requests. */
const MAX_COUNT = '100';
/** A small page size for checks that need a second page. */
const SMALL_COUNT = 7;
/** Pages the next links are followed to (when the search has that many): a rule may break only from the third page. */
const CARRY_PAGES = 5;
const INVALID_COUNTS = ['abc', '-5', '2.5'];

const Q = {
  searchset: 'A search returns a `Bundle` of type `searchset` with `total`, `link` and `entry`.',
  count: '`_count` is the page size: default 20, maximum 100.',
  self: '`link` with `relation` = `self` is the URL of the current page.',
  next: '`link` with `relation` = `next` is present when more results exist and absent on the last page.',
  carries: 'The client follows the `next` URL as given; all search parameters are carried in it.',
  total: '`total` is advisory and may drift while paging; it is not a loop terminator. The client stops when no `next` link is present.',
  ordering: 'Ordering is by time and UUID.',
  snapshot: 'Within one paging session, records created after the first request do not appear, and deletions cause no gaps.',
  empty: 'An empty result is a valid Bundle with `total` 0, a `self` link, an empty `entry` array and no `next` link.',
  cursor: '`_cursor` is an opaque value; it is never built or parsed by the client.',
  mrSearch: 'At least one of `patient` or `encounter` must be supplied.',
  mr400: 'GET `/fhir/R4/MedicationRequest` | `system/MedicationRequest.rs` | query parameters | Bundle searchset | 400 `HPB-00101`',
  offset: 'Meaning and bounds of `_offset`: not shown.',
};

/** Status and catalog code of a response to a doubtful request, for observations. */
function outcomeOf(res: HttpResponse): Record<string, unknown> {
  return { status: res.status, code: catalogCodeOf(res) ?? null };
}

/** A 400 (or 422, per the requirement notes) with HPB-00101 in the spec's error format. */
function expectValidationError(res: HttpResponse, requirement: string): void {
  expectError(res, { status: [400, 422], code: 'HPB-00101', requirement });
}

/**
 * Whether the fixture patient's search on this endpoint cannot be empty: the
 * config's fixture record of the type reads as that patient's (the target's own
 * answer). An empty search is then a failure, not a reason to skip.
 */
async function patientHasRecords(ctx: CheckContext, ep: SearchEndpoint): Promise<boolean> {
  if (!ctx.hasFixture(ep.fixture)) return false;
  const op = ctx.findOperation(ep.resource, 'read', ep.release);
  if (!op) return false;
  const res = await ctx.fhir({ scopes: [op.scope ?? `system/${ep.resource}.rs`], url: ctx.path(op.path, { id: ctx.fixture(ep.fixture) }), share: true });
  return res.status === 200 && isObject(res.json) && refersToPatient(res.json, ctx.fixture('patient'));
}

/** Skips for too few records (the data is small), but fails an empty result of a patient whose records the target shows. */
async function needRecords(ctx: CheckContext, ep: SearchEndpoint, n: number, needed: string, res: HttpResponse): Promise<never> {
  if (n === 0 && (await patientHasRecords(ctx, ep))) {
    ctx.fail(`the search by the fixture patient is empty although the fixture ${ep.fixture} reads as that patient's ${ep.resource}`, {
      requirement: ep.patientRequirement,
      expected: `at least ${ctx.fixture(ep.fixture)}`,
      actual: 0,
      exchange: res.exchange.id,
    });
  }
  ctx.skip(`the fixture patient has ${n} matching records; ${needed}`);
}

function endpointChecks(ep: SearchEndpoint): CheckDefinition[] {
  const title = (what: string) => `${ep.resource} search (${ep.release}): ${what}`;
  const first = (ctx: CheckContext, params: Record<string, string> = {}) => {
    const search = searchOf(ctx, ep);
    return { search, url: search.url({ patient: ctx.fixture('patient'), ...params }) };
  };

  const checks: CheckDefinition[] = [
    defineCheck({
      id: `pagination.searchset.${ep.slug}`,
      title: title('a searchset Bundle with an integer total, links of relation + url and an entry array'),
      area,
      level: 'MUST',
      requirements: [
        'pagination.searchset-bundle',
        'pagination.bundle-total-integer',
        'pagination.bundle-link-shape',
        'pagination.bundle-entry-array',
        ep.patientRequirement,
      ],
      quote: Q.searchset,
      fixtures: ['patient'],
      async run(ctx: CheckContext) {
        const { search, url } = first(ctx);
        const res = await search.get(url);
        const b = expectSearchset(res, 'pagination.searchset-bundle');
        const ex = res.exchange.id;
        ctx.check(Number.isInteger(b.total) && (b.total as number) >= 0, 'total is not a non-negative integer', {
          requirement: 'pagination.bundle-total-integer',
          expected: 'integer',
          actual: b.total,
          exchange: ex,
        });
        const links = b.link;
        const malformed = Array.isArray(links) ? links.filter((l) => !isObject(l) || typeof l.relation !== 'string' || typeof l.url !== 'string') : [];
        ctx.check(Array.isArray(links) && links.length > 0 && malformed.length === 0, 'link is not an array of { relation, url }', {
          requirement: 'pagination.bundle-link-shape',
          expected: '[{ relation, url }]',
          actual: Array.isArray(links) ? malformed.slice(0, 3) : links,
          exchange: ex,
        });
        if (
          !ctx.check(Array.isArray(b.entry), 'entry is not an array', {
            requirement: 'pagination.bundle-entry-array',
            expected: 'array',
            actual: b.entry === undefined ? 'absent' : typeof b.entry,
            exchange: ex,
          })
        )
          return;
        if ((b.entry as unknown[]).length === 0 && (await patientHasRecords(ctx, ep))) {
          ctx.check(false, `the search by the fixture patient is empty although the fixture ${ep.fixture} reads as that patient's ${ep.resource}`, {
            requirement: ep.patientRequirement,
            expected: `at least ${ctx.fixture(ep.fixture)}`,
            actual: 0,
            exchange: ex,
          });
        }
        const wrong = (b.entry as unknown[]).filter((e) => !isObject(e) || !isObject(e.resource) || e.resource.resourceType !== ep.resource);
        ctx.check(wrong.length === 0, `${wrong.length} entries do not hold a ${ep.resource} in entry[].resource`, {
          requirement: 'pagination.bundle-entry-array',
          expected: `{ resource: { resourceType: ${ep.resource} } }`,
          actual: wrong.slice(0, 2),
          exchange: ex,
        });
      },
    }),
    defineCheck({
      id: `pagination.self-link.${ep.slug}`,
      title: title('every page has a self link that fetches that same page'),
      area,
      level: 'MUST',
      requirements: ['pagination.self-link'],
      quote: Q.self,
      fixtures: ['patient'],
      async run(ctx: CheckContext) {
        const { search, url } = first(ctx, { _count: String(SMALL_COUNT) });
        const pages: Page[] = [await fetchPage(ctx, search, url, 'pagination.self-link')];
        if (pages[0]!.next) pages.push(await fetchPage(ctx, search, pages[0]!.next, 'pagination.self-link'));
        for (const [i, page] of pages.entries()) {
          if (!page.self)
            ctx.fail(`page ${i + 1} has no self link`, {
              requirement: 'pagination.self-link',
              expected: 'link relation self',
              actual: page.bundle.link,
              exchange: page.res.exchange.id,
            });
          const again = await fetchPage(ctx, search, page.self, 'pagination.self-link');
          const keys = page.entries.map((e) => e.key);
          const againKeys = again.entries.map((e) => e.key);
          ctx.check(JSON.stringify(keys) === JSON.stringify(againKeys), `the self link of page ${i + 1} fetches other entries than that page`, {
            requirement: 'pagination.self-link',
            expected: keys,
            actual: againKeys,
            exchange: again.res.exchange.id,
          });
        }
      },
    }),
    defineCheck({
      id: `pagination.default-page-size.${ep.slug}`,
      title: title('without _count a page holds 20 entries when more exist'),
      area,
      level: 'MUST',
      requirements: ['pagination.count-default-20', 'limits.page-size'],
      quote: Q.count,
      fixtures: ['patient'],
      async run(ctx: CheckContext) {
        const { search, url } = first(ctx);
        const page = await fetchPage(ctx, search, url, 'pagination.count-default-20');
        const n = page.entries.length;
        const details = { requirement: 'pagination.count-default-20', expected: 20, actual: n, exchange: page.res.exchange.id };
        if (n > 20) ctx.fail(`the first page holds ${n} entries without _count (default 20)`, details);
        if (!page.next && n < 20) await needRecords(ctx, ep, n, 'the default page size needs more than 20', page.res);
        ctx.check(n === 20, `the first page holds ${n} entries without _count although more results exist`, details);
      },
    }),
    defineCheck({
      id: `pagination.count-honoured.${ep.slug}`,
      title: title('_count up to 100 sets the page size'),
      area,
      level: 'MUST',
      requirements: ['pagination.count-honoured', 'limits.page-size'],
      quote: Q.count,
      fixtures: ['patient'],
      async run(ctx: CheckContext) {
        const full = first(ctx, { _count: MAX_COUNT });
        const big = await fetchPage(ctx, full.search, full.url, 'pagination.count-honoured');
        const n = big.entries.length;
        ctx.check(n <= 100 && (!big.next || n === 100), `_count=100 gave a page of ${n} entries${big.next ? ' with a next link' : ''}`, {
          requirement: 'pagination.count-honoured',
          expected: big.next ? 100 : '<= 100',
          actual: n,
          exchange: big.res.exchange.id,
        });
        if (n < 2) await needRecords(ctx, ep, n, 'a smaller page size needs at least 2', big.res);
        const k = smallPageSize(n);
        const small = first(ctx, { _count: String(k) });
        const page = await fetchPage(ctx, small.search, small.url, 'pagination.count-honoured');
        ctx.check(page.entries.length === k, `_count=${k} gave a page of ${page.entries.length} entries although ${n} results exist`, {
          requirement: 'pagination.count-honoured',
          expected: k,
          actual: page.entries.length,
          exchange: page.res.exchange.id,
        });
      },
    }),
    defineCheck({
      id: `pagination.count-maximum.${ep.slug}`,
      title: title('_count over 100 is clamped to at most 100 or refused with 400 HPB-00101'),
      area,
      level: 'MUST',
      requirements: ['pagination.count-maximum-100', 'limits.page-size', 'pagination.count-above-maximum', 'pagination.next-present-when-more'],
      quote: `${Q.count} ${Q.next}`,
      fixtures: ['patient'],
      async run(ctx: CheckContext) {
        // A cap shows only when more than 100 match: patientManyRecords is declared to have that many.
        const many = ctx.hasFixture('patientManyRecords');
        const { search, url } = first(ctx, { patient: ctx.fixture(many ? 'patientManyRecords' : 'patient'), _count: '101' });
        const res = await search.get(url);
        if (res.status >= 400 && res.status < 500) {
          expectValidationError(res, 'pagination.count-maximum-100');
          ctx.observe('pagination.count-above-maximum', { reading: 'refused', ...outcomeOf(res) });
          return;
        }
        const b = expectSearchset(res, 'pagination.count-maximum-100');
        const n = Array.isArray(b.entry) ? b.entry.length : 0;
        ctx.check(n <= 100, `_count=101 gave a page of ${n} entries (maximum 100)`, {
          requirement: 'pagination.count-maximum-100',
          expected: '<= 100',
          actual: n,
          exchange: res.exchange.id,
        });
        const more = bundleLink(b, 'next') !== undefined;
        // A page over 100 has failed already; only a page of at most 100 without next leaves the cap unseen.
        if (!more && n <= 100) {
          // Every match fits on one page: a server that honours 101 answers the same, so nothing was verified.
          ctx.observe('pagination.count-above-maximum', {
            reading: 'accepted (all matches on one page: clamping not observable)',
            status: res.status,
            entries: n,
          });
          const needed = 'whether _count=101 is clamped to 100 shows only when more than 100 match (a next link on the first page)';
          // The fixture is declared to have more than 100: a page of at most 100 without next hides the rest.
          if (many)
            ctx.fail(`_count=101 for patientManyRecords (declared to have more than 100 ${ep.resource} records) gave ${n} entries and no next link`, {
              requirement: 'pagination.next-present-when-more',
              expected: 'a next link (more than 100 match)',
              actual: `${n} entries, no next`,
              exchange: res.exchange.id,
            });
          await needRecords(ctx, ep, n, `${needed}; a patientManyRecords fixture with more than 100 lets it show`, res);
        }
        ctx.observe('pagination.count-above-maximum', {
          reading: n === 100 ? 'clamped to 100' : n > 100 ? 'not clamped' : 'page smaller than 100',
          status: res.status,
          entries: n,
        });
      },
    }),
    defineCheck({
      id: `pagination.next-links.${ep.slug}`,
      surfaces: {
        release: ep.release,
        resource: ep.resource,
        page: 'every page to the end, twice (_count 100, and n/5 per page: five pages or more)',
      },
      title: title('following next to the end returns every match once; next is present while more exist and absent on the last page'),
      area,
      level: 'MUST',
      requirements: ['pagination.paging-terminates', 'pagination.next-present-when-more', 'pagination.next-absent-on-last-page', 'pagination.total-advisory'],
      quote: `${Q.next} ${Q.total}`,
      fixtures: ['patient'],
      async run(ctx: CheckContext) {
        const full = first(ctx, { _count: MAX_COUNT });
        const all = await walk(ctx, full.search, full.url, 'pagination.paging-terminates');
        const n = all.keys.size;
        if (n < 2) await needRecords(ctx, ep, n, 'paging needs at least 2', all.pages[0]!.res);
        const k = walkPageSize(n);
        const small = first(ctx, { _count: String(k) });
        const paged = await walk(ctx, small.search, small.url, 'pagination.paging-terminates');
        const missing = [...all.keys].filter((key) => !paged.keys.has(key));
        const lastPage = paged.pages[paged.pages.length - 1]!;
        ctx.check(missing.length === 0, `paging by ${k} ended after ${paged.pages.length} pages without ${missing.length} of the ${n} results`, {
          requirement: 'pagination.next-present-when-more',
          expected: `${n} results over about ${Math.ceil(n / k)} pages`,
          actual: { returned: paged.keys.size, missing: missing.slice(0, 5) },
          exchange: lastPage.res.exchange.id,
        });
        const totals = [...all.pages, ...paged.pages].map((p) => p.bundle.total);
        ctx.observe(
          'pagination.total-advisory',
          { stable: totals.every((t) => t === n), totals: [...new Set(totals)], returned: n },
          'total of every page of both walks, against the number of results returned',
        );
      },
    }),
    defineCheck({
      id: `pagination.next-carries-parameters.${ep.slug}`,
      surfaces: { release: ep.release, resource: ep.resource, page: `pages 2 to ${CARRY_PAGES} (or the last), _count ${SMALL_COUNT}` },
      title: title('the next link as given keeps the search filter and the page size'),
      area,
      level: 'MUST',
      requirements: ['pagination.next-carries-parameters'],
      quote: Q.carries,
      fixtures: ['patient'],
      async run(ctx: CheckContext) {
        const patient = ctx.fixture('patient');
        const { search, url } = first(ctx, { _count: String(SMALL_COUNT) });
        const page1 = await fetchPage(ctx, search, url, 'pagination.next-carries-parameters');
        if (!page1.next) return needRecords(ctx, ep, page1.entries.length, `a second page needs more than ${SMALL_COUNT}`, page1.res);
        ctx.observe(
          'pagination.next-url-names-patient',
          new URL(page1.next, 'http://x').searchParams.getAll('patient').some((v) => v.endsWith(patient)),
        );
        // Every page to the end, or to CARRY_PAGES pages: a next link may lose the filter or the size only further on.
        let page = page1;
        let position = 1;
        while (page.next && position < CARRY_PAGES) {
          page = await fetchPage(ctx, search, page.next, 'pagination.next-carries-parameters');
          position++;
          const foreign = page.entries.filter((e) => !refersToPatient(e.resource, patient));
          ctx.check(foreign.length === 0, `page ${position} holds ${foreign.length} entries of another patient`, {
            requirement: 'pagination.next-carries-parameters',
            expected: `subject Patient/${patient}`,
            actual: foreign.slice(0, 3).map((e) => e.key),
            exchange: page.res.exchange.id,
          });
          const n = page.entries.length;
          ctx.check(page.next ? n === SMALL_COUNT : n > 0 && n <= SMALL_COUNT, `page ${position} holds ${n} entries (_count=${SMALL_COUNT})`, {
            requirement: 'pagination.next-carries-parameters',
            expected: page.next ? SMALL_COUNT : `1..${SMALL_COUNT}`,
            actual: n,
            exchange: page.res.exchange.id,
          });
        }
        ctx.observe('surfaces', { pages: position, end: page.next === undefined ? 'last page' : `bound of ${CARRY_PAGES} pages` });
      },
    }),
    defineCheck({
      id: `pagination.ordering.${ep.slug}`,
      title: title('results come in one order whatever the page size (records which exposed time, if any, it follows)'),
      area,
      level: 'MUST',
      requirements: ['pagination.ordering-time-uuid'],
      quote: Q.ordering,
      fixtures: ['patient'],
      async run(ctx: CheckContext) {
        const full = first(ctx, { _count: MAX_COUNT });
        const all = await walk(ctx, full.search, full.url, 'pagination.ordering-time-uuid');
        const n = all.entries.length;
        if (n < 3) await needRecords(ctx, ep, n, 'ordering needs at least 3', all.pages[0]!.res);
        const k = smallPageSize(n);
        const small = first(ctx, { _count: String(k) });
        const paged = await walk(ctx, small.search, small.url, 'pagination.ordering-time-uuid');
        // By time and UUID is one total order: paging by k must give the order paging by 100 gives.
        const differs = firstOrderDifference(
          all.entries.map((e) => e.key),
          paged.entries.map((e) => e.key),
        );
        if (differs)
          ctx.fail(`paging by ${k} returns the results in another order than paging by ${MAX_COUNT} (from common result ${differs.index + 1})`, {
            requirement: 'pagination.ordering-time-uuid',
            expected: differs.expected,
            actual: differs.actual,
            exchange: paged.pages.find((p) => p.entries.some((e) => e.key === differs.actual[0]))?.res.exchange.id,
          });
        // Which time is not shown: whether an exposed time field explains the order is recorded, never failed.
        const verdict = checkOrdering(all.entries, ep.timeFields);
        ctx.observe(
          'pagination.ordering-exposed-time',
          verdict.fits ? { ...verdict.fits, fields: ep.timeFields } : { fits: false, fields: ep.timeFields, firstMisfit: verdict.offending },
          'the order may follow a time the resources do not expose (e.g. creation time); see pagination.ordering-created',
        );
      },
    }),
    defineCheck({
      id: `pagination.ordering-created.${ep.slug}`,
      title: title('records created one after another come in creation order, after (or before) every older record'),
      area,
      level: 'MUST',
      requirements: ['pagination.ordering-time-uuid'],
      quote: Q.ordering,
      tags: ['writes'],
      fixtures: ['patient'],
      async run(ctx: CheckContext) {
        const created = await createForOrdering(ctx, ep);
        const full = first(ctx, { _count: MAX_COUNT });
        const all = await walk(ctx, full.search, full.url, 'pagination.ordering-time-uuid');
        const keys = all.entries.map((e) => e.key);
        const older = olderRecords(ctx, all.entries, created);
        const byCreation = checkCreationOrder(keys, created, older);
        // Creation time is one reading of "time"; an order an exposed time field explains (with the id on ties) is another:
        // every pair of records that carry the field (a server's order for records without it is its own choice).
        const byField = checkOrdering(all.entries, ep.timeFields);
        const bySingleField = ep.timeFields.find(
          (f) =>
            checkOrdering(
              all.entries.filter((e) => timeAt(e.resource, f) !== undefined),
              [f],
            ).fits,
        );
        ctx.observe('pagination.ordering-created', {
          creationOrder: byCreation.fits ?? false,
          exposedTime: byField.fits ?? false,
          singleField: bySingleField ?? false,
          records: keys.length,
          olderRecords: older.size,
        });
        if (byCreation.fits || byField.fits || bySingleField) return;
        const last = all.pages[all.pages.length - 1]!;
        ctx.fail(
          `the results follow neither creation order nor an exposed time (${ep.timeFields.join(' / ')}) with the id on ties: ${byCreation.problem ?? ''}`,
          {
            requirement: 'pagination.ordering-time-uuid',
            expected: 'created records in creation order, on the new side of every older record (or an order by an exposed time and UUID)',
            actual: { creation: byCreation.problem, exposedTime: byField.offending },
            exchange: last.res.exchange.id,
          },
        );
      },
    }),
    defineCheck({
      id: `pagination.empty-result.${ep.slug}`,
      title: title('an empty result has total 0, a self link, an empty entry array and no next link'),
      area,
      level: 'MUST',
      requirements: ['pagination.empty-total-zero', 'pagination.empty-self-link', 'pagination.empty-entry-array', 'pagination.empty-no-next'],
      quote: Q.empty,
      fixtures: ['patientNoRecords'],
      async run(ctx: CheckContext) {
        const search = searchOf(ctx, ep);
        const page = await fetchPage(ctx, search, search.url({ patient: ctx.fixture('patientNoRecords') }), 'pagination.empty-total-zero');
        if (page.entries.length > 0) {
          // The config declares the patient without records: entries of other patients break the empty result.
          const noRecords = ctx.fixture('patientNoRecords');
          const foreign = page.entries.filter((e) => !refersToPatient(e.resource, noRecords));
          if (foreign.length > 0) {
            ctx.fail(`the search by patientNoRecords returns ${foreign.length} ${ep.resource} records of other patients instead of an empty result`, {
              requirement: 'pagination.empty-total-zero',
              expected: 'an empty result',
              actual: foreign.slice(0, 3).map((e) => e.key),
              exchange: page.res.exchange.id,
            });
          }
          ctx.skip(`the patientNoRecords fixture has ${page.entries.length} ${ep.resource} records of its own`);
        }
        const b = page.bundle;
        const ex = page.res.exchange.id;
        ctx.check(b.total === 0, 'total is not 0', { requirement: 'pagination.empty-total-zero', expected: 0, actual: b.total, exchange: ex });
        ctx.check(page.self !== undefined, 'no self link', {
          requirement: 'pagination.empty-self-link',
          expected: 'link relation self',
          actual: b.link,
          exchange: ex,
        });
        ctx.check(Array.isArray(b.entry), 'entry is not an empty array', {
          requirement: 'pagination.empty-entry-array',
          expected: [],
          actual: b.entry === undefined ? 'absent' : b.entry,
          exchange: ex,
        });
        ctx.check(page.next === undefined, 'an empty result has a next link', {
          requirement: 'pagination.empty-no-next',
          expected: 'no next link',
          actual: page.next,
          exchange: ex,
        });
      },
    }),
  ];

  if (ep.resource !== 'MedicationRequest') {
    checks.push(
      defineCheck({
        id: `pagination.forged-cursor.${ep.slug}`,
        title: title('what a modified or made-up _cursor gives'),
        area,
        level: 'observation',
        requirements: ['pagination.forged-cursor'],
        quote: Q.cursor,
        fixtures: ['patient'],
        async run(ctx: CheckContext) {
          for (const [kind, res] of await forgedCursorResponses(ctx, first(ctx, { _count: String(SMALL_COUNT) })))
            ctx.observe(`pagination.forged-cursor.${kind}`, outcomeOf(res));
        },
      }),
      defineCheck({
        id: `pagination.invalid-count.${ep.slug}`,
        title: title('what a non-integer or negative _count gives'),
        area,
        level: 'observation',
        requirements: [ep.resource === 'Encounter' ? 'encounter.search-invalid-parameter' : 'limits.page-size'],
        quote: Q.count,
        fixtures: ['patient'],
        async run(ctx: CheckContext) {
          for (const count of INVALID_COUNTS) {
            const { search, url } = first(ctx, { _count: count });
            ctx.observe(`pagination.invalid-count.${count}`, outcomeOf(await search.get(url, { retry: 'none' })));
          }
        },
      }),
    );
  }
  return checks;
}

/** Records the ordering check creates per endpoint. */
const ORDERING_RECORDS = 3;

/**
 * Creates ORDERING_RECORDS records of the fixture patient one after another,
 * their own time (authoredOn, period.start, date) a minute apart and increasing
 * with creation, none updated afterwards: creation time, meta.lastUpdated and
 * the own time then all order them the same way.
 */
async function createForOrdering(ctx: CheckContext, ep: SearchEndpoint): Promise<CreatedRecord[]> {
  const op = ctx.operation(ep.resource, 'create', ep.release);
  const scopes = [op.scope ?? (ep.resource === 'MedicationRequest' ? 'system/MedicationRequest.c' : `system/${ep.resource}.cru`)];
  const base = Math.floor(Date.now() / 60_000) * 60_000 - 10 * 60_000;
  const out: CreatedRecord[] = [];
  for (let i = 0; i < ORDERING_RECORDS; i++) {
    const at = new Date(base + i * 60_000).toISOString();
    const sentAt = Date.now();
    const res = await ctx.fhir({ scopes, method: 'POST', url: op.path, body: orderingBody(ctx, ep, at) });
    const answeredAt = Date.now();
    const what = `a valid ${ep.release} ${ep.resource} create (record ${i + 1} of ${ORDERING_RECORDS} for the ordering check)`;
    if (!isSuccess(res)) refusedCreate(ctx, res, ep.resource, what);
    const id = createdIdOf(res, ep.resource) ?? noCreatedId(ctx, res, what);
    ctx.created(ep.resource, id);
    out.push({ id, sentAt, answeredAt });
  }
  return out;
}

function orderingBody(ctx: CheckContext, ep: SearchEndpoint, at: string): Record<string, unknown> {
  const meta = runMeta(ctx);
  const subject = { reference: `Patient/${ctx.fixture('patient')}` };
  if (ep.resource === 'MedicationRequest') {
    return {
      resourceType: 'MedicationRequest',
      meta,
      status: 'active',
      intent: 'order',
      subject,
      authoredOn: at,
      medicationCodeableConcept: {
        coding: [{ system: 'http://www.nlm.nih.gov/research/umls/rxnorm', code: '197361', display: 'amlodipine 5 MG Oral Tablet' }],
      },
    };
  }
  if (ep.resource === 'Encounter') {
    return {
      resourceType: 'Encounter',
      meta,
      status: 'finished',
      subject,
      period: { start: at },
      class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB', display: 'ambulatory' },
      ...(ctx.hasFixture('practitioner') ? { participant: [{ individual: { reference: `Practitioner/${ctx.fixture('practitioner')}` } }] } : {}),
    };
  }
  return documentBody(ctx, { date: at });
}

/**
 * Keys (lower case) of records that surely existed well before the created
 * ones: not tagged with this run, and last updated (server clock) at least two
 * seconds before the first created record was (when both times are given).
 */
function olderRecords(ctx: CheckContext, entries: readonly Entry[], created: readonly CreatedRecord[]): Set<string> {
  const ids = new Set(created.map((c) => c.id.toLowerCase()));
  const updatedAt = (r: Record<string, unknown>) => (isObject(r.meta) && typeof r.meta.lastUpdated === 'string' ? Date.parse(r.meta.lastUpdated) : NaN);
  const ours = entries
    .filter((e) => ids.has(e.key.toLowerCase()))
    .map((e) => updatedAt(e.resource))
    .filter((t) => !Number.isNaN(t));
  const firstCreated = ours.length > 0 ? Math.min(...ours) : undefined;
  const out = new Set<string>();
  for (const e of entries) {
    if (ids.has(e.key.toLowerCase()) || hasRunTag(ctx, e.resource)) continue;
    const t = updatedAt(e.resource);
    if (firstCreated !== undefined && !Number.isNaN(t) && t > firstCreated - 2000) continue;
    out.add(e.key.toLowerCase());
  }
  return out;
}

/**
 * Responses to the next link with its `_cursor` tampered, and to a made-up
 * `_cursor`. Skips when the first page is not a searchset with a next link
 * (other checks judge that page).
 */
async function forgedCursorResponses(
  ctx: CheckContext,
  start: { search: Search; url: string },
  judged?: SearchEndpoint,
): Promise<Array<[string, HttpResponse]>> {
  const res = await start.search.get(start.url);
  const first = searchsetOf(res);
  const next = first && bundleLink(first, 'next');
  if (!next) {
    // A MUST check fails an empty result of a patient whose records the target shows; otherwise the data is too small.
    const n = first && Array.isArray(first.entry) ? first.entry.length : undefined;
    if (judged && n !== undefined) await needRecords(ctx, judged, n, `a next link needs more than ${SMALL_COUNT}`, res);
    ctx.skip(`the first page (status ${res.status}) is not a searchset Bundle with a next link; a next link needs more than ${SMALL_COUNT} results`);
  }
  const out: Array<[string, HttpResponse]> = [];
  const cursor = cursorOf(next);
  if (cursor === undefined) ctx.observe('pagination.next-has-cursor', false, 'the next link carries no _cursor parameter to tamper with');
  else out.push(['tampered', await start.search.get(withCursor(next, tamper(cursor)), { retry: 'none' })]);
  out.push(['made-up', await start.search.get(withCursor(next, 'bm90LWEtY3Vyc29y'), { retry: 'none' })]);
  return out;
}

/** The searchset Bundle of a response, without judging the response. */
function searchsetOf(res: HttpResponse): Record<string, unknown> | undefined {
  const b = res.json;
  return res.status === 200 && isObject(b) && b.resourceType === 'Bundle' && b.type === 'searchset' ? b : undefined;
}

const mr = ENDPOINTS.find((e) => e.resource === 'MedicationRequest')!;
const docs = ENDPOINTS.find((e) => e.resource === 'DocumentReference')!;

const medicationRequestChecks: CheckDefinition[] = [
  defineCheck({
    id: 'pagination.patient-or-encounter-required.medication-request',
    title: 'MedicationRequest search without patient and encounter gives 400 HPB-00101',
    area,
    level: 'MUST',
    requirements: ['medication-request.search-patient-or-encounter', 'medication-request.search-400'],
    quote: Q.mrSearch,
    async run(ctx: CheckContext) {
      const search = searchOf(ctx, mr);
      // A 400 is the answer: a server error is judged, not retried into no verdict.
      expectValidationError(await search.get(search.path, { retry: 'none' }), 'medication-request.search-patient-or-encounter');
      expectValidationError(await search.get(search.url({ _count: '10' }), { retry: 'none' }), 'medication-request.search-patient-or-encounter');
    },
  }),
  defineCheck({
    id: 'pagination.invalid-count.medication-request',
    title: 'MedicationRequest search with a non-integer or negative _count gives 400 HPB-00101',
    area,
    level: 'MUST',
    requirements: ['medication-request.search-400'],
    quote: Q.mr400,
    fixtures: ['patient'],
    async run(ctx: CheckContext) {
      const search = searchOf(ctx, mr);
      for (const count of INVALID_COUNTS) {
        const res = await search.get(search.url({ patient: ctx.fixture('patient'), _count: count }), { retry: 'none' });
        ctx.observe(`pagination.invalid-count.${count}`, outcomeOf(res));
        expectValidationError(res, 'medication-request.search-400');
      }
    },
  }),
  defineCheck({
    id: 'pagination.forged-cursor.medication-request',
    title: 'MedicationRequest search with a modified or made-up _cursor gives 400 HPB-00101 or a page of the same search',
    area,
    level: 'MUST',
    requirements: ['medication-request.search-400', 'pagination.forged-cursor'],
    quote: Q.mr400,
    fixtures: ['patient'],
    async run(ctx: CheckContext) {
      const patient = ctx.fixture('patient');
      const search = searchOf(ctx, mr);
      for (const [kind, res] of await forgedCursorResponses(ctx, { search, url: search.url({ patient, _count: String(SMALL_COUNT) }) }, mr)) {
        ctx.observe(`pagination.forged-cursor.${kind}`, outcomeOf(res));
        if (res.status !== 200) {
          expectValidationError(res, 'medication-request.search-400');
          continue;
        }
        const b = expectSearchset(res, 'medication-request.search-400');
        const foreign = (Array.isArray(b.entry) ? b.entry : []).filter((e) => !isObject(e) || !isObject(e.resource) || !refersToPatient(e.resource, patient));
        ctx.check(foreign.length === 0, `a ${kind} _cursor was accepted and returned ${foreign.length} entries outside the search`, {
          requirement: 'medication-request.search-400',
          expected: `400 HPB-00101, or entries of Patient/${patient}`,
          actual: foreign.length,
          exchange: res.exchange.id,
        });
      }
    },
  }),
];

const offsetCheck = defineCheck({
  id: 'pagination.offset.document-reference',
  title: 'DocumentReference search: what _offset does (a skip, ignored, or refused) and its bounds',
  area,
  level: 'observation',
  requirements: ['document-reference.offset-not-shown'],
  quote: Q.offset,
  fixtures: ['patient'],
  async run(ctx: CheckContext) {
    const search = searchOf(ctx, docs);
    const url = (params: Record<string, string>) => search.url({ patient: ctx.fixture('patient'), _count: '10', ...params });
    const base = await search.get(url({}));
    const baseBundle = searchsetOf(base);
    if (!baseBundle) ctx.skip(`the first page (status ${base.status}) is not a searchset Bundle`);
    const keys = (b: Record<string, unknown>) =>
      (Array.isArray(b.entry) ? b.entry : []).map((e) => (isObject(e) && isObject(e.resource) ? e.resource.id : undefined));
    const baseKeys = keys(baseBundle);
    const probes: Array<[string, string]> = [
      ['5', '5'],
      ['beyond-total', String(Number.isInteger(baseBundle.total) ? (baseBundle.total as number) + 10 : 100_000)],
      ['negative', '-1'],
    ];
    for (const [name, value] of probes) {
      const res = await search.get(url({ _offset: value }), { retry: 'none' });
      if (res.status !== 200 || !isObject(res.json)) {
        ctx.observe(`document-reference.offset.${name}`, { _offset: value, ...outcomeOf(res) });
        continue;
      }
      const got = keys(res.json);
      const meaning =
        JSON.stringify(got) === JSON.stringify(baseKeys)
          ? 'ignored'
          : got[0] !== undefined && got[0] === baseKeys[Number(value)]
            ? 'skip'
            : got.length === 0
              ? 'empty page'
              : 'other';
      ctx.observe(`document-reference.offset.${name}`, {
        _offset: value,
        status: res.status,
        entries: got.length,
        total: res.json.total,
        meaning,
        next: Array.isArray(res.json.link) && res.json.link.some((l) => isObject(l) && l.relation === 'next'),
      });
    }
  },
});

export const checks: CheckDefinition[] = coveringTokens([
  ...ENDPOINTS.flatMap(endpointChecks),
  ...medicationRequestChecks,
  offsetCheck,
  ...filterCarryChecks,
  ...snapshotChecks,
]);

export default checks;
