/**
 * Structural checks of write bodies shared by the resource handlers. Structural
 * problems (not an object, wrong resourceType, missing required field, malformed
 * reference) are 400 HPB-00101; the handlers raise semantic problems themselves
 * with `modes.validationStatus`.
 */
import { invalid } from './errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

export type Body = Record<string, unknown>;

/**
 * The body as an object of the expected resourceType. `lenient` (planted faults only)
 * lets a resourceType value through that the rule would refuse.
 */
export function requireResource(body: unknown, resourceType: string, lenient?: (value: unknown) => boolean): Body {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('Body must be a JSON object');
  const resource = body as Body;
  if (resource.resourceType !== resourceType && !lenient?.(resource.resourceType)) {
    throw invalid(`resourceType must be ${resourceType} (got ${JSON.stringify(resource.resourceType ?? null)})`);
  }
  return resource;
}

/** Body `id`, when present, must equal the id of the URL (update). */
export function requireSameId(resource: Body, id: string): void {
  if (resource.id !== undefined && resource.id !== id) throw invalid(`Body id ${JSON.stringify(resource.id)} does not match the URL id ${id}`);
}

export function requireField(resource: Body, field: string): unknown {
  const value = resource[field];
  if (value === undefined || value === null) throw invalid(`${field} is required`);
  return value;
}

/** Id of a `{ reference: "<Type>/<uuid>" }` object; 400 when malformed. */
export function referenceId(value: unknown, type: string, field: string): string {
  const reference = typeof value === 'object' && value !== null ? (value as { reference?: unknown }).reference : undefined;
  const match = typeof reference === 'string' ? /^([A-Za-z]+)\/([^/]+)$/.exec(reference) : null;
  if (!match || match[1] !== type || !isUuid(match[2]!)) throw invalid(`${field}.reference must be ${type}/<uuid>`);
  return match[2]!.toLowerCase();
}
