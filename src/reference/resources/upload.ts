/**
 * DocumentReference `$upload` (operationId DocumentReference.upload): the raw
 * request body is the document; its declared type is the request Content-Type.
 * Too large: 413 HPB-00119. Empty, unsupported type, or content that does not
 * match the declared type: 400 HPB-00120. Success: 200 with the new version of the
 * DocumentReference whose content is the uploaded attachment.
 */
import { createHash } from 'node:crypto';
import type { Handler } from '../types.js';
import { FhirError } from '../types.js';
import { documentResponse, findDocument } from './document-reference.js';
import type { ResourceEnv } from './env.js';
import { checkIfMatch, header, nextVersion } from './versioning.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Supported media types and the check that content really is of that type. */
export const UPLOAD_TYPES: Record<string, (data: Buffer) => boolean> = {
  'application/pdf': (data) => data.subarray(0, 5).toString('latin1') === '%PDF-',
  'image/png': (data) => data.subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE),
  'text/plain': (data) => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(data);
      return true;
    } catch {
      return false;
    }
  },
};

const badDocument = (message: string) => new FhirError(400, 'invalid', message, 'HPB-00120');

export function uploadHandler(env: ResourceEnv): Handler {
  return (ctx) => {
    const row = findDocument(env, ctx);
    checkIfMatch(ctx, row);
    const data = ctx.rawBody ?? (Buffer.isBuffer(ctx.body) ? ctx.body : Buffer.alloc(0));
    if (data.length > env.limits.documentMaxBytes) {
      throw new FhirError(413, 'too-long', `Document exceeds the maximum size of ${env.limits.documentMaxBytes} bytes`, 'HPB-00119');
    }
    if (data.length === 0) throw badDocument('Document content is empty');
    const declared = (header(ctx, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const matchesType = UPLOAD_TYPES[declared];
    if (!matchesType) throw badDocument(`Declared type ${JSON.stringify(declared)} is not supported (${Object.keys(UPLOAD_TYPES).join(', ')})`);
    if (!matchesType(data) && !env.faults.has('document-reference-upload-type-mismatch-accepted')) throw badDocument(`Document content does not match the declared type ${declared}`);
    const creation = new Date(ctx.now).toISOString();
    const updated = {
      ...row,
      ...nextVersion(row, ctx.now),
      content: [{
        attachment: {
          contentType: declared,
          size: String(data.length),
          hash: createHash('sha1').update(data).digest('base64'),
          creation,
        },
      }],
    };
    env.store.documentReferences.put(updated);
    return documentResponse(env, 200, updated);
  };
}
