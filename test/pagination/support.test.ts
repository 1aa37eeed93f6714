/** The pagination suite's helpers: ordering verdicts and cursor handling. */
import { describe, expect, it } from 'vitest';
import {
  checkCreationOrder,
  checkOrdering,
  cursorOf,
  firstOrderDifference,
  refersToPatient,
  smallPageSize,
  walkPageSize,
  tamper,
  withCursor,
  type Entry,
} from '../../suites/pagination/support.js';

const FIELDS = ['authoredOn', 'meta.lastUpdated'];
const entry = (key: string, authoredOn?: string, lastUpdated?: string): Entry => ({
  key,
  resource: { id: key, ...(authoredOn ? { authoredOn } : {}), ...(lastUpdated ? { meta: { lastUpdated } } : {}) },
});

describe('checkOrdering', () => {
  const a = entry('aaaa', '2025-01-01T00:00:00Z');
  const b = entry('bbbb', '2025-01-01T00:00:00Z');
  const c = entry('cccc', '2025-01-02T00:00:00Z');

  it('accepts time ascending with ids ascending on a tie', () => {
    expect(checkOrdering([a, b, c], FIELDS).fits).toEqual({ time: 'ascending', id: 'ascending' });
  });

  it('accepts time ascending with ids descending on a tie', () => {
    expect(checkOrdering([b, a, c], FIELDS).fits).toEqual({ time: 'ascending', id: 'descending' });
  });

  it('accepts time descending', () => {
    expect(checkOrdering([c, a, b], FIELDS).fits).toEqual({ time: 'descending', id: 'ascending' });
  });

  it('compares instants, not strings', () => {
    const early = entry('dddd', '2025-01-01T10:00:00+02:00');
    const late = entry('eeee', '2025-01-01T09:00:00Z');
    expect(checkOrdering([early, late], FIELDS).fits?.time).toBe('ascending');
  });

  it('accepts meta.lastUpdated where the own date is absent or out of step', () => {
    const fixture = entry('ffff', '2025-01-05T00:00:00Z', '2025-01-05T00:00:00Z');
    const createdLater = entry('0000', undefined, '2025-02-01T00:00:00Z');
    const createdWithOldDate = entry('1111', '2024-01-01T00:00:00Z', '2025-03-01T00:00:00Z');
    expect(checkOrdering([a, c, fixture, createdLater, createdWithOldDate], FIELDS).fits?.time).toBe('ascending');
  });

  it('names the first pair out of order under the closest directions', () => {
    const d = entry('dddd', '2025-01-03T00:00:00Z');
    const late = entry('ffff', '2025-01-02T00:00:00Z');
    const e = entry('eeee', '2025-01-04T00:00:00Z');
    expect(checkOrdering([a, c, d, late, e], FIELDS)).toEqual({ offending: { index: 3, a: 'dddd', b: 'ffff' } });
  });

  it('refuses entries without any time field', () => {
    expect(checkOrdering([entry('aaaa'), entry('bbbb')], FIELDS).offending).toBeDefined();
  });

  it('refuses the same id twice in a row', () => {
    expect(checkOrdering([a, a], FIELDS).offending).toEqual({ index: 1, a: 'aaaa', b: 'aaaa' });
  });
});

describe('cursor handling', () => {
  const next = 'https://t.example/fhir/R4/MedicationRequest?patient=p1&_count=7&_cursor=abcdef.XYZ';

  it('reads the _cursor of a next link', () => {
    expect(cursorOf(next)).toBe('abcdef.XYZ');
    expect(cursorOf('/fhir/R4/Encounter?patient=p1')).toBeUndefined();
  });

  it('replaces only the _cursor, keeping every other parameter', () => {
    const u = new URL(withCursor(next, 'other'));
    expect([...u.searchParams.entries()]).toEqual([
      ['patient', 'p1'],
      ['_count', '7'],
      ['_cursor', 'other'],
    ]);
    expect(u.origin + u.pathname).toBe('https://t.example/fhir/R4/MedicationRequest');
    expect(withCursor('/fhir/R4/Encounter?patient=p1', 'c')).toBe('/fhir/R4/Encounter?patient=p1&_cursor=c');
  });

  it('tampers with a cursor: same length, different value', () => {
    for (const cursor of ['abcdef.XYZ', 'AAAA', 'x']) {
      const t = tamper(cursor);
      expect(t).toHaveLength(cursor.length);
      expect(t).not.toBe(cursor);
    }
  });
});

describe('small helpers', () => {
  it('spreads results over about three pages', () => {
    expect([smallPageSize(2), smallPageSize(30), smallPageSize(160), smallPageSize(1000)]).toEqual([1, 10, 54, 100]);
    expect([walkPageSize(2), walkPageSize(30), walkPageSize(160), walkPageSize(1000)]).toEqual([1, 6, 32, 100]);
  });

  it('recognises relative and absolute patient references', () => {
    expect(refersToPatient({ subject: { reference: 'Patient/p1' } }, 'p1')).toBe(true);
    expect(refersToPatient({ subject: { reference: 'https://t.example/fhir/R4/Patient/p1' } }, 'p1')).toBe(true);
    expect(refersToPatient({ subject: { reference: 'Patient/p12' } }, 'p1')).toBe(false);
    expect(refersToPatient({}, 'p1')).toBe(false);
  });
});

describe('firstOrderDifference', () => {
  it('compares the relative order of the keys both walks hold', () => {
    expect(firstOrderDifference(['a', 'b', 'c'], ['a', 'x', 'b', 'c'])).toBeUndefined();
    expect(firstOrderDifference(['a', 'b', 'c', 'd'], ['a', 'c', 'b', 'd'])).toEqual({ index: 1, expected: ['b', 'c', 'd'], actual: ['c', 'b', 'd'] });
  });
});

describe('checkCreationOrder', () => {
  const made = (id: string, sentAt: number) => ({ id, sentAt, answeredAt: sentAt + 50 });
  const older = new Set(['p1', 'p2', 'p3']);

  it('accepts the created records after every older record (ascending) or before (descending)', () => {
    const created = [made('r1', 0), made('r2', 100), made('r3', 200)];
    expect(checkCreationOrder(['p2', 'p1', 'p3', 'r1', 'r2', 'r3'], created, older).fits).toBe('ascending');
    expect(checkCreationOrder(['r3', 'r2', 'r1', 'p3', 'p1', 'p2'], created, older).fits).toBe('descending');
  });

  it('lets records created within a second of each other come in either order (a coarse clock ties them)', () => {
    const created = [made('r1', 0), made('r2', 100)];
    expect(checkCreationOrder(['p1', 'r2', 'r1'], created, older).fits).toBe('ascending');
  });

  it('holds records created a second apart to their creation order', () => {
    const created = [made('r1', 0), made('r2', 2000)];
    expect(checkCreationOrder(['p1', 'r2', 'r1'], created, older).problem).toMatch(/r2, created after r1/);
  });

  it('fails a created record among older ones (an order by id alone)', () => {
    const created = [made('r1', 0)];
    expect(checkCreationOrder(['p1', 'r1', 'p2'], created, older).problem).toMatch(/existed before it/);
  });

  it('leaves records that are neither created nor older unconstrained', () => {
    const created = [made('r1', 0)];
    expect(checkCreationOrder(['p1', 'r1', 'other'], created, older).fits).toBe('ascending');
  });
});
