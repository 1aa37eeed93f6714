/**
 * Redacted evidence of an exchange: body excerpts and the reproducing curl command.
 * Nothing built here contains a secret (see src/redact.ts).
 */
import { isUtf8 } from 'node:buffer';
import { jsonTextMayHoldSecret, redactForm, redactJson, redactedPrefix } from '../redact.js';
import type { PartedText } from './json-body.js';

/** Bodies kept in evidence are cut at this many characters. */
export const EVIDENCE_BODY_CAP = 64 * 1024;
/** JSON texts up to this many characters are scanned whole for secrets before their value is walked. */
const SCANNED_MAX = 1024 * 1024;

export interface Excerpt {
  body: string;
  truncated: boolean;
  /** The body is not text; `body` is a placeholder. */
  binary?: boolean;
}

/**
 * A redacted, capped excerpt of a body. `json` is the parsed body when it parses;
 * JSON secret fields (and `secretFields`) are redacted by name, form bodies by field.
 */
export function bodyExcerpt(
  text: string | PartedText,
  opts: { json?: unknown; form?: boolean; secretFields?: readonly string[]; alreadyTruncated?: boolean },
): Excerpt {
  let redacted: string;
  if (opts.form) {
    redacted = redactForm(text.toString(), opts.secretFields);
  } else if (opts.json !== undefined) {
    // Most bodies hold nothing to redact, which their text shows without walking the parsed value (a
    // page of a search longer than the cap too: scanning its text costs about a quarter of the walk). A
    // document of tens of MiB is walked instead: the walk reads only the head of each long string.
    if (typeof text === 'string' && text.length <= SCANNED_MAX && !jsonTextMayHoldSecret(text, opts.secretFields)) {
      const cut = text.length > EVIDENCE_BODY_CAP;
      return { body: cut ? text.slice(0, EVIDENCE_BODY_CAP) : text, truncated: cut || !!opts.alreadyTruncated };
    }
    const clean = redactJson(opts.json, opts.secretFields, { keep: EVIDENCE_BODY_CAP });
    if (clean === opts.json) return prefixExcerpt(text, opts.alreadyTruncated);
    redacted = JSON.stringify(clean);
  } else {
    return prefixExcerpt(text, opts.alreadyTruncated);
  }
  const cut = redacted.length > EVIDENCE_BODY_CAP;
  return { body: cut ? redacted.slice(0, EVIDENCE_BODY_CAP) : redacted, truncated: cut || !!opts.alreadyTruncated };
}

/** The redacted text cut at the cap, redacting only the head of a long text (`redactedPrefix`). */
function prefixExcerpt(text: string | PartedText, alreadyTruncated: boolean | undefined): Excerpt {
  const { text: body, cut } = redactedPrefix(text, EVIDENCE_BODY_CAP);
  return { body, truncated: cut || !!alreadyTruncated };
}

/** Decodes a body as UTF-8; `binary` when it is not valid UTF-8 (a cut trailing character is tolerated). */
export function decodeBody(buf: Buffer): { text: string; binary: boolean } {
  // Valid UTF-8 (most bodies): decoded as the fatal decoder would, its leading BOM dropped, without
  // making a decoder per body.
  if (isUtf8(buf)) {
    const text = buf.toString('utf8');
    return { text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, binary: false };
  }
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(buf, { stream: true }), binary: false };
  } catch {
    return { text: buf.toString('utf8'), binary: true };
  }
}

/**
 * Whether `decodeBody` would read the bytes as text (valid UTF-8, an incomplete last character
 * tolerated), without decoding them: a binary document of tens of MiB is not copied into a string.
 */
export function isText(buf: Buffer): boolean {
  if (isUtf8(buf)) return true;
  // An incomplete last character: a lead byte needing more bytes than follow it, then continuation bytes.
  for (let k = 1; k <= 3 && k < buf.length; k++) {
    const lead = buf[buf.length - k]!;
    if (lead >= 0x80 && lead < 0xc0) continue;
    const needs = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 ? 2 : 0;
    return needs > k && lead <= 0xf4 && isUtf8(buf.subarray(0, buf.length - k));
  }
  return false;
}

/** Evidence placeholder for a body that is not text. */
export function binaryExcerpt(bytes: number): Excerpt {
  return { body: `[binary body: ${bytes} bytes]`, truncated: true, binary: true };
}

/** Parses a body as JSON (any content type); undefined when it does not parse. */
export function parseJson(text: string): unknown {
  // Found without copying the body (trim() would).
  if (!/\S/.test(text)) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Single-quotes a value for a POSIX shell. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * A curl command reproducing the request. Headers must already be redacted; a
 * bearer token appears as `$TOKEN` inside double quotes so the shell expands it.
 */
export function curlCommand(req: { method: string; url: string; headers: Record<string, string>; body?: Excerpt }): string {
  const parts = ['curl', '-sS', '-i', '-X', req.method, shellQuote(req.url)];
  for (const [name, value] of Object.entries(req.headers)) {
    if (name === 'content-length' || name === 'host') continue;
    if (name === 'authorization' && /^[A-Za-z]+ \$TOKEN$/.test(value)) parts.push('-H', `"${name}: ${value}"`);
    else parts.push('-H', shellQuote(`${name}: ${value}`));
  }
  if (req.body?.binary) return `${parts.join(' ')} --data-binary @body.bin  # binary request body not recorded`;
  if (req.body !== undefined) parts.push('--data-binary', shellQuote(req.body.body));
  const cmd = parts.join(' ');
  return req.body?.truncated ? `${cmd}  # request body truncated in evidence` : cmd;
}
