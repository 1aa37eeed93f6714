/**
 * Comparison of resources by meaning for the round-trip checks: what a client
 * wrote against what it reads back, one read against another, a search entry
 * against the read of the same id. The rules are written down in
 * docs/comparison.md; each has a test in test/service/compare.test.ts.
 *
 * What a conforming server owns or derives is not a difference:
 * - `meta` of any resource (versionId, lastUpdated, tags, profiles) and its
 *   narrative `text` (an object: FHIR lets a server regenerate it on every write);
 * - a date-time written at another UTC offset or precision that is the same
 *   instant (`2026-05-01T10:15:00-06:00` reads back as `2026-05-01T16:15:00.000Z`);
 * - UUIDs in another letter case (ids and `<Type>/<uuid>` references);
 * - keys the server adds (a `display` on a reference or coding, a `system` on a
 *   quantity): a written value must be in what is read, not the reverse; between
 *   two renderings of one version, a reference's `display` that only one carries;
 * - the order of array items (participants, notes, codings);
 * - a `display` text it replaced by its own (terminology displays, patient and
 *   practitioner names): reported apart as a `display` difference, which the
 *   checks record as an observation unless the spec makes the display owned;
 * - a Bundle's `timestamp` and an entry's `search` (mode, score);
 * - the layout of the body (pretty-printed or compact JSON): only parsed JSON is compared.
 * What the client sent must come back with the same meaning: a dropped or changed
 * field, a lost array item, another instant is a difference.
 */
import { isObject } from './expect.js';

export interface Difference {
  /** JSON path of the value, e.g. `dosageInstruction[0].timing`. */
  path: string;
  expected: unknown;
  actual: unknown;
}

export interface Comparison {
  /** Values that differ (or are missing): each one a difference the checks fail on. */
  differences: Difference[];
  /** `display` texts that differ: legitimate normalization unless the caller says otherwise. */
  displays: Difference[];
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const REFERENCE = /^[A-Z][A-Za-z]+\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Two scalars that mean the same thing. */
export function sameScalar(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'string' || typeof b !== 'string') return false;
  if (DATE_TIME.test(a) && DATE_TIME.test(b)) {
    const ta = Date.parse(a);
    const tb = Date.parse(b);
    return !Number.isNaN(ta) && ta === tb;
  }
  if ((UUID.test(a) && UUID.test(b)) || (REFERENCE.test(a) && REFERENCE.test(b))) return a.toLowerCase() === b.toLowerCase();
  return false;
}

const BUNDLE_ENTRY = /(^|\.)entry\[\d+\]$/;

/**
 * A key of `node` (at `path`) whose value the server owns: `meta` and a narrative `text` (an
 * object) of any resource, contained ones included; a Bundle's `timestamp`; a Bundle entry's `search`.
 */
export function serverOwnedKey(key: string, value: unknown, node: Record<string, unknown>, path: string): boolean {
  if (typeof node.resourceType === 'string') {
    if (key === 'meta' || (key === 'text' && isObject(value))) return true;
    if (key === 'timestamp' && node.resourceType === 'Bundle') return true;
  }
  return key === 'search' && BUNDLE_ENTRY.test(path) && 'resource' in node;
}

/** A reference's `display` (a node with a `reference`): the server's rendering of the target's name. */
export function isReferenceDisplay(key: string, node: Record<string, unknown>): boolean {
  return key === 'display' && typeof node.reference === 'string';
}

interface Walk {
  differences: Difference[];
  displays: Difference[];
  /** `display` keys whose difference is a failure (the spec owns them). */
  ownedDisplay: (path: string) => boolean;
  /** Two renderings of one version: a reference `display` that only one of them carries is no difference. */
  displayEitherSide?: boolean;
}

/** Whether `written` is contained in `read`, recording every mismatch into `w`. */
function contains(written: unknown, read: unknown, path: string, w: Walk): void {
  if (written === undefined) return;
  if (Array.isArray(written)) {
    if (!Array.isArray(read)) {
      w.differences.push({ path, expected: written, actual: read });
      return;
    }
    containsArray(written, read, path, w);
    return;
  }
  if (isObject(written)) {
    if (!isObject(read)) {
      w.differences.push({ path, expected: written, actual: read });
      return;
    }
    for (const [key, value] of Object.entries(written)) {
      if (serverOwnedKey(key, value, written, path)) continue;
      if (w.displayEitherSide && read[key] === undefined && isReferenceDisplay(key, written)) continue;
      const at = path ? `${path}.${key}` : key;
      if (key === 'display' && typeof value === 'string' && typeof read[key] === 'string' && value !== read[key] && !w.ownedDisplay(at)) {
        w.displays.push({ path: at, expected: value, actual: read[key] });
        continue;
      }
      contains(value, read[key], at, w);
    }
    return;
  }
  if (!sameScalar(written, read)) w.differences.push({ path, expected: written, actual: read });
}

/** Arrays: same length, and each written item contained in a distinct read item (any order). */
function containsArray(written: unknown[], read: unknown[], path: string, w: Walk): void {
  if (written.length !== read.length) {
    w.differences.push({ path, expected: written, actual: read });
    return;
  }
  const free = read.map((_v, i) => i);
  const unmatched: number[] = [];
  // Exact (difference-free) matches first, so a near miss does not take another item's partner.
  written.forEach((item, i) => {
    const at = free.findIndex((j) => differencesOf(item, read[j], `${path}[${i}]`, w).length === 0);
    if (at >= 0) free.splice(at, 1);
    else unmatched.push(i);
  });
  for (const i of unmatched) {
    // Report against the item in the same position when it is still free, else the first free one.
    const j = free.includes(i) ? i : free[0]!;
    free.splice(free.indexOf(j), 1);
    contains(written[i], read[j], `${path}[${i}]`, w);
  }
  // Display-only differences of matched items are still worth recording.
  if (unmatched.length === 0) for (const [i, item] of written.entries()) collectDisplays(item, read, `${path}[${i}]`, w);
}

function differencesOf(written: unknown, read: unknown, path: string, like: Walk): Difference[] {
  const w: Walk = { differences: [], displays: [], ownedDisplay: like.ownedDisplay, displayEitherSide: like.displayEitherSide };
  contains(written, read, path, w);
  return w.differences;
}

/** Display differences of an item matched somewhere in `candidates` (best effort, for the record). */
function collectDisplays(item: unknown, candidates: unknown[], path: string, w: Walk): void {
  for (const c of candidates) {
    const probe: Walk = { differences: [], displays: [], ownedDisplay: w.ownedDisplay, displayEitherSide: w.displayEitherSide };
    contains(item, c, path, probe);
    if (probe.differences.length === 0) {
      w.displays.push(...probe.displays);
      return;
    }
  }
}

export interface CompareOptions {
  /** Top-level fields left out of the comparison (e.g. `id`, `intent`). */
  ignore?: readonly string[];
  /** Paths whose `display` is owned by the spec: a changed one is a difference, not a normalization. */
  ownedDisplay?: (path: string) => boolean;
  /** A reference `display` present on one side only is no difference (two renderings of one version; `sameResource` sets it). */
  displayEitherSide?: boolean;
}

function without(resource: Record<string, unknown>, ignore: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(resource).filter(([k]) => !ignore.includes(k)));
}

/** What was written is in what was read (the server may add, never lose or change). */
export function writtenIsRead(written: Record<string, unknown>, read: Record<string, unknown>, opts: CompareOptions = {}): Comparison {
  const w: Walk = { differences: [], displays: [], ownedDisplay: opts.ownedDisplay ?? (() => false), displayEitherSide: opts.displayEitherSide };
  contains(without(written, opts.ignore ?? []), without(read, opts.ignore ?? []), '', w);
  return { differences: w.differences, displays: w.displays };
}

/** Two renderings of one resource are the same (each contained in the other), server-owned content aside. */
export function sameResource(a: Record<string, unknown>, b: Record<string, unknown>, opts: CompareOptions = {}): Comparison {
  const ignore = opts.ignore ?? [];
  const ownedDisplay = opts.ownedDisplay ?? (() => true);
  const one = writtenIsRead(a, b, { ignore, ownedDisplay, displayEitherSide: true });
  const other = writtenIsRead(b, a, { ignore, ownedDisplay, displayEitherSide: true });
  // A key only `b` has shows up as a difference of the second direction; swap its sides back.
  const seen = new Set(one.differences.map((d) => d.path));
  const extra = other.differences.filter((d) => !seen.has(d.path)).map((d) => ({ path: d.path, expected: d.actual, actual: d.expected }));
  return { differences: [...one.differences, ...extra], displays: [...one.displays] };
}

/** A short description of differences for a finding message. */
export function describeDifferences(differences: readonly Difference[], max = 3): string {
  const shown = differences.slice(0, max).map((d) => `${d.path || '(root)'}: expected ${brief(d.expected)}, got ${brief(d.actual)}`);
  return `${shown.join('; ')}${differences.length > max ? `; and ${differences.length - max} more` : ''}`;
}

function brief(v: unknown): string {
  const s = v === undefined ? 'nothing' : JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
