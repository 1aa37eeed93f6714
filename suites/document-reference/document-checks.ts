/**
 * Documents however they come in (spec Limits: "Document size maximum | value: not
 * shown | Document uploads; excess gives 413 `HPB-00119`"; catalog HPB-00119, HPB-00120):
 * inline `content[].attachment.data` on create and on update, and `$upload` when its
 * contract is known (contract.ts).
 *
 * Size: with a declared maximum (`documentReference.maxBytes`) a document of exactly
 * that size must be accepted and one byte more must give 413 HPB-00119. Without it,
 * one document of PROBE_BYTES is sent each way: a refusal must be 413 HPB-00119 (a
 * 400, 422, 500, or a 413 without the code, fails); an acceptance is no proof of a
 * violation, unless another way refused the same size as too large (the maximum is
 * one limit).
 */
import { CheckFailure } from '../../src/errors.js';
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import {
  catalogCodeOf,
  createDocument,
  createdIdOf,
  documentBody,
  documentOf,
  type DocumentType,
  documentType,
  expectError,
  inlineAttachment,
  notOf,
  postDocument,
  putDocument,
} from '../../src/service/index.js';
import type { HttpResponse } from '../../src/http/index.js';
import { requireContract, resolveUpload, sendUpload, type UploadContract, uploadTarget } from '../../src/service/index.js';
import { answered, area, firstAnswer, LARGE_REQUEST_MS, writable } from './support.js';

export type Way = 'create' | 'update' | 'upload';
const WAYS: readonly Way[] = ['create', 'update', 'upload'];
/** The size sent when no maximum is declared: above common document limits, and still quick to send. */
export const PROBE_BYTES = 32 * 1024 * 1024;
const REQ = 'limits.document-size-413';
const QUOTE = 'Document uploads; excess gives 413 `HPB-00119`.';

const WAY_TEXT: Record<Way, string> = {
  create: 'create with the document inline (content[].attachment.data)',
  update: 'update with the document inline (content[].attachment.data)',
  upload: '$upload',
};

const mib = (bytes: number) => (bytes % (1024 * 1024) === 0 ? `${bytes / 1024 / 1024} MiB` : `${bytes} bytes`);
const accepted = (res: HttpResponse) => res.status >= 200 && res.status < 300;

/** Larger accepted documents are shrunk right after their verdict (`shrink`). */
const LARGE_DOCUMENT_BYTES = 64 * 1024;

/**
 * Sends `document` (declared as `type`) one way; the first answer is the verdict (no retry of a 5xx).
 * A large document the target accepted is then replaced by a small one (`shrink`).
 */
async function sendDocument(ctx: CheckContext, way: Way, document: Buffer, type: DocumentType, contract?: UploadContract): Promise<HttpResponse> {
  const timeoutMs = Math.max(ctx.config.timeouts.requestMs, LARGE_REQUEST_MS);
  // An accepted document may come back in the answer (base64): read it whole, for a verdict.
  const maxBodyBytes = 4 * Math.ceil(document.length / 3) + 2 * 1024 * 1024;
  const content = [{ attachment: inlineAttachment(type, document) }];
  let res: HttpResponse;
  let id: string | undefined;
  switch (way) {
    case 'create': {
      const body = documentBody(ctx, { content });
      res = await firstAnswer((retry) => postDocument(ctx, body, { retry, timeoutMs, maxBodyBytes }));
      id = createdIdOf(res, 'DocumentReference');
      break;
    }
    case 'update': {
      const { document: existing } = await createDocument(ctx);
      const body = { ...writable(existing), content };
      id = existing.id as string;
      res = await firstAnswer((retry) => putDocument(ctx, id!, body, { retry, timeoutMs, maxBodyBytes }));
      break;
    }
    case 'upload': {
      const target = await uploadTarget(ctx, contract!.form);
      res = await firstAnswer((retry) => sendUpload(ctx, contract!.form, target, document, type, { retry, timeoutMs, maxBodyBytes }));
      id = target ?? createdIdOf(res, 'DocumentReference');
      break;
    }
  }
  if (accepted(res) && document.length > LARGE_DOCUMENT_BYTES) await shrink(ctx, way, id);
  return res;
}

/**
 * Replaces an accepted large document's content by a small one. Every later search of the
 * patient returns the document whole: left as it was, a document at a declared maximum of some
 * MiB would put those searches over the run's body cap (no verdict), in this run and every
 * later one against the same target. Not judged: what the target did is recorded.
 */
async function shrink(ctx: CheckContext, way: Way, id: string | undefined): Promise<void> {
  const key = `document-reference.large-document-shrunk.${way}`;
  if (!id) {
    ctx.observe(key, 'the accepted document names no id: it stays as sent, and later searches of the patient return it whole');
    return;
  }
  const small = documentBody(ctx);
  const res = await putDocument(ctx, id, small, { retry: 'spec' });
  ctx.observe(
    key,
    accepted(res) ? { id, status: res.status } : { id, status: res.status, note: 'not replaced: later searches of the patient return it whole' },
    'the accepted large document was replaced by a small one, so later searches of the patient stay small',
  );
}

interface Probe {
  way: Way;
  res: HttpResponse;
}

/**
 * The PROBE_BYTES document sent `way`, once per run; undefined for `$upload` without a
 * known contract. A later caller gets the same answer, attached to its evidence.
 */
async function probe(ctx: CheckContext, way: Way): Promise<Probe | undefined> {
  const key = `document-reference.size-probe.${way}`;
  const known = ctx.shared.get(key) as Probe | undefined;
  if (known) {
    ctx.attach(known.res.exchange);
    return known;
  }
  let contract: UploadContract | undefined;
  if (way === 'upload') {
    const r = await resolveUpload(ctx);
    contract = r.contract ?? r.pinnedForm;
    if (!contract) return undefined;
  }
  const type = contract?.contentType ?? documentType(ctx);
  const res = await sendDocument(ctx, way, documentOf(type, PROBE_BYTES)!, type, contract);
  const result = { way, res };
  ctx.shared.set(key, result);
  return result;
}

function sizeCheck(way: Way): CheckDefinition {
  return defineCheck({
    id: `document-reference.size-limit-${way}`,
    surfaces: {
      release: 'R5',
      resource: 'DocumentReference (the one type that carries documents: "Document uploads")',
      channel: WAY_TEXT[way],
      leftOut: [
        'DocumentReference on R4: not in the spec (its R4 operations are "not shown"); a target that mirrors it is not sent documents of the maximum size',
        'the inbound webhook body maximum (413 HPB-00122): inbound webhooks are not shown',
      ],
    },
    title: `a document over the size maximum sent by ${WAY_TEXT[way]} gives 413 HPB-00119`,
    area,
    level: 'MUST',
    requirements: [REQ, 'catalog.hpb-00119'],
    quote: QUOTE,
    tags: ['writes'],
    fixtures: ['patient'],
    timeoutMs: 600_000,
    async run(ctx) {
      const contract = way === 'upload' ? await requireContract(ctx) : undefined;
      const type = contract?.contentType ?? documentType(ctx);
      const max = ctx.config.documentReference.maxBytes;
      if (max !== undefined) {
        ctx.observe('document-reference.size-maximum', { bytes: max, from: 'config documentReference.maxBytes' });
        const atMax = documentOf(type, max);
        if (atMax) {
          const res = await sendDocument(ctx, way, atMax, type, contract);
          ctx.check(
            accepted(res),
            `${WAY_TEXT[way]}: a document of exactly the declared maximum (${max} bytes) was refused with ${answered(res, catalogCodeOf(res))}`,
            {
              requirement: REQ,
              expected: '2xx',
              actual: { status: res.status, code: catalogCodeOf(res) },
              exchange: res.exchange.id,
            },
          );
        } else {
          ctx.observe('document-reference.size-at-maximum', `no ${type} document of exactly ${max} bytes can be built: only ${max + 1} bytes is sent`);
        }
        const over = await sendDocument(ctx, way, documentOf(type, max + 1) ?? documentOf(type)!, type, contract);
        expectError(over, { status: 413, code: 'HPB-00119', requirement: REQ });
        return;
      }
      const mine = (await probe(ctx, way))!;
      ctx.observe(
        'document-reference.size-probe',
        { way, bytes: PROBE_BYTES, status: mine.res.status, code: catalogCodeOf(mine.res) },
        'the maximum is not shown and not declared (documentReference.maxBytes): one document of this size is sent',
      );
      if (!accepted(mine.res)) {
        expectError(mine.res, { status: 413, code: 'HPB-00119', requirement: REQ });
        return;
      }
      for (const other of WAYS.filter((w) => w !== way)) {
        const theirs = await probe(ctx, other);
        if (theirs?.res.status !== 413) continue;
        ctx.fail(
          `${WAY_TEXT[way]} accepted a ${mib(PROBE_BYTES)} document that ${WAY_TEXT[other]} refused as over the document size maximum (413): the maximum is one limit`,
          {
            requirement: REQ,
            expected: { status: 413, code: 'HPB-00119' },
            actual: { status: mine.res.status, refusedBy: other, refusal: { status: 413, code: catalogCodeOf(theirs.res) } },
            exchange: mine.res.exchange.id,
          },
        );
      }
      ctx.skip(
        `${WAY_TEXT[way]} accepted a ${mib(PROBE_BYTES)} document: the document size maximum is not shown and not declared (documentReference.maxBytes), so no document is known to exceed it`,
      );
    },
  });
}

function mismatchCheck(way: 'create' | 'update'): CheckDefinition {
  return defineCheck({
    id: `document-reference.${way}-type-mismatch-400`,
    title: `${WAY_TEXT[way]}: bytes that do not match the declared contentType give 400 HPB-00120`,
    area,
    level: 'MUST',
    requirements: ['catalog.hpb-00120'],
    quote: 'HPB-00120 | 400 | Document content invalid or declared type does not match.',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const type = documentType(ctx);
      const res = await sendDocument(ctx, way, notOf(type), type);
      expectError(res, { status: 400, code: 'HPB-00120', requirement: 'catalog.hpb-00120' });
    },
  });
}

export const documentChecks: CheckDefinition[] = [
  mismatchCheck('create'),
  mismatchCheck('update'),
  ...WAYS.map(sizeCheck),
  defineCheck({
    id: 'document-reference.size-maximum',
    title: 'records the document size maximum assumed, and what each way did with a document of that size',
    area,
    level: 'observation',
    requirements: ['limits.document-size-not-shown'],
    quote: 'Document size maximum | value: not shown',
    tags: ['writes'],
    fixtures: ['patient'],
    timeoutMs: 600_000,
    async run(ctx) {
      const max = ctx.config.documentReference.maxBytes;
      if (max !== undefined) {
        ctx.observe('document-reference.size-maximum', { bytes: max, from: 'config documentReference.maxBytes' });
        return;
      }
      ctx.observe('document-reference.size-maximum', { assumedBelow: PROBE_BYTES, from: 'not declared: one probe of this size per way' });
      for (const way of WAYS) {
        try {
          const p = await probe(ctx, way);
          ctx.observe(`document-reference.size-probe.${way}`, p ? { status: p.res.status, code: catalogCodeOf(p.res) } : 'no $upload contract');
        } catch (e) {
          if (!(e instanceof CheckFailure)) throw e;
          ctx.observe(`document-reference.size-probe.${way}`, `not sent: ${e.message}`);
        }
      }
    },
  }),
];
