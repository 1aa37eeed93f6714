/**
 * Opaque paging cursors (spec "Pagination" rule 2, "Versioning" rule 5). Two
 * encodings, both opaque to clients:
 *  - 'base64': base64url JSON of the paging state plus an HMAC-SHA256 tag under a
 *    per-server random key, so any alteration is detected;
 *  - 'handle': a random id mapped to the state server-side (bounded map).
 * A cursor that does not decode, fails its tag, is unknown, or belongs to another
 * organization or another search is refused by the caller with 400 HPB-00101.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ReferenceModes } from '../types.js';

export interface CursorState {
  /** Organization of the search. */
  org: string;
  /** Fingerprint of the operation and its filter parameters. */
  search: string;
  /** Store sequence number at the first request (snapshot). */
  snapshot: number;
  /** Keyset position: ordering time (ms) and id of the last row returned. */
  afterTime: number;
  afterId: string;
}

export interface CursorCodec {
  encode(state: CursorState): string;
  /** The state, or undefined when the cursor is not one this server issued. */
  decode(cursor: string): CursorState | undefined;
}

const MAX_HANDLES = 10_000;
const TAG_LENGTH = 16;

export function createCursorCodec(encoding: ReferenceModes['cursorEncoding']): CursorCodec {
  return encoding === 'base64' ? signedCodec(randomBytes(32)) : handleCodec();
}

function signedCodec(key: Buffer): CursorCodec {
  const tagOf = (payload: string) => createHmac('sha256', key).update(payload).digest().subarray(0, TAG_LENGTH);
  return {
    encode(state) {
      const payload = Buffer.from(JSON.stringify(state)).toString('base64url');
      return `${payload}.${tagOf(payload).toString('base64url')}`;
    },
    decode(cursor) {
      const [payload, tag, ...rest] = cursor.split('.');
      if (!payload || !tag || rest.length > 0) return undefined;
      const given = Buffer.from(tag, 'base64url');
      if (given.length !== TAG_LENGTH || !timingSafeEqual(given, tagOf(payload))) return undefined;
      try {
        return asState(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
      } catch {
        return undefined;
      }
    },
  };
}

function handleCodec(): CursorCodec {
  const states = new Map<string, CursorState>();
  return {
    encode(state) {
      const handle = randomBytes(18).toString('base64url');
      states.set(handle, state);
      if (states.size > MAX_HANDLES) states.delete(states.keys().next().value!);
      return handle;
    },
    decode(cursor) {
      return states.get(cursor);
    },
  };
}

function asState(value: unknown): CursorState | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const ok =
    typeof v.org === 'string' && typeof v.search === 'string' && Number.isInteger(v.snapshot) && Number.isFinite(v.afterTime) && typeof v.afterId === 'string';
  return ok ? (v as unknown as CursorState) : undefined;
}
