/** Helpers shared by the DocumentReference checks (R5 surface and `$upload`). */
import type { CheckContext } from '../../src/engine/context.js';
import { expectStatus, isObject } from '../../src/engine/expect.js';
import type { ModelOperation } from '../../src/discovery/index.js';
import type { HttpResponse } from '../../src/http/types.js';
import { collect, searchUrl, type Collected, type Json } from '../encounter/search.js';
import { runTag } from '../encounter/support.js';

export const area = 'document-reference';
export const RS = ['system/DocumentReference.rs'];
export const CRU = ['system/DocumentReference.cru'];

export async function readDocument(ctx: CheckContext, id: string, requirement = 'document-reference.read'): Promise<{ res: HttpResponse; document: Json }> {
  const op = ctx.operation('DocumentReference', 'read', 'R5');
  const res = await ctx.fhir({ scopes: RS, url: ctx.path(op.path, { id }) });
  expectStatus(res, 200, requirement);
  if (!isObject(res.json)) ctx.fail('the read response body is not a JSON object', { requirement, actual: res.text.slice(0, 120), exchange: res.exchange.id });
  return { res, document: res.json };
}

export async function searchDocuments(ctx: CheckContext, params: Array<[string, string]>, requirement = 'document-reference.search'): Promise<Collected> {
  const op = ctx.operation('DocumentReference', 'search-type', 'R5');
  return collect(ctx, { url: searchUrl(op.path, params), scopes: RS, requirement });
}

/** A valid R5 DocumentReference for the fixture patient, tagged with the run id. */
export function documentBody(ctx: CheckContext, overrides: Json = {}): Json {
  return {
    resourceType: 'DocumentReference',
    meta: { tag: [runTag(ctx)] },
    status: 'current',
    type: { coding: [{ system: 'http://loinc.org', code: '11488-4', display: 'Consult note' }] },
    subject: { reference: `Patient/${ctx.fixture('patient')}` },
    date: new Date().toISOString(),
    description: `fhir-conformance run ${ctx.runId}`,
    content: [{ attachment: { contentType: 'text/plain', data: Buffer.from('fhir-conformance').toString('base64'), title: 'conformance.txt' } }],
    ...overrides,
  };
}

/** Creates a DocumentReference (into the ledger); fails when the create does not succeed. */
export async function createDocument(ctx: CheckContext, overrides: Json = {}): Promise<{ res: HttpResponse; document: Json }> {
  const op = ctx.operation('DocumentReference', 'create', 'R5');
  const res = await ctx.fhir({ scopes: CRU, method: 'POST', url: op.path, body: documentBody(ctx, overrides) });
  if (res.status >= 200 && res.status < 300 && isObject(res.json) && typeof res.json.id === 'string') ctx.created('DocumentReference', res.json.id);
  expectStatus(res, [200, 201], 'document-reference.create', 'create status');
  if (!isObject(res.json) || res.json.resourceType !== 'DocumentReference' || typeof res.json.id !== 'string') {
    ctx.fail('the create response is not a DocumentReference with an id', { requirement: 'document-reference.create', actual: res.text.slice(0, 200), exchange: res.exchange.id });
  }
  return { res, document: res.json };
}

/** The `$upload` operation the target advertises (R5 CapabilityStatement operation-path), or undefined. */
export function uploadOperation(ctx: CheckContext): ModelOperation | undefined {
  return ctx.model.operations.find((o) => o.resource === 'DocumentReference' && o.interaction === 'operation' && o.operationName === 'upload');
}

export function requireUpload(ctx: CheckContext): ModelOperation {
  const op = uploadOperation(ctx);
  if (!op) ctx.skip('the target does not advertise a DocumentReference $upload operation (R5 CapabilityStatement)');
  return op;
}

export async function upload(ctx: CheckContext, op: ModelOperation, id: string, contentType: string, data: Buffer): Promise<HttpResponse> {
  return ctx.fhir({ scopes: CRU, method: op.method, url: ctx.path(op.path, { id }), headers: { 'content-type': contentType }, body: data, timeoutMs: 60_000 });
}

const PDF_BODY = [
  '1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj',
  '2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj',
  '3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 72 72]>>endobj',
  'trailer<</Root 1 0 R>>',
  '%%EOF',
  '',
].join('\n');

/** A minimal one-page PDF, padded with PDF comment lines to `size` bytes when given. */
export function pdf(size?: number): Buffer {
  const header = '%PDF-1.4\n';
  const bare = Buffer.from(header + PDF_BODY, 'latin1');
  if (size === undefined || size <= bare.length) return bare;
  const line = `%${'x'.repeat(1022)}\n`;
  let padding = line.repeat(Math.floor((size - bare.length) / line.length));
  const rest = size - bare.length - padding.length;
  if (rest > 0) padding += rest === 1 ? '\n' : `%${'x'.repeat(rest - 2)}\n`;
  return Buffer.from(header + padding + PDF_BODY, 'latin1');
}
