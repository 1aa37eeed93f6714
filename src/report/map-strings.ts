/** Deep copy of a JSON-like value with every string value (not keys) passed through `fn`. */
export function mapStrings<T>(value: T, fn: (s: string) => string): T {
  return walk(value, fn) as T;
}

function walk(value: unknown, fn: (s: string) => string): unknown {
  if (typeof value === 'string') return fn(value);
  if (Array.isArray(value)) return value.map((v) => walk(v, fn));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = walk(v, fn);
    return out;
  }
  return value;
}

/** Visits every string value (not keys) of a JSON-like value. */
export function forEachString(value: unknown, fn: (s: string) => void): void {
  if (typeof value === 'string') fn(value);
  else if (Array.isArray(value)) for (const v of value) forEachString(v, fn);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) forEachString(v, fn);
}
