/**
 * The typed resource client of the service: read, search, create and update of
 * MedicationRequest (R4), Encounter (R4) and DocumentReference (R5) through the
 * operations the target publishes, with the scopes the endpoint tables require.
 * Every suite that touches a resource uses these; the write bodies are bodies.ts.
 * A created resource goes into the run's ledger whatever the check concludes.
 */
import { randomUUID } from 'node:crypto';
import type { CheckContext } from '../engine/context.js';
import type { Release } from '../fhir/index.js';
import type { HttpResponse, RequestOptions } from '../http/types.js';
import { documentBody, encounterBody, newMedicationRequest, type Json } from './bodies.js';
import { writeBody } from './derived-body.js';
import { catalogCodeOf } from './errors.js';
import { bundleLink, bundleResources, expectSearchset, expectStatus, isObject } from './expect.js';
import { SCOPES } from './scopes.js';
import { collect, searchUrl, type Collected } from './search.js';
import { tokenFor } from './tokens.js';

export type { Json } from './bodies.js';
/** A resource as JSON (MedicationRequest suites' name for it). */
export type Resource = Json;

/** A resource type of the service: its FHIR release and the scopes its reads and writes use. */
export interface ResourceKind {
  type: 'MedicationRequest' | 'Encounter' | 'DocumentReference';
  release: 'R4' | 'R5';
  read: string[];
  write: string[];
}

export const MEDICATION_REQUEST: ResourceKind = {
  type: 'MedicationRequest',
  release: 'R4',
  read: [...SCOPES.MedicationRequest.read],
  // Read and search need `.rs`; update `.cru`; MedicationRequest create `.c` (spec: Using a token).
  write: [...SCOPES.MedicationRequest.read, ...SCOPES.MedicationRequest.update, ...SCOPES.MedicationRequest.create],
};
export const ENCOUNTER: ResourceKind = { type: 'Encounter', release: 'R4', read: [...SCOPES.Encounter.read], write: [...SCOPES.Encounter.update] };
export const DOCUMENT_REFERENCE: ResourceKind = {
  type: 'DocumentReference',
  release: 'R5',
  read: [...SCOPES.DocumentReference.read],
  write: [...SCOPES.DocumentReference.update],
};

/** Read and search scopes of MedicationRequest; its write scopes (`.rs`, `.cru`, `.c`). */
export const READ_SCOPES = MEDICATION_REQUEST.read;
export const WRITE_SCOPES = MEDICATION_REQUEST.write;

/** Per-request options of a write: retry rule, time budget, response body cap, headers; `refusal` for a write that must be refused (see refusalProbe). */
export interface WriteOptions {
  retry?: 'none' | 'spec';
  timeoutMs?: number;
  /** A response may echo a large document back: read up to this many bytes. */
  maxBodyBytes?: number;
  headers?: Record<string, string>;
  refusal?: boolean;
}

// ---- answers --------------------------------------------------------------

/** A 2xx answer (create and update success statuses are not shown: any 2xx is success). */
export function isSuccess(res: HttpResponse): boolean {
  return res.status >= 200 && res.status < 300;
}

/** The write succeeded: any 2xx (Gaps: "Success status codes of create and update: not shown"). */
export function expectSuccess(ctx: CheckContext, res: HttpResponse, requirement: string, what: string): void {
  if (isSuccess(res)) return;
  const issue = isObject(res.json) && Array.isArray(res.json.issue) && isObject(res.json.issue[0]) ? res.json.issue[0].diagnostics : undefined;
  ctx.fail(`${what}: expected a 2xx success, got ${res.status}${typeof issue === 'string' ? ` (${issue.slice(0, 120)})` : ''}`, {
    requirement,
    expected: '2xx',
    actual: res.status,
    exchange: res.exchange.id,
  });
}

/**
 * The id of what a create made: the body's id when the body is the resource,
 * else the id in `Location` (`.../<type>/<id>` or `.../<type>/<id>/_history/<v>`).
 * Without a type: the body's id whatever it is, else the last segment of `Location`.
 */
export function createdIdOf(res: HttpResponse, resourceType?: string): string | undefined {
  const body = res.json;
  if (resourceType === undefined) {
    if (isObject(body) && typeof body.id === 'string') return body.id;
    const location = res.headers.location;
    return location ? /\/([^/]+?)(?:\/_history\/[^/]+)?$/.exec(location.split('?')[0]!)?.[1] : undefined;
  }
  if (isObject(body) && body.resourceType === resourceType && typeof body.id === 'string') return body.id;
  const m = new RegExp(`/${resourceType}/([^/?#]+)`).exec(res.headers.location ?? '');
  return m ? decodeURIComponent(m[1]!) : undefined;
}

/** The response body as a resource of `resourceType`, validated against the HL7 schema of `release`. */
export function expectResource(ctx: CheckContext, res: HttpResponse, resourceType: string, requirement: string, release: Release = 'R4'): Resource {
  const body = res.json;
  if (!isObject(body) || body.resourceType !== resourceType) {
    ctx.fail(`response body is not a ${resourceType}`, {
      requirement,
      expected: resourceType,
      actual: isObject(body) ? body.resourceType : res.text.slice(0, 120),
      exchange: res.exchange.id,
    });
  }
  checkValid(ctx, res, body, requirement, release);
  return body;
}

/** Soft check: the resource is valid against the HL7 JSON schema of its release. */
export function checkValid(ctx: CheckContext, res: HttpResponse, resource: unknown, requirement: string, release: Release = 'R4'): void {
  const issues = ctx.validate(release, resource);
  ctx.check(
    issues.length === 0,
    `response is not valid FHIR ${release}: ${issues
      .slice(0, 3)
      .map((i) => `${i.path || '(root)'}: ${i.message}`)
      .join('; ')}`,
    {
      requirement,
      expected: `valid against the HL7 ${release} schema`,
      actual: issues.slice(0, 5),
      exchange: res.exchange.id,
    },
  );
}

/** Status and catalog code of a response, for observations. */
export function outcomeSummary(res: HttpResponse, code: string | undefined): { status: number; code?: string } {
  return code === undefined ? { status: res.status } : { status: res.status, code };
}

/**
 * A request whose answer must be a 4xx refusal (an unknown id, a date outside
 * the registration window): sent without the 5xx retries, so a server that
 * answers the case with a server error is judged on it rather than left
 * without a verdict. A 5xx is sent once more after a second, and the second
 * answer is the one judged (a passing outage does not make a failure); a 5xx
 * is a fail only while the target answers normally elsewhere, an error when it
 * is down (src/engine/outcome.ts).
 */
export async function refusalProbe(ctx: CheckContext, opts: RequestOptions & { scopes: string[]; role?: string }): Promise<HttpResponse> {
  const first = await ctx.fhir({ ...opts, retry: 'none' });
  if (first.status < 500) return first;
  await ctx.sleep(1000);
  return ctx.fhir({ ...opts, retry: 'none' });
}

export function randomId(): string {
  return randomUUID();
}

// ---- any resource type ----------------------------------------------------

/** The URL of one resource, from the target's published read operation. */
export function readUrl(ctx: CheckContext, kind: ResourceKind, id: string): string {
  return ctx.path(ctx.operation(kind.type, 'read', kind.release).path, { id });
}

/** GET one resource with the read scopes; must answer 200 with a JSON object. */
export async function readObject(ctx: CheckContext, kind: ResourceKind, id: string, requirement: string): Promise<{ res: HttpResponse; resource: Json }> {
  const res = await ctx.fhir({ scopes: kind.read, url: readUrl(ctx, kind, id), share: true });
  expectStatus(res, 200, requirement);
  if (!isObject(res.json)) ctx.fail('the read response body is not a JSON object', { requirement, actual: res.text.slice(0, 120), exchange: res.exchange.id });
  return { res, resource: res.json };
}

/** POST a body to the published create; a created one (2xx with an id in the body or Location) goes into the ledger. */
export async function postResource(ctx: CheckContext, kind: ResourceKind, body: unknown, opts: WriteOptions = {}): Promise<HttpResponse> {
  const { refusal, ...rest } = opts;
  const op = ctx.operation(kind.type, 'create', kind.release);
  const req = { scopes: kind.write, method: 'POST' as const, url: ctx.path(op.path), body, ...rest };
  // A create that must be refused: a server error is judged, not retried into no verdict (see refusalProbe).
  const res = refusal ? await refusalProbe(ctx, req) : await ctx.fhir(req);
  const id = isSuccess(res) ? createdIdOf(res, kind.type) : undefined;
  if (id) ctx.created(kind.type, id);
  return res;
}

/** PUT a body to the published update of `id`. */
export async function putResource(ctx: CheckContext, kind: ResourceKind, id: string, body: unknown, opts: WriteOptions = {}): Promise<HttpResponse> {
  const { refusal, ...rest } = opts;
  const op = ctx.operation(kind.type, 'update', kind.release);
  const req = { scopes: kind.write, method: 'PUT' as const, url: ctx.path(op.path, { id }), body, ...rest };
  // An update that must be refused: a server error is judged, not retried into no verdict (see refusalProbe).
  return refusal ? refusalProbe(ctx, req) : ctx.fhir(req);
}

/** Every page of a search of the published search-type with these parameters (`_count=100` unless given). */
export async function searchResources(ctx: CheckContext, kind: ResourceKind, params: Array<[string, string]>, requirement: string): Promise<Collected> {
  const op = ctx.operation(kind.type, 'search-type', kind.release);
  return collect(ctx, { url: searchUrl(op.path, params), scopes: kind.read, requirement });
}

/** The id a create answered; fails when it names none (neither the resource with its id nor a Location naming it). */
export function expectCreatedId(ctx: CheckContext, res: HttpResponse, type: string, requirement: string, bodyChars = 120): string {
  const id = createdIdOf(res, type);
  if (id === undefined) {
    ctx.fail(`the create answered neither the ${type} with its id nor a Location naming it`, {
      requirement,
      expected: `a ${type} body with an id, or Location: .../${type}/<id>`,
      actual: { status: res.status, body: res.text.slice(0, bodyChars), location: res.headers.location ?? null },
      exchange: res.exchange.id,
    });
  }
  return id;
}

// ---- MedicationRequest (R4) -----------------------------------------------

export async function readMedicationRequest(
  ctx: CheckContext,
  id: string,
  requirement = 'medication-request.read-returns-resource',
): Promise<{ res: HttpResponse; resource: Resource }> {
  const res = await ctx.fhir({ scopes: READ_SCOPES, url: readUrl(ctx, MEDICATION_REQUEST, id), share: true });
  expectStatus(res, 200, requirement);
  return { res, resource: expectResource(ctx, res, 'MedicationRequest', requirement) };
}

/** POST a MedicationRequest; a created one (2xx with an id in the body or Location) is added to the run's ledger. */
export function postMedicationRequest(ctx: CheckContext, body: Resource, opts: { refusal?: boolean } = {}): Promise<HttpResponse> {
  return postResource(ctx, MEDICATION_REQUEST, body, opts);
}

/**
 * Create one of our own MedicationRequests (the create must succeed: any 2xx).
 * `resource` is the response body when it is the MedicationRequest, else the
 * read of the id `Location` names (whether the body must be the resource is
 * judged by the checks naming medication-request.create-returns-resource).
 */
export async function createOwn(
  ctx: CheckContext,
  overrides: Resource = {},
  requirement = 'medication-request.create-returns-resource',
): Promise<{ res: HttpResponse; resource: Resource; id: string }> {
  const res = await postMedicationRequest(ctx, newMedicationRequest(ctx, overrides));
  expectSuccess(ctx, res, requirement, 'create');
  const id = expectCreatedId(ctx, res, 'MedicationRequest', requirement);
  const body = res.json;
  if (isObject(body) && body.resourceType === 'MedicationRequest') return { res, resource: expectResource(ctx, res, 'MedicationRequest', requirement), id };
  return { res, resource: (await readMedicationRequest(ctx, id)).resource, id };
}

export function putMedicationRequest(
  ctx: CheckContext,
  id: string,
  body: Resource,
  headers: Record<string, string> = {},
  opts: { refusal?: boolean } = {},
): Promise<HttpResponse> {
  return putResource(ctx, MEDICATION_REQUEST, id, body, { headers, ...opts });
}

/**
 * Search MedicationRequest and follow `next` links, at most `maxPages` pages;
 * every page must be a valid searchset Bundle. `complete` is false when a `next`
 * link was left unfollowed.
 */
export async function searchMedicationRequests(
  ctx: CheckContext,
  params: Record<string, string>,
  maxPages: number,
  requirement = 'medication-request.search-returns-bundle',
): Promise<{ resources: Resource[]; pages: HttpResponse[]; complete: boolean }> {
  const op = ctx.operation('MedicationRequest', 'search-type', 'R4');
  let url: string | undefined = `${ctx.path(op.path)}?${new URLSearchParams(params).toString()}`;
  const resources: Resource[] = [];
  const pages: HttpResponse[] = [];
  while (url !== undefined && pages.length < maxPages) {
    const res = await ctx.fhir({ scopes: READ_SCOPES, url, share: true });
    const bundle = expectSearchset(res, requirement);
    checkValid(ctx, res, bundle, requirement);
    pages.push(res);
    resources.push(...bundleResources(bundle));
    url = bundleLink(bundle, 'next');
  }
  return { resources, pages, complete: url === undefined };
}

// ---- Encounter (R4) -------------------------------------------------------

/** GET the Encounter; must answer 200 with a JSON object. */
export async function readEncounter(
  ctx: CheckContext,
  id: string,
  requirement = 'encounter.read-returns-200',
): Promise<{ res: HttpResponse; encounter: Json }> {
  const { res, resource } = await readObject(ctx, ENCOUNTER, id, requirement);
  return { res, encounter: resource };
}

/** Every page of an Encounter search with these parameters. */
export function searchEncounters(ctx: CheckContext, params: Array<[string, string]>, requirement = 'encounter.search-returns-bundle'): Promise<Collected> {
  return searchResources(ctx, ENCOUNTER, params, requirement);
}

/** POST an Encounter; a created one (2xx with an id in the body or Location) goes into the ledger. */
export function postEncounter(ctx: CheckContext, body: Json, opts: { refusal?: boolean } = {}): Promise<HttpResponse> {
  return postResource(ctx, ENCOUNTER, body, opts);
}

/**
 * Creates an Encounter the check can update; fails when the create does not
 * succeed (any 2xx: success statuses are not shown). The Encounter is the
 * response body when it is one, else the read of the id `Location` names
 * (whether the body must be the Encounter is judged by encounter.create-returns-encounter).
 */
export async function createEncounter(ctx: CheckContext, overrides: Json = {}): Promise<Json> {
  const requirement = 'encounter.create-returns-resource';
  const res = await postEncounter(ctx, encounterBody(ctx, overrides));
  expectSuccess(ctx, res, requirement, 'create');
  const id = expectCreatedId(ctx, res, 'Encounter', requirement, 200);
  if (isObject(res.json) && res.json.resourceType === 'Encounter') return res.json;
  return (await readEncounter(ctx, id, requirement)).encounter;
}

export function putEncounter(ctx: CheckContext, id: string, body: Json, opts: { refusal?: boolean } = {}): Promise<HttpResponse> {
  return putResource(ctx, ENCOUNTER, id, body, opts);
}

// ---- DocumentReference (R5) -----------------------------------------------

export async function readDocument(ctx: CheckContext, id: string, requirement = 'document-reference.read'): Promise<{ res: HttpResponse; document: Json }> {
  const { res, resource } = await readObject(ctx, DOCUMENT_REFERENCE, id, requirement);
  return { res, document: resource };
}

export function searchDocuments(ctx: CheckContext, params: Array<[string, string]>, requirement = 'document-reference.search'): Promise<Collected> {
  return searchResources(ctx, DOCUMENT_REFERENCE, params, requirement);
}

/** POSTs a DocumentReference body; a created one goes to the ledger whatever the check concludes. */
export function postDocument(ctx: CheckContext, body: Json, opts: WriteOptions = {}): Promise<HttpResponse> {
  return postResource(ctx, DOCUMENT_REFERENCE, body, opts);
}

/** PUTs a DocumentReference body to its id. */
export function putDocument(ctx: CheckContext, id: string, body: Json, opts: WriteOptions = {}): Promise<HttpResponse> {
  return putResource(ctx, DOCUMENT_REFERENCE, id, { ...body, id }, opts);
}

/**
 * The id of a successful DocumentReference create; fails when the create did not succeed (any 2xx:
 * "Success status codes of create and update: not shown") or names no id (body or Location).
 */
export function expectCreated(ctx: CheckContext, res: HttpResponse): string {
  expectSuccess(ctx, res, 'document-reference.create', 'DocumentReference create');
  const id = createdIdOf(res, 'DocumentReference');
  if (!id)
    ctx.fail('the create response names no id (neither a DocumentReference body nor a Location)', {
      requirement: 'document-reference.create',
      actual: res.text.slice(0, 200),
      exchange: res.exchange.id,
    });
  return id;
}

/**
 * Creates a DocumentReference (into the ledger) and returns it as the server has it: the
 * create response when it is the DocumentReference, else a read of the new id (the
 * create's payload out is not shown). Fails when the create does not succeed.
 */
export async function createDocument(ctx: CheckContext, overrides: Json = {}): Promise<{ res: HttpResponse; document: Json }> {
  const res = await postDocument(ctx, documentBody(ctx, overrides));
  const id = expectCreated(ctx, res);
  if (isObject(res.json) && res.json.resourceType === 'DocumentReference' && res.json.id === id) return { res, document: res.json };
  return { res, document: (await readDocument(ctx, id)).document };
}

// ---- any published create -------------------------------------------------

/** Headers of a FHIR request the suite sends itself (ctx.request). */
export const FHIR_HEADERS = { accept: 'application/fhir+json' };

/** The check that judges a valid create of each resource, and the requirement it fails on. */
const CREATE_OWNERS: Record<string, { check: string; requirement: string }> = {
  MedicationRequest: { check: 'medication-request.create-round-trip', requirement: 'medication-request.create-returns-resource' },
  Encounter: { check: 'encounter.create-round-trip', requirement: 'encounter.create-returns-resource' },
  DocumentReference: { check: 'document-reference.create', requirement: 'document-reference.create' },
};

/**
 * A valid create (`what`) the target did not answer with a 2xx. A server error fails against the
 * create rule (the outcome policy makes it an error when the target is down); a 4xx refusal of a
 * valid create breaks the create rule, which the resource's create check judges: this check skips
 * and points there (one failing check per fault). A resource without such a check fails.
 */
export function refusedCreate(ctx: CheckContext, res: HttpResponse, resource: string, what: string): never {
  const owner = CREATE_OWNERS[resource];
  const code = catalogCodeOf(res);
  const answered = `${what} answered ${res.status}${code ? ` ${code}` : ''}`;
  const details = { expected: '2xx', actual: res.status, exchange: res.exchange.id };
  if (res.status >= 500 || !owner) ctx.fail(answered, owner ? { requirement: owner.requirement, ...details } : details);
  ctx.skip(`${answered}: a refused valid create is judged by ${owner.check}, so this check has nothing to work on (see ${owner.check})`);
}

/** A successful create (`what`) that names no id: the server assigns ids and the client learns them from the create. */
export function noCreatedId(ctx: CheckContext, res: HttpResponse, what: string): never {
  return ctx.fail(`${what} answered ${res.status} without the new resource's id (body id or Location)`, {
    requirement: 'general.id-server-assigned',
    expected: 'an id',
    actual: null,
    exchange: res.exchange.id,
  });
}

/**
 * Creates a valid resource (src/service/derived-body.ts writeBody) through the target's published create. A create refused
 * for its published scope (401/403), a server error, or a created resource without an id is a
 * failure; another refusal (a 4xx) skips, pointing to the resource's create check that judges it
 * (`refusedCreate`).
 */
export async function createResource(ctx: CheckContext, resource: string, release: 'R4' | 'R5'): Promise<string> {
  const create = ctx.findOperation(resource, 'create', release);
  if (!create) ctx.skip(`the target publishes no ${release} ${resource} create to make a resource this check may write to`);
  if (!create.scope) ctx.skip(`the target publishes no scope for ${create.operationId}`);
  const token = await tokenFor(ctx, [create.scope]);
  const res = await ctx.request({
    method: create.method,
    url: create.path,
    token,
    client: 'main',
    body: await writeBody(ctx, {
      release,
      resource,
      ...(create.requestSchema ? { requestSchema: create.requestSchema } : {}),
      ...(create.profile ? { profile: create.profile } : {}),
    }),
    headers: FHIR_HEADERS,
  });
  const what = `a valid ${release} ${resource} create with its published scope ${create.scope}`;
  const exchange = res.exchange.id;
  if (res.status === 401 || res.status === 403) {
    ctx.fail(`${what} was refused with ${res.status}`, {
      requirement: 'discovery.openapi-x-service-scope',
      expected: 'not refused',
      actual: res.status,
      exchange,
    });
  }
  if (res.status < 200 || res.status >= 300) refusedCreate(ctx, res, resource, what);
  const id = createdIdOf(res) ?? noCreatedId(ctx, res, what);
  ctx.created(resource, id, `${create.path}/${id}`);
  return id;
}
