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

/** A value searched for: how many of the patient's records it matches, and whether a record matches it. */
interface Chosen {
  value: string;
  matches: number;
  /** true: the record matches the value; false: it cannot, however the target reads it; undefined: either reading holds. */
  match(resource: Record<string, unknown>): boolean | undefined;
  /** What the record holds for the parameter, for a message. */
  describe(resource: Record<string, unknown>): string;
}

interface Filter {
  param: string;
  /** The value to search for among the patient's records, when one matches some but not all of them (at least two). */
  choose(entries: readonly Entry[]): Chosen | undefined;
}

/** A token or reference filter: its most common value among the patient's records. */
function equalTo(param: string, held: (r: Record<string, unknown>) => string | undefined): Filter {
  return {
    param,
    choose(entries) {
      const counts = new Map<string, number>();
      for (const e of entries) {
        const v = held(e.resource);
        if (v !== undefined) counts.set(v, (counts.get(v) ?? 0) + 1);
      }
      const [best] = [...counts].filter(([, n]) => n >= 2 && n < entries.length).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
      if (!best) return undefined;
      return { value: best[0], matches: best[1], match: (r) => held(r) === best[0], describe: (r) => held(r) ?? 'none' };
    },
  };
}

const DAY_MS = 86_400_000;

/**
 * A date filter: a day chosen so that about half the patient's records fall on either side, with the
 * prefix that a dropped filter would show: `le` when the target's order (the records as it lists
 * them) runs forward in time, `ge` when it runs back (a next link that lost `ge` in a forward order
 * still serves only later records, so the loss would not show). A target compares days in a time
 * zone of its own (the spec does not say which) and may read a period as a whole: a record whose
 * times (`times`: an Encounter's period start and end, a DocumentReference's date) all fall more than
 * a day before the day, or more than a day after it, is on that side however it reads them; a record
 * near the day, or without a time, may go either way.
 */
function dated(param: string, times: (r: Record<string, unknown>) => number[]): Filter {
  return {
    param,
    choose(entries) {
      const listed = entries.map((e) => times(e.resource)).filter((t) => t.length > 0);
      if (listed.length < 3) return undefined;
      let forward = 0;
      for (let i = 1; i < listed.length; i++) forward += Math.sign(Math.min(...listed[i]!) - Math.min(...listed[i - 1]!));
      const prefix = forward >= 0 ? 'le' : 'ge';
      const starts = listed.map((t) => Math.min(...t)).sort((a, b) => a - b);
      const day = new Date(starts[Math.floor(starts.length / 2)]!).toISOString().slice(0, 10);
      const bound = Date.parse(`${day}T00:00:00Z`);
      const side = (r: Record<string, unknown>): 'before' | 'after' | undefined => {
        const t = times(r);
        if (t.length === 0) return undefined;
        if (Math.max(...t) < bound - DAY_MS) return 'before';
        if (Math.min(...t) >= bound + 2 * DAY_MS) return 'after';
        return undefined;
      };
      const match = (r: Record<string, unknown>): boolean | undefined => {
        const s = side(r);
        return s === undefined ? undefined : s === (prefix === 'ge' ? 'after' : 'before');
      };
      const matches = entries.filter((e) => match(e.resource) === true).length;
      const others = entries.filter((e) => match(e.resource) === false).length;
      if (matches < 2 || others === 0) return undefined;
      return {
        value: `${prefix}${day}`,
        matches,
        match,
        describe: (r) =>
          times(r)
            .map((t) => new Date(t).toISOString())
            .join(' to ') || 'none',
      };
    },
  };
}

const instants = (...values: unknown[]): number[] =>
  values
    .filter((v): v is string => typeof v === 'string')
    .map(Date.parse)
    .filter(Number.isFinite);
const periodOf = (r: Record<string, unknown>) => (typeof r.period === 'object' && r.period !== null ? (r.period as Record<string, unknown>) : {});

const FILTERS: Record<SearchEndpoint['resource'], Filter[]> = {
  MedicationRequest: [equalTo('encounter', (r) => referencedId(r.encounter, 'Encounter'))],
  Encounter: [
    equalTo('status', (r) => (typeof r.status === 'string' ? r.status : undefined)),
    equalTo('class', (r) => firstCodeOf(r.class)),
    dated('date', (r) => instants(periodOf(r).start, periodOf(r).end)),
  ],
  DocumentReference: [equalTo('type', (r) => firstCodeOf(r.type)), equalTo('category', (r) => firstCodeOf(r.category)), dated('date', (r) => instants(r.date))],
};

function filterCarryCheck(ep: SearchEndpoint): CheckDefinition {
  const filters = FILTERS[ep.resource];
  return defineCheck({
    id: `pagination.next-carries-filter.${ep.slug}`,
    surfaces: {
      release: ep.release,
      resource: ep.resource,
      channel: `search by patient and ${filters.map((f) => f.param).join(', then by patient and ')}`,
      page: `every page to the last (at most ${FILTER_PAGES}), a page size a third of the matches`,
      leftOut: [
        "date with the prefix the target's order would not show a loss of (ge in a forward order, le in a backward one), and eq, ne, gt, lt; a record within a day of the bound (a time zone the target compares days in is its own) counts as neither",
      ],
    },
    title: `${ep.resource} search (${ep.release}): every page a next link leads to keeps the search's filters (${filters.map((f) => f.param).join(', ')}), not only patient and _count`,
    area,
    level: 'MUST',
    requirements: [REQUIREMENT],
    // The patient's records at 100 a page, then each filter's pages (four or five at a third of its matches: a date's near-bound records add some).
    requests: 1 + 5 * filters.length + (ep.resource === 'MedicationRequest' ? 1 : 0),
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
        const common = filter.choose(all.entries);
        if (!common) {
          notJudged.push(`${filter.param} (no value held by two or more, and not all, of the patient's ${all.entries.length} records)`);
          continue;
        }
        const size = Math.max(1, Math.floor(common.matches / 3));
        // A record the value leaves open (a date near the bound) holds either way.
        const holds = (e: Entry) => common.match(e.resource) !== false && refersToPatient(e.resource, patient);
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
              .map((e) => `${e.key}: ${filter.param} ${common.describe(e.resource)}`)
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
