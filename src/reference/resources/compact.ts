/** A shallow copy without the keys whose value is undefined or an empty array (FHIR forbids empty arrays). */
export function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0))) as T;
}
