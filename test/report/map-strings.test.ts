import { describe, expect, it } from 'vitest';
import { mapStrings } from '../../src/report/map-strings.js';

describe('mapStrings', () => {
  const doc = () => ({ a: { b: ['x', 'keep', { c: 'x' }], d: 1, e: null }, f: { g: 'keep' } });

  it('gives back the same references where nothing changed', () => {
    const value = doc();
    expect(mapStrings(value, (s) => s)).toBe(value);
  });

  it('copies only along the way to a changed string, and leaves the input as it was', () => {
    const value = doc();
    const out = mapStrings(value, (s) => (s === 'x' ? 'y' : s));
    expect(out).toEqual({ a: { b: ['y', 'keep', { c: 'y' }], d: 1, e: null }, f: { g: 'keep' } });
    expect(value).toEqual(doc());
    expect(out.f).toBe(value.f);
    expect(out.a).not.toBe(value.a);
    expect(out.a.b).not.toBe(value.a.b);
  });
});
