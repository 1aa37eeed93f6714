/** Helpers shared by the DocumentReference checks (R5 surface). */
import type { CheckContext } from '../../src/engine/context.js';
import { expectStatus, isObject } from '../../src/engine/expect.js';
import type { HttpResponse } from '../../src/http/types.js';
import { collect, searchUrl, type Collected, type Json } from '../encounter/search.js';
import { runTag } from '../encounter/support.js';
import { documentOf, smallDocument, type DocumentType } from './documents.js';

export const area = 'document-reference';
export const RS = ['system/DocumentReference.rs'];
export const CRU = ['system/DocumentReference.cru'];

/** A document write may carry a large document: its own request time budget. */
export const LARGE_REQUEST_MS = 120_000;

export async function readDocument(ctx: CheckContext, id: string, requirement = 'document-reference.read'): Promise<{ res: HttpResponse; document: Json }> {
  const op = ctx.operation('DocumentReference', 'read', 'R5');
  const res = await ctx.fhir({ scopes: RS, url: ctx.path(op.path, { id }), share: true });
  expectStatus(res, 200, requirement);
  if (!isObject(res.json)) ctx.fail('the read response body is not a JSON object', { requirement, actual: res.text.slice(0, 120), exchange: res.exchange.id });
  return { res, document: res.json };
}

export async function searchDocuments(ctx: CheckContext, params: Array<[string, string]>, requirement = 'document-reference.search'): Promise<Collected> {
  const op = ctx.operation('DocumentReference', 'search-type', 'R5');
  return collect(ctx, { url: searchUrl(op.path, params), scopes: RS, requirement });
}

/** The media type of the documents the suite sends (config `documentReference.upload.contentType`, else PDF). */
export function documentType(ctx: CheckContext): DocumentType {
  return ctx.config.documentReference.upload?.contentType ?? 'application/pdf';
}

/** An attachment carrying `data` inline (base64). */
export function inlineAttachment(type: DocumentType, data: Buffer): Json {
  return { contentType: type, data: data.toString('base64'), title: 'fhir-conformance document' };
}

/** Now, to the second: what a server stores at any precision reads back the same. */
export function wholeSecondNow(): string {
  return new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export const CATEGORY = { coding: [{ system: 'http://hl7.org/fhir/us/core/CodeSystem/us-core-documentreference-category', code: 'clinical-note', display: 'Clinical Note' }] };

/** A valid R5 DocumentReference for the fixture patient, tagged with the run id, with a small document inline. */
export function documentBody(ctx: CheckContext, overrides: Json = {}): Json {
  return {
    resourceType: 'DocumentReference',
    meta: { tag: [runTag(ctx)] },
    status: 'current',
    type: { coding: [{ system: 'http://loinc.org', code: '11488-4', display: 'Consult note' }] },
    category: [CATEGORY],
    subject: { reference: `Patient/${ctx.fixture('patient')}` },
    date: wholeSecondNow(),
    description: `fhir-conformance run ${ctx.runId}`,
    content: [{ attachment: inlineAttachment(documentType(ctx), smallDocument(documentType(ctx))) }],
    ...overrides,
  };
}

/** Per-request options of a document write: retry rule, time budget, response body cap. */
export interface WriteOptions {
  retry?: 'none' | 'spec';
  timeoutMs?: number;
  /** A response may echo a large document back: read up to this many bytes. */
  maxBodyBytes?: number;
}

/** POSTs a DocumentReference body; a created one goes to the ledger whatever the check concludes. */
export async function postDocument(ctx: CheckContext, body: Json, opts: WriteOptions = {}): Promise<HttpResponse> {
  const op = ctx.operation('DocumentReference', 'create', 'R5');
  const res = await ctx.fhir({ scopes: CRU, method: 'POST', url: op.path, body, ...opts });
  const id = createdIdOf(res);
  if (res.status >= 200 && res.status < 300 && id) ctx.created('DocumentReference', id);
  return res;
}

/** PUTs a DocumentReference body to its id. */
export async function putDocument(ctx: CheckContext, id: string, body: Json, opts: WriteOptions = {}): Promise<HttpResponse> {
  const op = ctx.operation('DocumentReference', 'update', 'R5');
  return ctx.fhir({ scopes: CRU, method: 'PUT', url: ctx.path(op.path, { id }), body: { ...body, id }, ...opts });
}

/** The id of a created resource: the body's, else the Location's last segment (create success status and body are not shown). */
export function createdIdOf(res: HttpResponse): string | undefined {
  if (isObject(res.json) && res.json.resourceType === 'DocumentReference' && typeof res.json.id === 'string') return res.json.id;
  const location = res.headers.location;
  return location ? /\/DocumentReference\/([^/?#]+)/.exec(location)?.[1] : undefined;
}

/** The id of a successful create; fails when the create did not succeed or names no id. */
export function expectCreated(ctx: CheckContext, res: HttpResponse): string {
  expectStatus(res, [200, 201], 'document-reference.create', 'create status');
  const id = createdIdOf(res);
  if (!id) ctx.fail('the create response names no id (neither a DocumentReference body nor a Location)', { requirement: 'document-reference.create', actual: res.text.slice(0, 200), exchange: res.exchange.id });
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

/** The resource without `meta` (server-managed) and `id` (assigned). */
export function writable(resource: Json): Json {
  const { meta: _meta, id: _id, ...rest } = resource;
  return rest;
}

/**
 * Sends with no retry, so that the first answer is the verdict (a 500 where the spec names
 * another status is the failure, not an outage to retry); a 429 or a 502-504 is sent again
 * under the spec's retry rules, as those are no answer to the request itself.
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
