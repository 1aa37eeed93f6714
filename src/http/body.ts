/** Reading a response body as a stream with a byte cap (a huge body is never buffered). */
import { pipeline, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

/** Content codings the client accepts (sent as Accept-Encoding) and decodes. */
export const ACCEPT_ENCODING = 'gzip, deflate, br';

/**
 * The body decoded from its `Content-Encoding` (gzip, deflate, br; identity or none as is), so
 * the cap counts decoded bytes (a small compressed body cannot expand past it). An unknown
 * coding is left as sent.
 */
export function decodedStream(stream: Readable, contentEncoding: string | undefined): Readable {
  const codings = contentCodings(contentEncoding);
  let out = stream;
  // Codings are listed in the order they were applied: decode from the last.
  for (const coding of codings.reverse()) {
    const decoder =
      coding === 'gzip' || coding === 'x-gzip'
        ? createGunzip()
        : coding === 'deflate'
          ? createInflate()
          : coding === 'br'
            ? createBrotliDecompress()
            : undefined;
    if (!decoder) return out;
    out = pipeline(out, decoder, () => {
      // errors reach the reader through the decoder, which pipeline destroys with them
    });
  }
  return out;
}

/** The content codings applied to a body, in the order applied (identity left out). */
export function contentCodings(contentEncoding: string | undefined): string[] {
  return (contentEncoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
}

export interface CappedBody {
  buffer: Buffer;
  /** Bytes received (stops counting at the cap). */
  bytes: number;
  truncated: boolean;
}

/** A failure while reading the body; carries what was received before it. */
export class BodyReadError extends Error {
  constructor(
    readonly reason: unknown,
    readonly partial: CappedBody,
  ) {
    super('response body read failed');
    this.name = 'BodyReadError';
  }
}

/** A body received whole, as `readCapped` would read it: at most `cap` bytes, marked truncated when it had more. */
export function cappedBuffer(buf: Buffer, cap: number): CappedBody {
  return buf.length > cap ? { buffer: buf.subarray(0, cap), bytes: cap, truncated: true } : { buffer: buf, bytes: buf.length, truncated: false };
}

/** Reads at most `cap` bytes, then destroys the stream and marks the body truncated. */
export async function readCapped(stream: Readable, cap: number): Promise<CappedBody> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of stream) {
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      if (bytes + buf.length > cap) {
        chunks.push(buf.subarray(0, cap - bytes));
        bytes = cap;
        stream.destroy();
        return { buffer: Buffer.concat(chunks), bytes, truncated: true };
      }
      chunks.push(buf);
      bytes += buf.length;
    }
  } catch (e) {
    throw new BodyReadError(e, { buffer: Buffer.concat(chunks), bytes, truncated: false });
  }
  return { buffer: Buffer.concat(chunks), bytes, truncated: false };
}
