/**
 * Run-wide rules that need more than one exchange, or the target's operation model, to judge one:
 * beside the stateless invariants (invariants.ts) and the FHIR-body rule (fhir-bodies.ts), and
 * subscribed with them by `judgeExchanges`.
 *
 * - Correlation ids: "Every authenticated request writes an audit record with: ... correlation id
 *   ... The correlation id is returned in the `X-Correlation-Id` response header." Each
 *   authenticated request has its own record, so no two of the run's authenticated exchanges may
 *   be answered with the same id (a target that reuses one per token, per connection, or on its
 *   rate limiter's or write path's answers ties several requests to one audit record). The
 *   token endpoint's answers too ("X-Correlation-Id | Request correlation id", on every response; a
 *   POST's answer is never a cached copy). Unauthenticated GETs (discovery) are left out: a cache in
 *   front may serve a discovery document again as it was.
 * - Versions: "Each resource carries `meta.versionId`." Every resource of a type the target
 *   publishes operations for, in a successful FHIR answer: a read's, a create's or an update's
 *   body, and every searchset entry's resource.
 */
import type { Exchange, Finding } from '../engine/types.js';
import { RUN_TAG_SYSTEM } from './bodies.js';
import { isObject } from './errors.js';

export const CORRELATION_ID_DISTINCT_REQUIREMENT = 'headers.correlation-id';
export const META_VERSION_ID_REQUIREMENT = 'versioning.meta-version-id';

/** The rule of distinct correlation ids over one run: a judge that remembers each id it saw. */
export function correlationIdRepeats(): (ex: Exchange, authenticated: boolean) => Finding[] {
  const seen = new Map<string, string>();
  return (ex, authenticated) => {
    const id = ex.response?.headers['x-correlation-id']?.trim();
    if ((!authenticated && ex.request.method === 'GET') || !id) return [];
    const first = seen.get(id);
    if (first === undefined) {
      seen.set(id, ex.id);
      return [];
    }
    if (first === ex.id) return [];
    return [
      {
        message: `${ex.request.method} ${pathOf(ex.request.url)} (${ex.response!.status}) was answered with the correlation id "${id}" of exchange ${first}: one audit record per request needs one id per request`,
        requirement: CORRELATION_ID_DISTINCT_REQUIREMENT,
        expected: 'a correlation id no other request of the run got',
        actual: { correlationId: id, firstExchange: first },
        exchange: ex.id,
      },
    ];
  };
}

/** The resources of `types` a successful FHIR answer's body holds without a non-empty `meta.versionId`, with where each is. */
export function resourcesWithoutVersion(body: unknown, types: ReadonlySet<string>): Array<{ where: string; resourceType: string; id?: string }> {
  const out: Array<{ where: string; resourceType: string; id?: string }> = [];
  for (const { where, r } of resourcesIn(body)) {
    if (typeof r.resourceType !== 'string' || !types.has(r.resourceType)) continue;
    const version = isObject(r.meta) ? r.meta.versionId : undefined;
    if (typeof version === 'string' && version.trim() !== '') continue;
    out.push({ where, resourceType: r.resourceType, ...(typeof r.id === 'string' ? { id: r.id } : {}) });
  }
  return out;
}

/** The resources a body holds, with where each is: a searchset's entries' resources, else the body itself. */
function resourcesIn(body: unknown): Array<{ where: string; r: Record<string, unknown> }> {
  if (!isObject(body)) return [];
  if (body.resourceType !== 'Bundle') return [{ where: 'the body', r: body }];
  const entries = Array.isArray(body.entry) ? body.entry : [];
  return entries.flatMap((e, i) => (isObject(e) && isObject(e.resource) ? [{ where: `entry[${i}].resource`, r: e.resource }] : []));
}

/** The rule of versions on one exchange (`json`: its whole parsed body; `path`: relative to the base URL). */
export function versionlessResources(ex: Exchange, path: string, json: unknown, types: ReadonlySet<string>): Finding[] {
  const status = ex.response?.status ?? 0;
  if (status < 200 || status >= 300 || !/^\/fhir\/R[45]\//.test(path)) return [];
  const missing = resourcesWithoutVersion(json, types);
  if (missing.length === 0) return [];
  const first = missing[0]!;
  return [
    {
      message: `${ex.request.method} ${path.split('?')[0]} (${status}): ${missing.length === 1 ? '' : `${missing.length} resources, the first `}${first.where} (${first.resourceType}${first.id ? `/${first.id}` : ''}) carries no meta.versionId`,
      requirement: META_VERSION_ID_REQUIREMENT,
      expected: 'meta.versionId on every resource',
      actual: missing.slice(0, 5),
      exchange: ex.id,
    },
  ];
}

export const ENCOUNTER_STATUS_REQUIREMENT = 'encounter.status-values';
export const ENCOUNTER_CLASS_REQUIREMENT = 'encounter.class-coding';
const ENCOUNTER_STATUSES = ['planned', 'in-progress', 'finished', 'cancelled'];
/** A record some fhir-conformance run wrote (its class and status are what that run sent). */
function writtenByASuiteRun(resource: Record<string, unknown>): boolean {
  const tags = isObject(resource.meta) && Array.isArray(resource.meta.tag) ? resource.meta.tag : [];
  return tags.some((t) => isObject(t) && t.system === RUN_TAG_SYSTEM);
}

/**
 * The Encounter shape on every R4 Encounter a successful answer holds (a read's, a search entry's) that no
 * run of the suite wrote: "status | ... | `planned`, `in-progress`, `finished`, `cancelled`" and "class |
 * ... | Coding with `system`, `code`, `display`". encounter.status-values and encounter.class-coding read
 * the fixtures only; the records of every search page are judged here.
 */
export function encounterShapeFindings(ex: Exchange, path: string, json: unknown): Finding[] {
  const status = ex.response?.status ?? 0;
  if (status < 200 || status >= 300 || !path.startsWith('/fhir/R4/')) return [];
  const badStatus: string[] = [];
  const badClass: string[] = [];
  for (const { where, r } of resourcesIn(json)) {
    if (r.resourceType !== 'Encounter' || writtenByASuiteRun(r)) continue;
    const label = `${where} (Encounter/${String(r.id)})`;
    if (!ENCOUNTER_STATUSES.includes(r.status as string)) badStatus.push(`${label}: status ${JSON.stringify(r.status)}`);
    const c = isObject(r.class) ? r.class : {};
    const missing = ['system', 'code', 'display'].filter((k) => typeof c[k] !== 'string' || c[k] === '');
    if (missing.length) badClass.push(`${label}: class lacks ${missing.join(', ')}`);
  }
  const what = `${ex.request.method} ${path.split('?')[0]} (${status})`;
  const out: Finding[] = [];
  if (badStatus.length)
    out.push({
      message: `${what}: ${badStatus.length} Encounter(s) with a status outside ${ENCOUNTER_STATUSES.join(', ')}, the first ${badStatus[0]}`,
      requirement: ENCOUNTER_STATUS_REQUIREMENT,
      expected: ENCOUNTER_STATUSES,
      actual: badStatus.slice(0, 5),
      exchange: ex.id,
    });
  if (badClass.length)
    out.push({
      message: `${what}: ${badClass.length} Encounter(s) whose class is no Coding with system, code and display, the first ${badClass[0]}`,
      requirement: ENCOUNTER_CLASS_REQUIREMENT,
      expected: 'class: a Coding with system, code, display',
      actual: badClass.slice(0, 5),
      exchange: ex.id,
    });
  return out;
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}
