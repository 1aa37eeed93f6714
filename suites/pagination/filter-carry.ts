/**
 * "The client follows the `next` URL as given; all search parameters are carried in it": the
 * filters besides the patient too (MedicationRequest's encounter, Encounter's status and class,
 * DocumentReference's type and category). pagination.next-carries-parameters.* follows a search by
 * patient and _count only; a target that rebuilds its next link from those two (or keeps the rest
 * nowhere, not in the link nor in an opaque cursor) serves later pages unfiltered. Judged on what
 * the pages hold, not on the link's text: a cursor may carry the parameters its own way.
 */
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import { firstCodeOf, referencedId } from '../../src/service/index.js';
import { ENDPOINTS, type Entry, fetchPage, refersToPatient, type SearchEndpoint, searchOf, walk } from './support.js';

const area = 'pagination';
const REQUIREMENT = 'pagination.next-carries-parameters';
/** Pages followed per filtered search: enough for a filter dropped after the first or second page to show. */
const FILTER_PAGES = 6;

interface Filter {
  param: string;
  /** The value a record holds for the parameter, if any (the value searched for is the most common one). */
  valueOf(resource: Record<string, unknown>): string | undefined;
}

const FILTERS: Record<SearchEndpoint['resource'], Filter[]> = {
  MedicationRequest: [{ param: 'encounter', valueOf: (r) => referencedId(r.encounter, 'Encounter') }],
  Encounter: [
    { param: 'status', valueOf: (r) => (typeof r.status === 'string' ? r.status : undefined) },
    { param: 'class', valueOf: (r) => firstCodeOf(r.class) },
  ],
  DocumentReference: [
    { param: 'type', valueOf: (r) => firstCodeOf(r.type) },
    { param: 'category', valueOf: (r) => firstCodeOf(r.category) },
  ],
};

/** The most common value of the filter among the patient's records, when it matches some but not all of them (at least two). */
function commonValue(entries: readonly Entry[], filter: Filter): { value: string; matches: number } | undefined {
  const counts = new Map<string, number>();
  for (const e of entries) {
    const v = filter.valueOf(e.resource);
    if (v !== undefined) counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  const [best] = [...counts].filter(([, n]) => n >= 2 && n < entries.length).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return best ? { value: best[0], matches: best[1] } : undefined;
}

function filterCarryCheck(ep: SearchEndpoint): CheckDefinition {
  const filters = FILTERS[ep.resource];
  return defineCheck({
    id: `pagination.next-carries-filter.${ep.slug}`,
    surfaces: {
      release: ep.release,
      resource: ep.resource,
      channel: `search by patient and ${filters.map((f) => f.param).join(', then by patient and ')}`,
      page: `every page to the last (at most ${FILTER_PAGES}), a page size a third of the matches`,
      leftOut: ['date and its prefixes: a time zone the target compares days in is its own, so a record near the bound may match or not'],
    },
    title: `${ep.resource} search (${ep.release}): every page a next link leads to keeps the search's filters (${filters.map((f) => f.param).join(', ')}), not only patient and _count`,
    area,
    level: 'MUST',
    requirements: [REQUIREMENT],
    // The patient's records at 100 a page, then each filter's pages (about four at a third of its matches).
    requests: 1 + 4 * filters.length + (ep.resource === 'MedicationRequest' ? 1 : 0),
    quote: 'The client follows the `next` URL as given; all search parameters are carried in it.',
    fixtures: ['patient'],
    async run(ctx: CheckContext) {
      const patient = ctx.fixture('patient');
      const search = searchOf(ctx, ep);
      const all = await walk(ctx, search, search.url({ patient, _count: '100' }), REQUIREMENT);
      const published = new Set(ctx.operation(ep.resource, 'search-type', ep.release).searchParams.map((p) => p.name));
      const judged: Record<string, unknown> = {};
      const notJudged: string[] = [];
      for (const filter of filters) {
        if (!published.has(filter.param)) {
          notJudged.push(`${filter.param} (not a published parameter)`);
          continue;
        }
        const common = commonValue(all.entries, filter);
        if (!common) {
          notJudged.push(`${filter.param} (no value held by two or more, and not all, of the patient's ${all.entries.length} records)`);
          continue;
        }
        const size = Math.max(1, Math.floor(common.matches / 3));
        const holds = (e: Entry) => filter.valueOf(e.resource) === common.value && refersToPatient(e.resource, patient);
        let page = await fetchPage(ctx, search, search.url({ patient, [filter.param]: common.value, _count: String(size) }), REQUIREMENT);
        // The target's own reading of the filter: a first page it does not hold to as read here leaves the filter unjudged.
        const unlike = page.entries.filter((e) => !holds(e));
        if (unlike.length > 0) {
          notJudged.push(`${filter.param}=${common.value} (the first page holds ${unlike.length} records the filter, as read here, does not match)`);
          continue;
        }
        let position = 1;
        let seen = page.entries.length;
        while (page.next && position < FILTER_PAGES) {
          page = await fetchPage(ctx, search, page.next, REQUIREMENT);
          position++;
          seen += page.entries.length;
          const stray = page.entries.filter((e) => !holds(e));
          ctx.check(
            stray.length === 0,
            `${filter.param}=${common.value}&_count=${size}: page ${position} holds ${stray.length} records that do not match it (${stray
              .slice(0, 3)
              .map((e) => `${e.key}: ${filter.param} ${filter.valueOf(e.resource) ?? 'none'}`)
              .join(', ')}): the next link lost the filter`,
            {
              requirement: REQUIREMENT,
              expected: `${filter.param} ${common.value}, patient ${patient}`,
              actual: stray.slice(0, 5).map((e) => e.key),
              exchange: page.res.exchange.id,
            },
          );
          if (stray.length > 0) break;
        }
        if (position === 1) {
          notJudged.push(`${filter.param}=${common.value} (one page of ${seen} at _count ${size}: no next link to follow)`);
          continue;
        }
        judged[`${filter.param}=${common.value}`] = { matches: common.matches, pageSize: size, pages: position, entries: seen };
      }
      ctx.observe('surfaces', { judged, ...(notJudged.length ? { notJudged } : {}) });
      if (Object.keys(judged).length === 0) ctx.skip(`no filter could be judged: ${notJudged.join('; ')}`);
    },
  });
}

export const filterCarryChecks: CheckDefinition[] = ENDPOINTS.map(filterCarryCheck);
