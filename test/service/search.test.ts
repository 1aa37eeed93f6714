/** The search helpers the Encounter, DocumentReference and tenancy suites share, and the search-fault reader. */
import { describe, expect, it } from 'vitest';
import { codingMatchesToken, dateFilter, dayCompares, daysOf, referencedId, searchUrl, tokenOf } from '../../src/service/search.js';
import { searchQueryUnderFaults } from '../../src/reference/faults/encounter.js';
import { pdf } from '../../suites/document-reference/support.js';

describe('date readings', () => {
  it('reads an instant as its written day and its UTC day', () => {
    expect(daysOf('2025-02-03T09:00:00Z')).toEqual(['2025-02-03']);
    expect(daysOf('2025-02-03T23:30:00-06:00')).toEqual(['2025-02-03', '2025-02-04']);
    expect(daysOf(undefined)).toEqual([]);
    expect(daysOf('03/02/2025')).toEqual([]);
  });

  it('compares days with each prefix', () => {
    const d = '2025-02-03';
    expect(['2025-02-02', d, '2025-02-04'].map((x) => ['eq', 'ne', 'gt', 'ge', 'lt', 'le'].map((p) => dayCompares(x, p as 'eq', d)))).toEqual([
      [false, true, false, false, true, true],
      [true, false, false, true, false, true],
      [false, true, true, true, false, false],
    ]);
  });

  it('accepts a record when some reading matches, and requires it when every reading does', () => {
    const f = dateFilter('eq', '2025-02-04', (r) => r.date);
    const ambiguous = { date: '2025-02-03T23:30:00-06:00' };
    expect(f.matches(ambiguous)).toBe(true);
    expect(f.surely(ambiguous)).toBe(false);
    expect(f.surely({ date: '2025-02-04T10:00:00Z' })).toBe(true);
    expect(f.matches({})).toBe(false);
  });
});

describe('tokens and references', () => {
  it('matches a coding against code and system|code tokens', () => {
    const coding = { system: 'http://loinc.org', code: '11488-4' };
    expect(tokenOf(coding)).toBe('http://loinc.org|11488-4');
    expect(codingMatchesToken(coding, '11488-4')).toBe(true);
    expect(codingMatchesToken(coding, 'http://loinc.org|11488-4')).toBe(true);
    expect(codingMatchesToken(coding, '|11488-4')).toBe(true);
    expect(codingMatchesToken(coding, 'http://snomed.info/sct|11488-4')).toBe(false);
  });

  it('extracts the id of a typed reference only', () => {
    expect(referencedId({ reference: 'Patient/abc' }, 'Patient')).toBe('abc');
    expect(referencedId({ reference: 'https://x/fhir/R4/Patient/abc' }, 'Patient')).toBe('abc');
    expect(referencedId({ reference: 'Group/abc' }, 'Patient')).toBeUndefined();
    expect(referencedId('Patient/abc', 'Patient')).toBeUndefined();
  });

  it('builds search URLs with _count=100 unless given', () => {
    expect(
      searchUrl('/fhir/R4/Encounter', [
        ['patient', 'p'],
        ['date', 'ge2025-01-01'],
      ]),
    ).toBe('/fhir/R4/Encounter?patient=p&date=ge2025-01-01&_count=100');
    expect(searchUrl('/x', [['_count', '5']])).toBe('/x?_count=5');
  });
});

describe('search faults as the reference reads them', () => {
  const q = new URLSearchParams('patient=p&status=finished&date=gt2025-02-03&date=2025-02-04');
  it('leaves the query alone without faults', () => {
    expect(searchQueryUnderFaults(q, new Set(), 'encounter').toString()).toBe(q.toString());
  });
  it('drops an ignored parameter and misreads date prefixes', () => {
    const read = searchQueryUnderFaults(
      q,
      new Set(['encounter-search-ignores-status', 'encounter-date-gt-misread', 'encounter-date-bare-misread']),
      'encounter',
    );
    expect(read.get('status')).toBeNull();
    expect(read.getAll('date')).toEqual(['ge2025-02-03', 'ge2025-02-04']);
  });
  it('keeps faults of one area away from the other', () => {
    expect(searchQueryUnderFaults(q, new Set(['encounter-search-ignores-status']), 'document-reference').get('status')).toBe('finished');
  });
});

describe('upload documents', () => {
  it('builds a PDF of exactly the requested size, starting with the PDF signature and ending with %%EOF', () => {
    for (const size of [1000, 64 * 1024, 64 * 1024 + 1, 1024 * 1024 + 7]) {
      const doc = pdf(size);
      expect(doc.length).toBe(size);
      expect(doc.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      expect(doc.toString('latin1').trimEnd().endsWith('%%EOF')).toBe(true);
    }
    expect(pdf().length).toBeLessThan(300);
  });
});
