/** A shallow copy without the keys whose value is undefined or an empty array (FHIR forbids empty arrays). */
export function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0))) as T;
}

/**
 * A deep copy of JSON-shaped data (plain objects and arrays; anything else is structuredClone'd), so
 * an answer never shares objects with a stored row. About seven times faster than structuredClone on
 * a resource: every resource a search returns is copied.
 */
export function detached<T>(value: T): T {
  if (Array.isArray(value)) return value.map(detached) as T;
  if (value === null || typeof value !== 'object') return value;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) out[k] = detached((value as Record<string, unknown>)[k]);
  return out as T;
}
