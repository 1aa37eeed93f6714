/**
 * Helpers of the DocumentReference checks (R5 surface). Reads, searches, creates and
 * updates are the resource client (src/service/resources.ts); the body is
 * src/service/bodies.ts (documentBody).
 */
import type { HttpResponse } from '../../src/http/index.js';
import { DOCUMENT_REFERENCE, documentOf, type Json, smallDocument } from '../../src/service/index.js';

export const area = 'document-reference';
/** The scopes of reads and searches, and of writes. */
export const RS = DOCUMENT_REFERENCE.read;
export const CRU = DOCUMENT_REFERENCE.write;

/** A document write may carry a large document: its own request time budget. */
export const LARGE_REQUEST_MS = 120_000;

/** The resource without `meta` (server-managed) and `id` (assigned). */
export function writable(resource: Json): Json {
  const { meta: _meta, id: _id, ...rest } = resource;
  return rest;
}

/**
 * Sends with no retry, so that the first answer is the verdict (a 500 where the spec names
 * another status is the failure, not an outage to retry, while the target answers normally
 * elsewhere: src/engine/outcome.ts); a 429 or a 502-504 is sent again under the spec's retry
 * rules, as those are no answer to the request itself.
 */
export async function firstAnswer(send: (retry: 'none' | 'spec') => Promise<HttpResponse>): Promise<HttpResponse> {
  const res = await send('none');
  return res.status === 429 || (res.status >= 502 && res.status <= 504) ? send('spec') : res;
}

/** Status and catalog code, for messages. */
export function answered(res: HttpResponse, code: string | undefined): string {
  return `${res.status}${code ? ` ${code}` : ''}`;
}

/** A minimal one-page PDF, of exactly `size` bytes when given and possible. */
export function pdf(size?: number): Buffer {
  return (size === undefined ? undefined : documentOf('application/pdf', size)) ?? smallDocument('application/pdf');
}
