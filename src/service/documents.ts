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
  const header = Buffer.from('%PDF-1.4\n%\u00e2\u00e3\u00cf\u00d3\n', 'latin1');
  const body = Buffer.from(PDF_BODY, 'latin1');
  const bare = header.length + body.length;
  if (size === undefined || size === bare) return Buffer.concat([header, body]);
  const extra = size - bare;
  if (extra < 2) return undefined;
  const out = Buffer.allocUnsafe(size);
  header.copy(out, 0);
  fill(out, header.length, extra);
  body.copy(out, header.length + extra);
  return out;
}

const FILL_LINE = 1024;
/** A full comment line of FILL_LINE bytes: `%`, `x`s, newline. */
const FULL_LINE = Buffer.from(`%${'x'.repeat(FILL_LINE - 2)}\n`, 'latin1');

/**
 * PDF comment lines (`%...\n`, each at least 2 bytes) totalling exactly `n` >= 2 bytes, written
 * into `out` at `at`: lines of FILL_LINE bytes, the last two shortened so none is under 2 bytes.
 */
function fill(out: Buffer, at: number, n: number): void {
  // Whole lines while at least two more lines' worth follow (a native pattern fill), then line by line.
  const whole = Math.max(0, Math.floor((n - 2 * FILL_LINE) / FILL_LINE));
  if (whole > 0) out.fill(FULL_LINE, at, at + whole * FILL_LINE);
  let left = n - whole * FILL_LINE;
  let pos = at + whole * FILL_LINE;
  while (left > 0) {
    const take = left >= FILL_LINE + 2 || left <= FILL_LINE ? Math.min(left, FILL_LINE) : left - 2;
    if (take === FILL_LINE) FULL_LINE.copy(out, pos);
    else {
      out[pos] = 0x25;
      out.fill(0x78, pos + 1, pos + take - 1);
      out[pos + take - 1] = 0x0a;
    }
    pos += take;
    left -= take;
  }
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

/** Documents from this size up are kept once made: the size checks send the same one each way. */
const KEPT_FROM_BYTES = 1024 * 1024;
let kept: { type: DocumentType; size: number; document: Buffer | undefined } | undefined;

/**
 * A valid document of the type; of exactly `size` bytes when given (undefined when none can be that
 * size). The last large one is kept and given again for the same type and size: callers must not
 * change it.
 */
export function documentOf(type: DocumentType, size?: number): Buffer | undefined {
  if (size === undefined || size < KEPT_FROM_BYTES) return MAKERS[type](size);
  if (kept?.type !== type || kept.size !== size) kept = { type, size, document: MAKERS[type](size) };
  return kept.document;
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
