/**
 * Documents the DocumentReference checks send: a small valid document of each
 * media type, padded to an exact size when asked (PDF comment lines, a PNG tEXt
 * chunk, JPEG COM segments, text lines), and bytes that are not of a type (for
 * "declared type does not match", HPB-00120).
 */
import { crc32, deflateSync } from 'node:zlib';
import type { DocumentType } from '../config/index.js';

export type { DocumentType } from '../config/index.js';
export const DOCUMENT_TYPES: readonly DocumentType[] = ['application/pdf', 'image/png', 'image/jpeg', 'text/plain'];

const PDF_BODY = [
  '1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj',
  '2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj',
  '3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 72 72]>>endobj',
  'trailer<</Root 1 0 R>>',
  '%%EOF',
  '',
].join('\n');

/**
 * A minimal one-page PDF, padded with comment lines after the header to `size` bytes. The
 * second line is the customary binary marker (bytes over 127), as in most PDF files.
 */
function pdf(size: number | undefined): Buffer | undefined {
  const header = '%PDF-1.4\n%\u00e2\u00e3\u00cf\u00d3\n';
  const bare = Buffer.from(header + PDF_BODY, 'latin1');
  if (size === undefined || size === bare.length) return bare;
  const extra = size - bare.length;
  if (extra < 2) return undefined;
  return Buffer.from(header + fill(extra) + PDF_BODY, 'latin1');
}

/** PDF comment lines (`%...\n`, each at least 2 bytes) totalling exactly `n` >= 2 bytes. */
function fill(n: number): string {
  const lines: string[] = [];
  let left = n;
  while (left > 0) {
    const take = left >= 1024 + 2 || left <= 1024 ? Math.min(left, 1024) : left - 2;
    lines.push(`%${'x'.repeat(take - 2)}\n`);
    left -= take;
  }
  return lines.join('');
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/** A 1x1 grey PNG, padded with a tEXt chunk to `size` bytes. */
function png(size: number | undefined): Buffer | undefined {
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0]);
  const head = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk('IHDR', ihdr)]);
  const tail = Buffer.concat([pngChunk('IDAT', deflateSync(Buffer.from([0, 0x80]))), pngChunk('IEND', Buffer.alloc(0))]);
  const bare = head.length + tail.length;
  if (size === undefined || size === bare) return Buffer.concat([head, tail]);
  const text = size - bare - 12 - 'Comment\0'.length;
  if (text < 0) return undefined;
  return Buffer.concat([head, pngChunk('tEXt', Buffer.concat([Buffer.from('Comment\0', 'latin1'), Buffer.alloc(text, 0x78)])), tail]);
}

/** A 1x1 grey baseline JPEG (one-symbol Huffman tables), padded with COM segments to `size` bytes. */
function jpeg(size: number | undefined): Buffer | undefined {
  const segment = (marker: number, data: Buffer) => {
    const len = Buffer.alloc(2);
    len.writeUInt16BE(data.length + 2);
    return Buffer.concat([Buffer.from([0xff, marker]), len, data]);
  };
  const table = (cls: number) => Buffer.concat([Buffer.from([cls]), Buffer.from([1, ...new Array(15).fill(0)]), Buffer.from([0])]);
  const body = Buffer.concat([
    segment(0xdb, Buffer.concat([Buffer.from([0]), Buffer.alloc(64, 1)])),
    segment(0xc0, Buffer.from([8, 0, 1, 0, 1, 1, 1, 0x11, 0])),
    segment(0xc4, table(0x00)),
    segment(0xc4, table(0x10)),
    segment(0xda, Buffer.from([1, 1, 0, 0, 63, 0])),
    Buffer.from([0x3f, 0xff, 0xd9]),
  ]);
  const soi = Buffer.from([0xff, 0xd8]);
  const bare = soi.length + body.length;
  if (size === undefined || size === bare) return Buffer.concat([soi, body]);
  let extra = size - bare;
  if (extra < 4) return undefined;
  const comments: Buffer[] = [];
  const MAX = 2 + 65535;
  while (extra > 0) {
    const take = extra <= MAX ? extra : extra - MAX >= 4 ? MAX : extra - 4;
    comments.push(segment(0xfe, Buffer.alloc(take - 4, 0x78)));
    extra -= take;
  }
  return Buffer.concat([soi, ...comments, body]);
}

function text(size: number | undefined): Buffer | undefined {
  const bare = Buffer.from('fhir-conformance test document\n', 'utf8');
  if (size === undefined) return bare;
  if (size < bare.length) return undefined;
  return Buffer.concat([bare, Buffer.alloc(size - bare.length, 0x2e)]);
}

const MAKERS: Record<DocumentType, (size: number | undefined) => Buffer | undefined> = {
  'application/pdf': pdf,
  'image/png': png,
  'image/jpeg': jpeg,
  'text/plain': text,
};

/** A valid document of the type; of exactly `size` bytes when given (undefined when none can be that size). */
export function documentOf(type: DocumentType, size?: number): Buffer | undefined {
  return MAKERS[type](size);
}

/** The smallest valid document of the type. */
export function smallDocument(type: DocumentType): Buffer {
  return MAKERS[type](undefined)!;
}

/** Bytes that are not a document of the type: plain text for the binary formats, invalid UTF-8 for text. */
export function notOf(type: DocumentType): Buffer {
  return type === 'text/plain'
    ? Buffer.from([0x48, 0x69, 0xff, 0xfe, 0xc0, 0x00, 0x0a])
    : Buffer.from('This is plain text, not the declared document type.\n', 'utf8');
}
