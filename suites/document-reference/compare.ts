/**
 * Comparing what was written with what is read back, by meaning (docs/comparison.md):
 * the server-owned content of src/service/compare.ts is no difference (`meta` and a
 * narrative `text` of a resource, a reference `display` one rendering adds, a Bundle's
 * `timestamp`, an entry's `search`); date-times compare as instants (a server may spell
 * `2025-03-01T10:00:00Z` as `+00:00` or with milliseconds); inline bytes may come back
 * stored apart (`attachment.url`, with the size and hash of the bytes sent when it
 * states them); everything else compares exactly, arrays in order.
 */
import { createHash } from 'node:crypto';
import { isReferenceDisplay, sameScalar, serverOwnedKey } from '../../src/service/index.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Where `got` does not carry what `sent` holds: every member of an object sent is
 * present and the same (a server may add members); arrays have the same length and
 * items. One `path: sent -> got` line per difference.
 */
export function missingFrom(sent: unknown, got: unknown, path = ''): string[] {
  if (Array.isArray(sent)) {
    if (!Array.isArray(got)) return [`${path || '(root)'}: ${short(sent)} -> ${short(got)}`];
    if (sent.length !== got.length) return [`${path}: ${sent.length} items -> ${got.length} items`];
    return sent.flatMap((item, i) => missingFrom(item, got[i], `${path}[${i}]`));
  }
  if (isObject(sent)) {
    if (!isObject(got)) return [`${path || '(root)'}: ${short(sent)} -> ${short(got)}`];
    // DocumentReference fields are not shown: bytes sent inline may come back stored apart, as a `url`.
    if (typeof sent.data === 'string' && got.data === undefined && typeof got.url === 'string') {
      const { data, ...rest } = sent;
      return [...missingFrom(rest, got, path), ...storedApart(data, got, path)];
    }
    return Object.entries(sent)
      .filter(([k, v]) => !serverOwnedKey(k, v, sent, path))
      .flatMap(([k, v]) => missingFrom(v, got[k], path ? `${path}.${k}` : k));
  }
  return sameScalar(sent, got) ? [] : [`${path || '(root)'}: ${short(sent)} -> ${short(got)}`];
}

/**
 * An attachment whose inline `data` came back as a `url`: the `size` and SHA-1 `hash` it states,
 * when it states them, must be those of the bytes sent.
 */
function storedApart(data: string, got: Json, path: string): string[] {
  const bytes = Buffer.from(data, 'base64');
  const at = (k: string) => (path ? `${path}.${k}` : k);
  const out: string[] = [];
  if (got.size !== undefined && Number(got.size) !== bytes.length) out.push(`${at('size')}: ${bytes.length} bytes sent -> ${short(got.size)}`);
  const sha1 = createHash('sha1').update(bytes).digest('base64');
  if (got.hash !== undefined && got.hash !== sha1) out.push(`${at('hash')}: SHA-1 ${sha1} of the bytes sent -> ${short(got.hash)}`);
  return out;
}

/** Every difference between two renderings of a resource (members on either side), server-owned content and the members named aside. */
export function differences(a: Json, b: Json, ignore: readonly string[] = []): string[] {
  const strip = (r: Json) => Object.fromEntries(Object.entries(r).filter(([k]) => !ignore.includes(k)));
  return diff(strip(a), strip(b), '');
}

function diff(a: unknown, b: unknown, path: string): string[] {
  const here = () => [`${path || '(root)'}: ${short(a)} -> ${short(b)}`];
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b)) return here();
    if (a.length !== b.length) return [`${path}: ${a.length} items -> ${b.length} items`];
    return a.flatMap((item, i) => diff(item, b[i], `${path}[${i}]`));
  }
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b)) return here();
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter(
      (k) =>
        !serverOwnedKey(k, a[k], a, path) &&
        !serverOwnedKey(k, b[k], b, path) &&
        // A reference display that only one rendering carries: the server's rendering of the target's name.
        !((a[k] === undefined || b[k] === undefined) && (isReferenceDisplay(k, a) || isReferenceDisplay(k, b))),
    );
    return keys.flatMap((k) => diff(a[k], b[k], path ? `${path}.${k}` : k));
  }
  return sameScalar(a, b) ? [] : here();
}

function short(v: unknown): string {
  const s = v === undefined ? 'absent' : JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}
