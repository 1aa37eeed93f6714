/** Reading a response body as a stream with a byte cap (a huge body is never buffered). */
import type { Readable } from 'node:stream';

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
