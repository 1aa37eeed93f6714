/**
 * Helpers shared by the MedicationRequest, general-convention and versioning
 * checks: request bodies, create/read/update through the target's published
 * operations, and the spec's expectations for MedicationRequest errors.
 */
import { randomUUID } from 'node:crypto';
import type { CheckContext } from '../../src/engine/context.js';
import { bundleLink, bundleResources, expectError, expectSearchset, expectStatus, isObject } from '../../src/engine/expect.js';
import type { HttpResponse } from '../../src/http/types.js';
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
  const res = await ctx.fhir({ scopes: READ_SCOPES, url: readUrl(ctx, id) });
  expectStatus(res, 200, requirement);
  return { res, resource: expectResource(ctx, res, 'MedicationRequest', requirement) };
}

/** POST a MedicationRequest; a created one (2xx with an id) is added to the run's ledger. */
export async function postMedicationRequest(ctx: CheckContext, body: Resource): Promise<HttpResponse> {
  const op = ctx.operation('MedicationRequest', 'create', 'R4');
  const res = await ctx.fhir({ scopes: WRITE_SCOPES, method: 'POST', url: ctx.path(op.path), body });
  const id = isObject(res.json) && typeof res.json.id === 'string' ? res.json.id : undefined;
  if (res.status >= 200 && res.status < 300 && id) ctx.created('MedicationRequest', id, readUrl(ctx, id));
  return res;
}

/** Create one of our own MedicationRequests (the create must succeed). */
export async function createOwn(ctx: CheckContext, overrides: Resource = {}, requirement = 'medication-request.create-returns-resource'): Promise<{ res: HttpResponse; resource: Resource; id: string }> {
  const res = await postMedicationRequest(ctx, newMedicationRequest(ctx, overrides));
  expectStatus(res, [200, 201], requirement, 'create');
  const resource = expectResource(ctx, res, 'MedicationRequest', requirement);
  if (typeof resource.id !== 'string') ctx.fail('the created MedicationRequest has no id', { requirement, expected: 'an id', actual: resource.id, exchange: res.exchange.id });
  return { res, resource, id: resource.id };
}

export async function putMedicationRequest(ctx: CheckContext, id: string, body: Resource, headers: Record<string, string> = {}): Promise<HttpResponse> {
  const op = ctx.operation('MedicationRequest', 'update', 'R4');
  return ctx.fhir({ scopes: WRITE_SCOPES, method: 'PUT', url: ctx.path(op.path, { id }), body, headers });
}

/** PUT the resource back exactly as read: an update that changes nothing, for fixtures in a refusing state. */
export async function putUnchanged(ctx: CheckContext, fixtureKey: string): Promise<HttpResponse> {
  const id = ctx.fixture(fixtureKey);
  const { resource } = await readMedicationRequest(ctx, id);
  return putMedicationRequest(ctx, id, resource);
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
    const res = await ctx.fhir({ scopes: READ_SCOPES, url });
    const bundle = expectSearchset(res, requirement);
    checkValid(ctx, res, bundle, requirement);
    pages.push(res);
    resources.push(...bundleResources(bundle));
    url = bundleLink(bundle, 'next');
  }
  return { resources, pages, complete: url === undefined };
}
