/** Helpers shared by the Encounter checks: scopes, reads, searches and write bodies. */
import type { CheckContext } from '../../src/engine/context.js';
import { expectStatus, isObject } from '../../src/engine/expect.js';
import type { HttpResponse } from '../../src/http/types.js';
import { createdIdOf, expectSuccess, isSuccess, refusalProbe } from '../medication-request/support.js';
import { collect, searchUrl, type Collected, type Json } from './search.js';

export const area = 'encounter';
export const RS = ['system/Encounter.rs'];
export const CRU = ['system/Encounter.cru'];
export const STATUSES = ['planned', 'in-progress', 'finished', 'cancelled'];
export const LOINC = 'http://loinc.org';
export const DIAGNOSTIC_IMPRESSION_CODE = '51848-0';
/** ISO 8601 date-time (Conventions: "Timestamps are ISO 8601 date-time strings"). */
export const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** The tag every resource this run creates carries. */
export function runTag(ctx: CheckContext): { system: string; code: string } {
  return { system: 'https://fhir-conformance.dev/run', code: ctx.runId };
}

/** GET the Encounter; must answer 200 with a JSON object. */
export async function readEncounter(ctx: CheckContext, id: string, requirement = 'encounter.read-returns-200'): Promise<{ res: HttpResponse; encounter: Json }> {
  const op = ctx.operation('Encounter', 'read', 'R4');
  const res = await ctx.fhir({ scopes: RS, url: ctx.path(op.path, { id }), share: true });
  expectStatus(res, 200, requirement);
  if (!isObject(res.json)) ctx.fail('the read response body is not a JSON object', { requirement, actual: res.text.slice(0, 120), exchange: res.exchange.id });
  return { res, encounter: res.json };
}

/** Every page of an Encounter search with these parameters. */
export async function searchEncounters(ctx: CheckContext, params: Array<[string, string]>, requirement = 'encounter.search-returns-bundle'): Promise<Collected> {
  const op = ctx.operation('Encounter', 'search-type', 'R4');
  return collect(ctx, { url: searchUrl(op.path, params), scopes: RS, requirement });
}

/** A valid Encounter for the fixture patient, starting now; `overrides` replace top-level fields. */
export function encounterBody(ctx: CheckContext, overrides: Json = {}): Json {
  return {
    resourceType: 'Encounter',
    meta: { tag: [runTag(ctx)] },
    status: 'planned',
    class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB', display: 'ambulatory' },
    subject: { reference: `Patient/${ctx.fixture('patient')}` },
    participant: [{ individual: { reference: `Practitioner/${ctx.fixture('practitioner')}` } }],
    period: { start: new Date().toISOString() },
    ...overrides,
  };
}

/** POST an Encounter; a created one (2xx with an id in the body or Location) goes into the ledger. */
export async function postEncounter(ctx: CheckContext, body: Json, opts: { refusal?: boolean } = {}): Promise<HttpResponse> {
  const op = ctx.operation('Encounter', 'create', 'R4');
  const req = { scopes: CRU, method: 'POST' as const, url: op.path, body };
  // A create that must be refused: a server error is judged, not retried into no verdict (see refusalProbe).
  const res = opts.refusal ? await refusalProbe(ctx, req) : await ctx.fhir(req);
  const id = isSuccess(res) ? createdIdOf(res, 'Encounter') : undefined;
  if (id) ctx.created('Encounter', id);
  return res;
}

/**
 * Creates an Encounter the check can update; fails when the create does not
 * succeed (any 2xx: success statuses are not shown). The Encounter is the
 * response body when it is one, else the read of the id `Location` names
 * (whether the body must be the Encounter is judged by encounter.create-returns-encounter).
 */
export async function createEncounter(ctx: CheckContext, overrides: Json = {}): Promise<Json> {
  const res = await postEncounter(ctx, encounterBody(ctx, overrides));
  expectSuccess(ctx, res, 'encounter.create-returns-resource', 'create');
  const id = createdIdOf(res, 'Encounter');
  if (id === undefined) {
    ctx.fail('the create answered neither the Encounter with its id nor a Location naming it', {
      requirement: 'encounter.create-returns-resource', actual: { status: res.status, body: res.text.slice(0, 200), location: res.headers.location ?? null }, exchange: res.exchange.id,
    });
  }
  if (isObject(res.json) && res.json.resourceType === 'Encounter') return res.json;
  return (await readEncounter(ctx, id, 'encounter.create-returns-resource')).encounter;
}

export async function putEncounter(ctx: CheckContext, id: string, body: Json, opts: { refusal?: boolean } = {}): Promise<HttpResponse> {
  const op = ctx.operation('Encounter', 'update', 'R4');
  const req = { scopes: CRU, method: 'PUT' as const, url: ctx.path(op.path, { id }), body };
  // An update that must be refused: a server error is judged, not retried into no verdict (see refusalProbe).
  return opts.refusal ? refusalProbe(ctx, req) : ctx.fhir(req);
}

/** The body to PUT back: the resource as read, without server-managed meta. */
export function writable(resource: Json): Json {
  const { meta: _meta, ...rest } = resource;
  return structuredClone(rest);
}

/** Contained resources and diagnosis items of an Encounter. */
export function containedOf(e: Json): Json[] {
  return Array.isArray(e.contained) ? e.contained.filter(isObject) : [];
}

export function diagnosesOf(e: Json): Json[] {
  return Array.isArray(e.diagnosis) ? e.diagnosis.filter(isObject) : [];
}

/** A contained id without the `#` some servers write (both spellings are accepted). */
export function localId(id: unknown): string {
  return typeof id === 'string' ? id.replace(/^#/, '') : '';
}
