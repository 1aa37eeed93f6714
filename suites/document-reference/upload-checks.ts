/**
 * DocumentReference `$upload` (spec: "the `$upload` path and payload: not
 * shown"; catalog HPB-00119, HPB-00120). The path comes from the target's R5
 * CapabilityStatement (operation-path extension); the checks skip without it.
 * Uploads go to DocumentReferences this run creates.
 */
import { defineCheck, type CheckDefinition } from '../../src/engine/check.js';
import { catalogCodeOf, expectError, isObject } from '../../src/engine/expect.js';
import { area, createDocument, pdf, requireUpload, upload, uploadOperation } from './support.js';

/** The size probe doubles from 64 KiB up to this cap. */
const PROBE_START = 64 * 1024;
const PROBE_CAP = 16 * 1024 * 1024;

export const uploadChecks: CheckDefinition[] = [
  defineCheck({
    id: 'document-reference.upload-advertised',
    title: 'records whether the R5 CapabilityStatement advertises $upload and its path',
    area,
    level: 'observation',
    requirements: ['document-reference.upload-not-shown'],
    quote: 'the `$upload` path and payload: not shown.',
    async run(ctx) {
      const op = uploadOperation(ctx);
      ctx.observe('document-reference.upload', op ? { method: op.method, path: op.path, scope: op.scope } : 'not advertised');
    },
  }),
  defineCheck({
    id: 'document-reference.upload-valid-document',
    title: 'a small valid PDF uploaded as application/pdf is accepted',
    area,
    level: 'MUST',
    requirements: ['catalog.hpb-00120', 'document-reference.upload-not-shown'],
    quote: 'HPB-00120 | 400 | Document content invalid or declared type does not match.',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const op = requireUpload(ctx);
      const { document } = await createDocument(ctx);
      const res = await upload(ctx, op, document.id as string, 'application/pdf', pdf());
      ctx.check(res.status >= 200 && res.status < 300, `a valid ${pdf().length}-byte PDF was refused with ${res.status} ${catalogCodeOf(res) ?? ''}`.trim(), {
        requirement: 'catalog.hpb-00120',
        expected: '2xx',
        actual: { status: res.status, code: catalogCodeOf(res) },
        exchange: res.exchange.id,
      });
      ctx.observe('document-reference.upload.success', { status: res.status, resourceType: isObject(res.json) ? res.json.resourceType : undefined });
    },
  }),
  defineCheck({
    id: 'document-reference.upload-type-mismatch-400',
    title: 'plain text uploaded as application/pdf is refused with 400 HPB-00120',
    area,
    level: 'MUST',
    requirements: ['catalog.hpb-00120'],
    quote: 'HPB-00120 | 400 | Document content invalid or declared type does not match.',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const op = requireUpload(ctx);
      const { document } = await createDocument(ctx);
      const res = await upload(ctx, op, document.id as string, 'application/pdf', Buffer.from('This is plain text, not a PDF document.\n', 'utf8'));
      expectError(res, { status: 400, code: 'HPB-00120', requirement: 'catalog.hpb-00120' });
    },
  }),
  defineCheck({
    id: 'document-reference.upload-too-large-413',
    title: 'uploads of growing size end in 413 HPB-00119',
    area,
    level: 'MUST',
    requirements: ['catalog.hpb-00119'],
    quote: 'HPB-00119 | 413 | Document exceeds the maximum size.',
    tags: ['writes'],
    fixtures: ['patient'],
    timeoutMs: 300_000,
    async run(ctx) {
      const op = requireUpload(ctx);
      const { document } = await createDocument(ctx);
      let accepted = 0;
      for (let size = PROBE_START; size <= PROBE_CAP; size *= 2) {
        const res = await upload(ctx, op, document.id as string, 'application/pdf', pdf(size));
        if (res.status >= 200 && res.status < 300) {
          accepted = size;
          continue;
        }
        if (res.status !== 413) return ctx.skip(`an upload of ${size} bytes answered ${res.status} ${catalogCodeOf(res) ?? ''}; the size probe cannot go on`.trim());
        ctx.observe('document-reference.upload.size-limit', { refusedAt: size, largestAccepted: accepted }, 'bytes; the maximum lies in between');
        expectError(res, { status: 413, code: 'HPB-00119', requirement: 'catalog.hpb-00119' });
        return;
      }
      ctx.observe('document-reference.upload.size-limit', { refusedAt: null, largestAccepted: accepted });
      ctx.skip(`no upload up to ${PROBE_CAP} bytes was refused; the document size maximum lies above the probe`);
    },
  }),
];
