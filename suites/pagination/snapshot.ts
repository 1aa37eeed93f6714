/**
 * "Within one paging session, records created after the first request do not appear": on every
 * search endpoint, and for the whole session, not only the page after the first. A record of the
 * patient is created after the first page and another after the second; walking on to the last
 * page, neither may appear. Pages of a third of the patient's records, so the session has a
 * third page (a target that keeps the snapshot in its first next link only serves it there).
 */
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import { createdIdOf, isSuccess, newRecordOf, noCreatedId, refusedCreate } from '../../src/service/index.js';
import { ENDPOINTS, type Entry, fetchPage, type SearchEndpoint, searchOf, walk } from './support.js';

const area = 'pagination';
const REQUIREMENT = 'pagination.snapshot-excludes-new-records';
const QUOTE = 'Within one paging session, records created after the first request do not appear, and deletions cause no gaps.';

function snapshotCheck(ep: SearchEndpoint): CheckDefinition {
  return defineCheck({
    id: `pagination.snapshot.${ep.slug}`,
    surfaces: {
      release: ep.release,
      resource: ep.resource,
      page: 'a record created after the first page and another after the second, looked for on every page to the last (pages of a third of the records)',
    },
    title: `${ep.resource} search (${ep.release}): records created after the first page, or after the second, do not appear while following next`,
    area,
    level: 'MUST',
    requirements: [REQUIREMENT],
    quote: QUOTE,
    tags: ['writes'],
    // The patient's records at 100 a page (MedicationRequest's 160: two), three pages, two creates.
    requests: ep.resource === 'MedicationRequest' ? 7 : 6,
    fixtures: ['patient'],
    async run(ctx: CheckContext) {
      const patient = ctx.fixture('patient');
      const search = searchOf(ctx, ep);
      const create = ctx.operation(ep.resource, 'create', ep.release);
      // How many records the patient has: pages of a third of them make three pages.
      const all = await walk(ctx, search, search.url({ patient, _count: '100' }), REQUIREMENT);
      if (all.entries.length < 3) ctx.skip(`the fixture patient has ${all.entries.length} ${ep.resource} records; three pages need at least 3`);
      const size = Math.max(1, Math.ceil(all.entries.length / 3));
      const createOne = async (after: string): Promise<string> => {
        const res = await ctx.fhir({
          scopes: [create.scope ?? `system/${ep.resource}.cru`],
          method: create.method,
          url: create.path,
          headers: { 'content-type': 'application/fhir+json' },
          body: newRecordOf(ctx, ep.release, ep.resource),
        });
        const what = `a valid ${ep.release} ${ep.resource} create (the record made after the ${after} page)`;
        if (!isSuccess(res)) refusedCreate(ctx, res, ep.resource, what);
        const id = createdIdOf(res, ep.resource) ?? noCreatedId(ctx, res, what);
        ctx.created(ep.resource, id);
        return id;
      };
      const page1 = await fetchPage(ctx, search, search.url({ patient, _count: String(size) }), REQUIREMENT);
      if (!page1.next) ctx.skip(`the first page of ${size} of the patient's ${all.entries.length} records has no next link (pagination.next-links.${ep.slug})`);
      const afterFirst = await createOne('first');
      const page2 = await fetchPage(ctx, search, page1.next, REQUIREMENT);
      const afterSecond = await createOne('second');
      const rest = page2.next ? await walk(ctx, search, page2.next, REQUIREMENT) : { pages: [], entries: [] as Entry[] };
      const pages = [page1, page2, ...rest.pages];
      for (const [id, after] of [
        [afterFirst, 'first'],
        [afterSecond, 'second'],
      ] as const) {
        const at = pages.findIndex((p) => p.entries.some((e) => e.key === id));
        ctx.check(
          at === -1,
          `${/^[AEIOU]/.test(ep.resource) ? 'an' : 'a'} ${ep.resource} created after the ${after} page appeared on page ${at + 1} while following next`,
          {
            requirement: REQUIREMENT,
            expected: `${id} absent`,
            actual: `on page ${at + 1}`,
            ...(at >= 0 ? { exchange: pages[at]!.res.exchange.id } : {}),
          },
        );
      }
      ctx.observe('surfaces', { records: all.entries.length, pageSize: size, pages: pages.length });
    },
  });
}

export const snapshotChecks: CheckDefinition[] = ENDPOINTS.map(snapshotCheck);
