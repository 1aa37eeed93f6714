/**
 * Helpers of the Encounter checks: scopes, codes and what they compare. Reads, searches,
 * creates and updates are the resource client (src/service/resources.ts); the body is
 * src/service/bodies.ts (encounterBody).
 */
import { ENCOUNTER, isObject, type Json } from '../../src/service/index.js';

export const area = 'encounter';
/** The scopes of reads and searches, and of writes. */
export const RS = ENCOUNTER.read;
export const CRU = ENCOUNTER.write;
export const STATUSES = ['planned', 'in-progress', 'finished', 'cancelled'];
export const LOINC = 'http://loinc.org';
export const DIAGNOSTIC_IMPRESSION_CODE = '51848-0';
/** ISO 8601 date-time (Conventions: "Timestamps are ISO 8601 date-time strings"). */
export const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** The body to PUT back: the resource as read, without server-managed meta. */
export function writable(resource: Json): Json {
  const { meta: _meta, ...rest } = resource;
  return structuredClone(rest);
}

/** Contained resources and diagnosis items of an Encounter. */
export function containedOf(e: Json): Json[] {
  return Array.isArray(e.contained) ? e.contained.filter(isObject) : [];
}

export function diagnosesOf(e: Json): Json[] {
  return Array.isArray(e.diagnosis) ? e.diagnosis.filter(isObject) : [];
}

/** A contained id without the `#` some servers write (both spellings are accepted). */
export function localId(id: unknown): string {
  return typeof id === 'string' ? id.replace(/^#/, '') : '';
}
