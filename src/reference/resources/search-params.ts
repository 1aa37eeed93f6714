/**
 * Parsing of search parameters shared by the searches: UUID references, tokens
 * and `date` with the prefixes eq ne gt ge lt le. A malformed value is 400 HPB-00101.
 */
import type { CodeableConcept } from 'fhir/r4.js';
import { invalid } from './errors.js';
import { isUuid } from './validate.js';

/** A UUID parameter (`<uuid>` or `<Type>/<uuid>`), lower-cased; undefined when absent. */
export function uuidParam(query: URLSearchParams, name: string, type: string): string | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  const value = raw.startsWith(`${type}/`) ? raw.slice(type.length + 1) : raw;
  if (!isUuid(value)) throw invalid(`${name} must be the UUID of a ${type} (got ${JSON.stringify(raw)})`);
  return value.toLowerCase();
}

/** A token parameter: comma-separated alternatives, each `code` or `system|code`. */
export interface TokenFilter {
  system?: string;
  code: string;
}

export function tokenParam(query: URLSearchParams, name: string): TokenFilter[] | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  const alternatives = raw.split(',').map((alt) => {
    const bar = alt.indexOf('|');
    return bar < 0 ? { code: alt } : { system: alt.slice(0, bar) || undefined, code: alt.slice(bar + 1) };
  });
  if (alternatives.some((alt) => alt.code === '')) throw invalid(`${name} must be a token (code or system|code)`);
  return alternatives;
}

export function codingMatches(coding: { system?: string; code?: string }, filters: TokenFilter[]): boolean {
  return filters.some((f) => f.code === coding.code && (f.system === undefined || f.system === coding.system));
}

export function conceptsMatch(concepts: CodeableConcept[] | undefined, filters: TokenFilter[]): boolean {
  return (concepts ?? []).some((c) => (c.coding ?? []).some((coding) => codingMatches(coding, filters)));
}

const DATE_PREFIXES = ['eq', 'ne', 'gt', 'ge', 'lt', 'le'] as const;
type DatePrefix = (typeof DATE_PREFIXES)[number];
export interface DateFilter {
  prefix: DatePrefix;
  day: string;
}

/** Every `date` value (repeated values combine with AND); `[prefix]YYYY-MM-DD`. */
export function dateParams(query: URLSearchParams, name = 'date'): DateFilter[] {
  return query.getAll(name).map((raw) => {
    const match = /^(eq|ne|gt|ge|lt|le)?(\d{4}-\d{2}-\d{2})$/.exec(raw);
    if (!match || !isCalendarDay(match[2]!)) {
      throw invalid(`${name} must be [prefix]YYYY-MM-DD with a prefix among ${DATE_PREFIXES.join(', ')} (got ${JSON.stringify(raw)})`);
    }
    return { prefix: (match[1] ?? 'eq') as DatePrefix, day: match[2]! };
  });
}

function isCalendarDay(day: string): boolean {
  const date = new Date(`${day}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === day;
}

/** Whether an instant's UTC day satisfies every filter. A missing instant matches no filter. */
export function dateMatches(instant: string | undefined, filters: DateFilter[]): boolean {
  if (filters.length === 0) return true;
  if (instant === undefined) return false;
  const day = new Date(instant).toISOString().slice(0, 10);
  return filters.every(({ prefix, day: d }) => {
    switch (prefix) {
      case 'eq':
        return day === d;
      case 'ne':
        return day !== d;
      case 'gt':
        return day > d;
      case 'ge':
        return day >= d;
      case 'lt':
        return day < d;
      case 'le':
        return day <= d;
      default:
        return false;
    }
  });
}
