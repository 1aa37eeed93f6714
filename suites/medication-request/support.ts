/**
 * Helpers of the MedicationRequest suite: the codes the spec accepts for its
 * errors, and what its checks compare. Reads, creates, updates and searches are
 * the resource client (src/service/resources.ts); bodies are src/service/bodies.ts.
 */
import type { CheckContext } from '../../src/engine/index.js';
import type { HttpResponse } from '../../src/http/index.js';
import { expectError, expectResource, isObject, putMedicationRequest, readMedicationRequest, type Resource } from '../../src/service/index.js';

/** Codes accepted for an unknown MedicationRequest: endpoint table (HPB-00102) or catalog (HPB-00111). */
export const NOT_FOUND_CODES = ['HPB-00102', 'HPB-00111'];
/** Codes accepted for an update under a signed or cancelled prescription (Update rule 2). */
export const SIGNED_CODES = ['HPB-00114', 'HPB-00103'];

/** The create answered the MedicationRequest itself (Endpoints table, Payload out: MedicationRequest). */
export function expectCreatedResource(ctx: CheckContext, res: HttpResponse, requirement = 'medication-request.create-returns-resource'): Resource {
  return expectResource(ctx, res, 'MedicationRequest', requirement);
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

/** `reference` of a Reference-valued field, or undefined. */
export function referenceOf(value: unknown): string | undefined {
  return isObject(value) && typeof value.reference === 'string' ? value.reference : undefined;
}

/** Same reference, ignoring the case of the id (UUIDs compare case-insensitively). */
export function sameReference(actual: string | undefined, expected: string): boolean {
  return actual !== undefined && actual.toLowerCase() === expected.toLowerCase();
}
