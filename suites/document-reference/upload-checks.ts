/**
 * DocumentReference `$upload` (spec: "an operation named `$upload`"; "the `$upload`
 * path and payload: not shown"; catalog HPB-00120). The contract comes from the config,
 * the target's publication, or the conventional FHIR forms (contract.ts); what cannot
 * be established is recorded, never failed.
 */
import { type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import { catalogCodeOf, expectError, isObject, notOf } from '../../src/service/index.js';
import { describeForm, requireContract, resolveUpload, sendUpload, uploadTarget } from '../../src/service/index.js';
import { area, firstAnswer } from './support.js';

export const uploadChecks: CheckDefinition[] = [
  defineCheck({
    id: 'document-reference.upload-contract',
    title: 'records the $upload contract (path, level, payload, type) and where it came from',
    area,
    level: 'observation',
    requirements: ['document-reference.upload-not-shown'],
    quote: 'the `$upload` path and payload: not shown.',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const r = await resolveUpload(ctx);
      ctx.observe(
        'document-reference.upload-contract',
        r.contract ? { form: describeForm(r.contract.form), contentType: r.contract.contentType, source: r.contract.source } : 'not established',
      );
      ctx.observe('document-reference.upload-basis', r.basis);
      ctx.observe('document-reference.upload-attempts', r.attempts);
      const r5 = {
        notes: (ctx.model.notes ?? []).filter((n) => n.startsWith('R5 ') || n.includes('/fhir/R5/')),
        divergences: (ctx.model.specDivergences ?? []).filter((d) => d.startsWith('R5 ')),
      };
      if (r5.notes.length || r5.divergences.length)
        ctx.observe('document-reference.r5-discovery', r5, 'the spec states the R5 paths and scopes; what the target publishes is used');
    },
  }),
  defineCheck({
    id: 'document-reference.upload-valid-document',
    title: 'a small valid document is accepted by $upload in the declared or published form',
    area,
    level: 'MUST',
    requirements: ['document-reference.upload', 'catalog.hpb-00120'],
    quote: 'and an operation named `$upload`',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const r = await resolveUpload(ctx);
      if (r.contract) {
        const res = r.evidence!;
        ctx.observe('document-reference.upload.success', {
          status: res.status,
          resourceType: isObject(res.json) ? res.json.resourceType : undefined,
          source: r.contract.source,
        });
        return;
      }
      if (!r.pinned) {
        ctx.skip(
          'the $upload path and payload are not shown, not declared (documentReference.upload) and not published, and no conventional form accepted a valid document (see document-reference.upload-contract)',
        );
      }
      const refusedAsInvalid = r.attempts.some((a) => a.status === 400 && a.code === 'HPB-00120');
      const types = [...new Set(r.attempts.map((a) => a.contentType))].join(', ');
      const answers = [...new Set(r.attempts.map((a) => `${a.status}${a.code ? ` ${a.code}` : ''}`))].join(', ');
      const by = ctx.config.documentReference.upload ? 'the config declares' : 'the target publishes';
      ctx.fail(`the $upload form ${by} accepted no small valid document (${types}): ${answers}`, {
        requirement: refusedAsInvalid ? 'catalog.hpb-00120' : 'document-reference.upload',
        expected: { answer: '2xx for a valid document', basis: r.basis },
        actual: r.attempts.map((a) => `${a.form} ${a.contentType}: ${a.status}${a.code ? ` ${a.code}` : ''}`),
        exchange: r.evidence?.exchange.id,
      });
    },
  }),
  defineCheck({
    id: 'document-reference.upload-type-mismatch-400',
    title: '$upload of bytes that do not match the declared type gives 400 HPB-00120',
    area,
    level: 'MUST',
    requirements: ['catalog.hpb-00120'],
    quote: 'HPB-00120 | 400 | Document content invalid or declared type does not match.',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx) {
      const contract = await requireContract(ctx);
      const id = await uploadTarget(ctx, contract.form);
      const res = await firstAnswer((retry) => sendUpload(ctx, contract.form, id, notOf(contract.contentType), contract.contentType, { retry }));
      ctx.observe('document-reference.upload.mismatch', { status: res.status, code: catalogCodeOf(res) });
      expectError(res, { status: 400, code: 'HPB-00120', requirement: 'catalog.hpb-00120' });
    },
  }),
];
