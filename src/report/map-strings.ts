/**
 * A JSON-like value with every string value (not keys) passed through `fn`: the parts where `fn`
 * changed nothing are the same references (copied only along the way to a changed string), so
 * scrubbing a clean report allocates nothing. Callers treat the result as read-only.
 */
export function mapStrings<T>(value: T, fn: (s: string) => string): T {
  return walk(value, fn) as T;
}

function walk(value: unknown, fn: (s: string) => string): unknown {
  if (typeof value === 'string') return fn(value);
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = value[i];
      const w = walk(v, fn);
      if (w !== v) (out ??= value.slice())[i] = w;
    }
    return out ?? value;
  }
  if (value !== null && typeof value === 'object') {
    let out: Record<string, unknown> | undefined;
    for (const k in value) {
      if (!Object.hasOwn(value, k)) continue;
      const v = (value as Record<string, unknown>)[k];
      const w = walk(v, fn);
      if (w !== v) (out ??= { ...(value as Record<string, unknown>) })[k] = w;
    }
    return out ?? value;
  }
  return value;
}

/** Visits every string value (not keys) of a JSON-like value. */
export function forEachString(value: unknown, fn: (s: string) => void): void {
  if (typeof value === 'string') fn(value);
  else if (Array.isArray(value)) for (const v of value) forEachString(v, fn);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) forEachString(v, fn);
}
