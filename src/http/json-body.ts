/**
 * A JSON request body sent in parts. A body holding a document of tens of MiB (base64 in
 * `attachment.data`) would otherwise be copied into one JSON text and again into bytes on every
 * request; here the long strings go out as their own bytes, made once per string, between the
 * bytes of the JSON text around them. What is sent is exactly `JSON.stringify(value)`.
 */
import { randomBytes } from 'node:crypto';

/** Strings from this length up are sent as their own part. */
export const LONG_STRING_CHARS = 1024 * 1024;
/** Characters JSON.stringify writes as they are (no escape), in a string of one-byte characters. */
const VERBATIM = /^[A-Za-z0-9+/=._-]*$/;

/** The text of a body in parts, read as a string would be (length, slice, toString). */
export interface PartedText {
  readonly length: number;
  slice(start?: number, end?: number): string;
  toString(): string;
}

export interface JsonParts {
  /** The bytes to send, in order; their total is `bytes`. */
  chunks: Buffer[];
  bytes: number;
  /** The JSON text, for evidence: its head is read without joining the parts. */
  text: PartedText;
}

/**
 * Bytes of the last long string sent: the size checks send the same document on create and update
 * (and every run of a process the same one). A string equal to it needs no VERBATIM scan either
 * (comparing equal texts is a memory compare, about a third of the pattern's time on 1.4 MB).
 */
let kept: { text: string; bytes: Buffer } | undefined;
function bytesOf(text: string): Buffer {
  if (kept?.text !== text) kept = { text, bytes: Buffer.from(text, 'latin1') };
  return kept.bytes;
}

/** `JSON.stringify(value)` as a string, or in parts when it holds a long string that needs no escaping. */
export function jsonBody(value: unknown): string | JsonParts {
  // Made at the first long string: most bodies hold none (a random nonce per body cost a run about 15 ms).
  let marker = '';
  const long: string[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v !== 'string' || v.length < LONG_STRING_CHARS || !(kept?.text === v || VERBATIM.test(v))) return v;
    if (marker === '') marker = `\u0000part-${randomBytes(6).toString('hex')}-`;
    long.push(v);
    return `${marker}${long.length - 1}`;
  });
  if (long.length === 0) return text;
  // Each long string became "\u0000part-<nonce>-<i>" in the text: the pieces alternate between
  // the text around them (quotes included) and the long strings themselves.
  const escaped = JSON.stringify(marker)
    .slice(1, -1)
    .replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
  const re = new RegExp(`"${escaped}(\\d+)"`, 'g');
  const pieces: string[] = [];
  let at = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    pieces.push(text.slice(at, m.index + 1), long[Number(m[1])]!);
    at = m.index + m[0].length - 1;
  }
  pieces.push(text.slice(at));
  const chunks = pieces.map((piece, i) => (i % 2 === 0 ? Buffer.from(piece, 'utf8') : bytesOf(piece)));
  return { chunks, bytes: chunks.reduce((n, c) => n + c.length, 0), text: partedText(pieces) };
}

/** The joined text of `pieces`, its head read without joining them all. */
function partedText(pieces: string[]): PartedText {
  const length = pieces.reduce((n, p) => n + p.length, 0);
  let whole: string | undefined;
  const joined = () => (whole ??= pieces.join(''));
  return {
    length,
    toString: joined,
    slice(start = 0, end = length) {
      if (start !== 0 || whole !== undefined) return joined().slice(start, end);
      let out = '';
      for (const p of pieces) {
        if (out.length >= end) break;
        out += p.slice(0, end - out.length);
      }
      return out;
    },
  };
}
