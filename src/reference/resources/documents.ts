/**
 * Rules for a document, however it comes in (`$upload`, or inline in
 * `content[].attachment.data` on create and update): over `limits.documentMaxBytes`
 * 413 HPB-00119 ("Document size maximum ... excess gives 413 HPB-00119"); bytes that
 * do not match the declared type 400 HPB-00120 ("Document content invalid or
 * declared type does not match"). Which types are accepted is not shown: the
 * reference knows PDF, PNG, JPEG and UTF-8 text.
 */
import { createHash } from 'node:crypto';
import { FhirError } from '../types.js';
import type { ReferenceLimits } from '../types.js';
import type { ResourceEnv } from './env.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Supported media types and the check that content really is of that type. */
export const DOCUMENT_TYPES: Record<string, (data: Buffer) => boolean> = {
  'application/pdf': (data) => data.subarray(0, 5).toString('latin1') === '%PDF-',
  'image/png': (data) => data.subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE),
  'image/jpeg': (data) =>
    data.length >= 4 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff && data[data.length - 2] === 0xff && data[data.length - 1] === 0xd9,
  'text/plain': (data) => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(data);
      return true;
    } catch {
      return false;
    }
  },
};

/** Faults that switch a document rule off (src/reference/faults/document-reference.ts). */
export const INLINE_SIZE_NOT_ENFORCED = 'document-reference-inline-size-not-enforced';
export const INLINE_TYPE_NOT_CHECKED = 'document-reference-inline-type-mismatch-accepted';
export const UPLOAD_TYPE_NOT_CHECKED = 'document-reference-upload-type-mismatch-accepted';

export const badDocument = (message: string): FhirError => new FhirError(400, 'invalid', message, 'HPB-00120');
export const tooLarge = (max: number): FhirError => new FhirError(413, 'too-long', `Document exceeds the maximum size of ${max} bytes`, 'HPB-00119');

/** `type/subtype` of a media type, lower case, without parameters. */
export function mediaTypeOf(value: unknown): string {
  return typeof value === 'string' ? value.split(';')[0]!.trim().toLowerCase() : '';
}

/**
 * A character base64 does not use: one character class, no group, linear and safe on a text of
 * tens of megabytes (a third of the time `^[A-Za-z0-9+/]*={0,2}$` took on 1.4 MB: the first
 * character outside the class ends the search).
 */
const NOT_BASE64 = /[^A-Za-z0-9+/=]/;

/** The text without whitespace (the same string when it has none, the common case: no copy). */
function withoutWhitespace(text: string): string {
  return /\s/.test(text) ? text.replace(/\s+/g, '') : text;
}

/** Strict base64 (whitespace ignored); undefined when the text is not base64. */
export function decodeBase64(text: string): Buffer | undefined {
  return decodeClean(withoutWhitespace(text));
}

/** Strict base64 of a text without whitespace: length a multiple of 4, `=` only as the last one or two characters. */
function decodeClean(clean: string): Buffer | undefined {
  if (clean.length % 4 !== 0 || NOT_BASE64.test(clean)) return undefined;
  const pad = clean.indexOf('=');
  const padding = pad === -1 ? '' : clean.slice(pad);
  if (padding !== '' && padding !== '=' && padding !== '==') return undefined;
  return Buffer.from(clean, 'base64');
}

/** Decoded size of a base64 text without whitespace, without decoding it. */
function base64Size(clean: string): number {
  return Math.floor((clean.length * 3) / 4) - (clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0);
}

/** An uploaded document: size, then presence, a known declared type, and bytes of that type. */
export function checkUploadedDocument(env: ResourceEnv, data: Buffer, declared: string): void {
  if (data.length > env.limits.documentMaxBytes) throw tooLarge(env.limits.documentMaxBytes);
  if (data.length === 0) throw badDocument('Document content is empty');
  const matches = DOCUMENT_TYPES[declared];
  if (!matches) throw badDocument(`Declared type ${JSON.stringify(declared)} is not supported (${Object.keys(DOCUMENT_TYPES).join(', ')})`);
  if (!matches(data) && !env.faults.has(UPLOAD_TYPE_NOT_CHECKED)) throw badDocument(`Document content does not match the declared type ${declared}`);
}

/**
 * A document inline in an attachment (`data`, base64): over the maximum 413 HPB-00119;
 * of a known `contentType` but other bytes 400 HPB-00120. A `data` that is not base64 is
 * left to the schema check (400 HPB-00101); an unknown `contentType` is stored as sent.
 */
export function checkInlineDocument(env: ResourceEnv, attachment: Record<string, unknown>): void {
  if (typeof attachment.data !== 'string') return;
  const max = env.limits.documentMaxBytes;
  const clean = withoutWhitespace(attachment.data);
  if (base64Size(clean) > max && !env.faults.has(INLINE_SIZE_NOT_ENFORCED)) throw tooLarge(max);
  const matches = DOCUMENT_TYPES[mediaTypeOf(attachment.contentType)];
  if (!matches || env.faults.has(INLINE_TYPE_NOT_CHECKED)) return;
  const data = decodeClean(clean);
  if (data && !matches(data)) throw badDocument(`attachment.data does not match the declared contentType ${mediaTypeOf(attachment.contentType)}`);
}

/** What is stored of an accepted document (the bytes are not kept). */
export function attachmentOf(data: Buffer, declared: string, now: number, title?: unknown): Record<string, unknown> {
  return {
    contentType: declared,
    size: String(data.length),
    hash: createHash('sha1').update(data).digest('base64'),
    creation: new Date(now).toISOString(),
    ...(typeof title === 'string' ? { title } : {}),
  };
}

/** Base64 length of `bytes` bytes. */
const base64Length = (bytes: number) => 4 * Math.ceil(bytes / 3);

/**
 * Bytes of a DocumentReference write (or a JSON `$upload` payload) read before it is refused
 * with 413 HPB-00119: a document of the maximum size, base64-encoded, plus `maxBodyBytes`
 * for the rest of the resource. Under the inline-size fault: 128 MiB.
 */
export function documentBodyCap(limits: ReferenceLimits, faults: ReadonlySet<string>): number {
  return faults.has(INLINE_SIZE_NOT_ENFORCED) ? 128 * 1024 * 1024 : limits.maxBodyBytes + base64Length(limits.documentMaxBytes);
}
