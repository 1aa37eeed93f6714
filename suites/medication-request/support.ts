/**
 * Helpers shared by the MedicationRequest, general-convention and versioning
 * checks: request bodies, create/read/update through the target's published
 * operations, and the spec's expectations for MedicationRequest errors.
 */
import { randomUUID } from 'node:crypto';
import type { CheckContext } from '../../src/engine/context.js';
import { bundleLink, bundleResources, expectError, expectSearchset, expectStatus, isObject } from '../../src/engine/expect.js';
import type { HttpResponse, RequestOptions } from '../../src/http/types.js';
import type { Release } from '../../src/fhir/index.js';

export type Resource = Record<string, unknown>;

/** Read and search need `.rs`; update `.cru`; MedicationRequest create `.c` (spec: Using a token). */
export const READ_SCOPES = ['system/MedicationRequest.rs'];
export const WRITE_SCOPES = ['system/MedicationRequest.rs', 'system/MedicationRequest.cru', 'system/MedicationRequest.c'];

/** Codes accepted for an unknown MedicationRequest: endpoint table (HPB-00102) or catalog (HPB-00111). */
export const NOT_FOUND_CODES = ['HPB-00102', 'HPB-00111'];
/** Codes accepted for an update under a signed or cancelled prescription (Update rule 2). */
export const SIGNED_CODES = ['HPB-00114', 'HPB-00103'];

const RUN_TAG_SYSTEM = 'https://fhir-conformance.dev/run';

/** A valid MedicationRequest for the fixture patient, tagged with the run id; `undefined` overrides drop a field. */
export function newMedicationRequest(ctx: CheckContext, overrides: Resource = {}): Resource {
  return {
    resourceType: 'MedicationRequest',
    meta: { tag: [{ system: RUN_TAG_SYSTEM, code: ctx.runId }] },
    status: 'active',
    intent: 'order',
    medicationCodeableConcept: {
      coding: [{ system: 'http://www.nlm.nih.gov/research/umls/rxnorm', code: '197361', display: 'amlodipine 5 MG Oral Tablet' }],
      text: 'amlodipine 5 MG Oral Tablet',
    },
    subject: { reference: `Patient/${ctx.fixture('patient')}` },
    dosageInstruction: [{ text: '1 tablet every 24 hours' }],
    note: [{ text: `created by fhir-conformance run ${ctx.runId}` }],
    ...overrides,
  };
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
  ctx.check(issues.length === 0, `response is not valid FHIR ${release}: ${issues.slice(0, 3).map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`, {
    requirement,
    expected: `valid against the HL7 ${release} schema`,
    actual: issues.slice(0, 5),
    exchange: res.exchange.id,
  });
}

export function readUrl(ctx: CheckContext, id: string): string {
  return ctx.path(ctx.operation('MedicationRequest', 'read', 'R4').path, { id });
}

export async function readMedicationRequest(ctx: CheckContext, id: string, requirement = 'medication-request.read-returns-resource'): Promise<{ res: HttpResponse; resource: Resource }> {
  const res = await ctx.fhir({ scopes: READ_SCOPES, url: readUrl(ctx, id), share: true });
  expectStatus(res, 200, requirement);
  return { res, resource: expectResource(ctx, res, 'MedicationRequest', requirement) };
}

/** A 2xx answer (create and update success statuses are not shown: any 2xx is success). */
export function isSuccess(res: HttpResponse): boolean {
  return res.status >= 200 && res.status < 300;
}

/** The write succeeded: any 2xx (Gaps: "Success status codes of create and update: not shown"). */
export function expectSuccess(ctx: CheckContext, res: HttpResponse, requirement: string, what: string): void {
  if (isSuccess(res)) return;
  const issue = isObject(res.json) && Array.isArray(res.json.issue) && isObject(res.json.issue[0]) ? res.json.issue[0].diagnostics : undefined;
  ctx.fail(`${what}: expected a 2xx success, got ${res.status}${typeof issue === 'string' ? ` (${issue.slice(0, 120)})` : ''}`, {
    requirement, expected: '2xx', actual: res.status, exchange: res.exchange.id,
  });
}

/**
 * The id of what a create made: the body's id when the body is the resource,
 * else the id in `Location` (`.../<type>/<id>` or `.../<type>/<id>/_history/<v>`).
 */
export function createdIdOf(res: HttpResponse, resourceType: string): string | undefined {
  const body = res.json;
  if (isObject(body) && body.resourceType === resourceType && typeof body.id === 'string') return body.id;
  const m = new RegExp(`/${resourceType}/([^/?#]+)`).exec(res.headers.location ?? '');
  return m ? decodeURIComponent(m[1]!) : undefined;
}

/** POST a MedicationRequest; a created one (2xx with an id in the body or Location) is added to the run's ledger. */
export async function postMedicationRequest(ctx: CheckContext, body: Resource, opts: { refusal?: boolean } = {}): Promise<HttpResponse> {
  const op = ctx.operation('MedicationRequest', 'create', 'R4');
  const req = { scopes: WRITE_SCOPES, method: 'POST' as const, url: ctx.path(op.path), body };
  // A create that must be refused: a server error is judged, not retried into no verdict (see refusalProbe).
  const res = opts.refusal ? await refusalProbe(ctx, req) : await ctx.fhir(req);
  const id = isSuccess(res) ? createdIdOf(res, 'MedicationRequest') : undefined;
  if (id) ctx.created('MedicationRequest', id, readUrl(ctx, id));
  return res;
}

/**
 * Create one of our own MedicationRequests (the create must succeed: any 2xx).
 * `resource` is the response body when it is the MedicationRequest, else the
 * read of the id `Location` names (whether the body must be the resource is
 * judged by the checks naming medication-request.create-returns-resource).
 */
export async function createOwn(ctx: CheckContext, overrides: Resource = {}, requirement = 'medication-request.create-returns-resource'): Promise<{ res: HttpResponse; resource: Resource; id: string }> {
  const res = await postMedicationRequest(ctx, newMedicationRequest(ctx, overrides));
  expectSuccess(ctx, res, requirement, 'create');
  const id = createdIdOf(res, 'MedicationRequest');
  if (id === undefined) {
    ctx.fail('the create answered neither the MedicationRequest with its id nor a Location naming it', {
      requirement, expected: 'a MedicationRequest body with an id, or Location: .../MedicationRequest/<id>', actual: { status: res.status, body: res.text.slice(0, 120), location: res.headers.location ?? null }, exchange: res.exchange.id,
    });
  }
  const body = res.json;
  if (isObject(body) && body.resourceType === 'MedicationRequest') return { res, resource: expectResource(ctx, res, 'MedicationRequest', requirement), id };
  return { res, resource: (await readMedicationRequest(ctx, id)).resource, id };
}

/** The create answered the MedicationRequest itself (Endpoints table, Payload out: MedicationRequest). */
export function expectCreatedResource(ctx: CheckContext, res: HttpResponse, requirement = 'medication-request.create-returns-resource'): Resource {
  return expectResource(ctx, res, 'MedicationRequest', requirement);
}

export async function putMedicationRequest(ctx: CheckContext, id: string, body: Resource, headers: Record<string, string> = {}, opts: { refusal?: boolean } = {}): Promise<HttpResponse> {
  const op = ctx.operation('MedicationRequest', 'update', 'R4');
  const req = { scopes: WRITE_SCOPES, method: 'PUT' as const, url: ctx.path(op.path, { id }), body, headers };
  // An update that must be refused: a server error is judged, not retried into no verdict (see refusalProbe).
  return opts.refusal ? refusalProbe(ctx, req) : ctx.fhir(req);
}

/** PUT the resource back exactly as read: an update that changes nothing, for fixtures in a refusing state. */
export async function putUnchanged(ctx: CheckContext, fixtureKey: string, opts: { refusal?: boolean } = {}): Promise<HttpResponse> {
  const id = ctx.fixture(fixtureKey);
  const { resource } = await readMedicationRequest(ctx, id);
  return putMedicationRequest(ctx, id, resource, {}, opts);
}

/** A validation refusal: 400 or 422 with HPB-00101 (issue code `invalid` with 400, Errors > Format 4). */
export function expectValidationError(res: HttpResponse, requirement: string): void {
  expectError(res, { status: [400, 422], code: 'HPB-00101', requirement, ...(res.status === 400 ? { issueCode: 'invalid' } : {}) });
}

export function randomId(): string {
  return randomUUID();
}

/** Status and catalog code of a response, for observations. */
export function outcomeSummary(res: HttpResponse, code: string | undefined): { status: number; code?: string } {
  return code === undefined ? { status: res.status } : { status: res.status, code };
}

/** `reference` of a Reference-valued field, or undefined. */
export function referenceOf(value: unknown): string | undefined {
  return isObject(value) && typeof value.reference === 'string' ? value.reference : undefined;
}

/** Same reference, ignoring the case of the id (UUIDs compare case-insensitively). */
export function sameReference(actual: string | undefined, expected: string): boolean {
  return actual !== undefined && actual.toLowerCase() === expected.toLowerCase();
}

/**
 * Search MedicationRequest and follow `next` links, at most `maxPages` pages.
 * `complete` is false when a `next` link was left unfollowed.
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

/**
 * A request whose answer must be a 4xx refusal (an unknown id, a date outside
 * the registration window): sent without the 5xx retries, so a server that
 * answers the case with a server error is judged on it rather than left
 * without a verdict. A 5xx is sent once more after a second, and the second
 * answer is the one judged (a passing outage does not make a failure).
 */
export async function refusalProbe(ctx: CheckContext, opts: RequestOptions & { scopes: string[]; role?: string }): Promise<HttpResponse> {
  const first = await ctx.fhir({ ...opts, retry: 'none' });
  if (first.status < 500) return first;
  await ctx.sleep(1000);
  return ctx.fhir({ ...opts, retry: 'none' });
}
