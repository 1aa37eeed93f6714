/**
 * Search helpers shared by the Encounter, DocumentReference and tenancy suites:
 * collecting every page of a search, and checking a filtered search against the
 * data (each result satisfies the filter; every matching record of the base set
 * is present).
 */
import type { CheckContext } from '../engine/context.js';
import { bundleLink, bundleResources, expectSearchset, isObject } from './expect.js';
import type { HttpResponse } from '../http/types.js';
import type { Json } from './bodies.js';

export type { Json } from './bodies.js';

/** Pages followed at most; with `_count=100` that is 500 records. */
const MAX_PAGES = 5;

export interface Collected {
  resources: Json[];
  /** False when the page cap was reached with a `next` link left. */
  complete: boolean;
  first: HttpResponse;
}

/** A search URL: the operation's path with the parameters (and `_count=100` unless given). */
export function searchUrl(path: string, params: Array<[string, string]>): string {
  const query = new URLSearchParams(params);
  if (!query.has('_count')) query.set('_count', '100');
  return `${path}?${query.toString()}`;
}

/** Follows `next` links (at most MAX_PAGES pages); every page must be a searchset Bundle. */
export async function collect(ctx: CheckContext, opts: { url: string; scopes: string[]; role?: string; requirement?: string }): Promise<Collected> {
  let res = await ctx.fhir({ scopes: opts.scopes, role: opts.role, url: opts.url, share: true });
  const first = res;
  const resources: Json[] = [];
  for (let page = 1; ; page++) {
    const bundle = expectSearchset(res, opts.requirement);
    resources.push(...bundleResources(bundle));
    const next = bundleLink(bundle, 'next');
    if (next === undefined) return { resources, complete: true, first };
    if (page >= MAX_PAGES) return { resources, complete: false, first };
    res = await ctx.fhir({ scopes: opts.scopes, role: opts.role, url: next, share: true });
  }
}

export function idOf(resource: Json): string {
  return typeof resource.id === 'string' ? resource.id : '';
}

/**
 * Checks a filtered search against the data: every result satisfies `matches`
 * (soundness), and every record of the complete base set that surely matches is
 * present (completeness). `surely` defaults to `matches`.
 */
export function checkFiltered(
  ctx: CheckContext,
  opts: {
    what: string;
    requirement: string;
    results: Collected;
    base: Collected;
    matches: (r: Json) => boolean;
    surely?: (r: Json) => boolean;
    describe: (r: Json) => unknown;
  },
): void {
  const { results, base, requirement } = opts;
  const exchange = results.first.exchange.id;
  const wrong = results.resources.filter((r) => !opts.matches(r));
  ctx.check(wrong.length === 0, `${opts.what}: ${wrong.length} of ${results.resources.length} results do not satisfy the filter`, {
    requirement,
    expected: 'every result satisfies the filter',
    actual: wrong.slice(0, 5).map((r) => ({ id: idOf(r), value: opts.describe(r) })),
    exchange,
  });
  if (!base.complete || !results.complete) {
    ctx.observe(`${opts.what}.completeness`, 'not checked', 'the base set or the results exceed the page cap');
    return;
  }
  const returned = new Set(results.resources.map(idOf));
  const surely = opts.surely ?? opts.matches;
  const missing = base.resources.filter((r) => surely(r) && !returned.has(idOf(r)));
  ctx.check(missing.length === 0, `${opts.what}: ${missing.length} matching records of the unfiltered search are missing`, {
    requirement,
    expected: 'every matching record is returned',
    actual: missing.slice(0, 5).map((r) => ({ id: idOf(r), value: opts.describe(r) })),
    exchange,
  });
}

/** The calendar days an instant can be read as: its written day and its UTC day. */
export function daysOf(instant: unknown): string[] {
  if (typeof instant !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(instant)) return [];
  const written = instant.slice(0, 10);
  const t = Date.parse(instant);
  const utc = Number.isNaN(t) ? written : new Date(t).toISOString().slice(0, 10);
  return [...new Set([written, utc])];
}

export const DATE_PREFIXES = ['eq', 'ne', 'gt', 'ge', 'lt', 'le'] as const;
export type DatePrefix = (typeof DATE_PREFIXES)[number];

export function dayCompares(day: string, prefix: DatePrefix, target: string): boolean {
  switch (prefix) {
    case 'eq':
      return day === target;
    case 'ne':
      return day !== target;
    case 'gt':
      return day > target;
    case 'ge':
      return day >= target;
    case 'lt':
      return day < target;
    case 'le':
      return day <= target;
  }
}

/** A date filter accepts a record when some reading of its day satisfies it; it surely must when every reading does. */
export function dateFilter(prefix: DatePrefix, target: string, instantOf: (r: Json) => unknown) {
  return {
    matches: (r: Json) => daysOf(instantOf(r)).some((d) => dayCompares(d, prefix, target)),
    surely: (r: Json) => {
      const days = daysOf(instantOf(r));
      return days.length > 0 && days.every((d) => dayCompares(d, prefix, target));
    },
  };
}

/** Codings of a CodeableConcept (or of a list of them). */
export function codingsOf(concept: unknown): Array<{ system?: unknown; code?: unknown }> {
  const concepts = Array.isArray(concept) ? concept : [concept];
  return concepts.flatMap((c) => (isObject(c) && Array.isArray(c.coding) ? c.coding.filter(isObject) : []));
}

/** The code of the first coding of a CodeableConcept (or of a list of them), or of a Coding itself. */
export function firstCodeOf(value: unknown): string | undefined {
  const code = isObject(value) && !Array.isArray(value.coding) ? value.code : codingsOf(value)[0]?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A token `system|code` (or `code`) as a search value, from a coding. */
export function tokenOf(coding: { system?: unknown; code?: unknown }): string {
  return typeof coding.system === 'string' ? `${coding.system}|${String(coding.code)}` : String(coding.code);
}

export function codingMatchesToken(coding: { system?: unknown; code?: unknown }, token: string): boolean {
  const bar = token.indexOf('|');
  if (bar < 0) return coding.code === token;
  return coding.code === token.slice(bar + 1) && (bar === 0 || coding.system === token.slice(0, bar));
}

/** The UUID of a `<Type>/<uuid>` reference (or undefined). */
export function referencedId(ref: unknown, type: string): string | undefined {
  if (!isObject(ref) || typeof ref.reference !== 'string') return undefined;
  const m = new RegExp(`(?:^|/)${type}/([^/]+)$`).exec(ref.reference);
  return m?.[1];
}
