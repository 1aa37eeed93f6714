import { describe, expect, test } from 'vitest';
import { coverage, renderCoverageMatrix } from '../../src/requirements/index.js';
import type { Requirement } from '../../src/requirements/index.js';

const req = (id: string, extra: Partial<Requirement> = {}): Requirement => ({
  id,
  area: id.split('.')[0]!,
  section: 'Endpoints',
  text: id,
  level: 'MUST',
  testable: true,
  ...extra,
});

const reqs: Requirement[] = [
  req('pagination.self-link'),
  req('pagination.next-absent-on-last-page'),
  req('pagination.total-advisory', { level: 'observation' }),
  req('audit.immutable', { testable: false, reason: 'not readable' }),
  req('errors.throttled-code'),
];

const checks = [
  { id: 'pagination.walk', requirements: ['pagination.self-link', 'pagination.total-advisory', 'pagination.no-such'] },
  { id: 'pagination.links', requirements: ['pagination.self-link', 'pagination.self-link'] },
  { id: 'audit.probe', requirements: ['audit.immutable'] },
  { id: 'errors.misc', requirements: ['errors.unknown'] },
];

describe('coverage', () => {
  const report = coverage(reqs, checks);

  test('lists covered requirements with their checks, in catalog order, without duplicates', () => {
    expect(report.covered).toEqual([
      { id: 'pagination.self-link', checks: ['pagination.walk', 'pagination.links'] },
      { id: 'pagination.total-advisory', checks: ['pagination.walk'] },
      { id: 'audit.immutable', checks: ['audit.probe'] },
    ]);
  });

  test('flags testable requirements without a check, and only those', () => {
    expect(report.uncovered).toEqual(['pagination.next-absent-on-last-page', 'errors.throttled-code']);
  });

  test('flags references to unknown ids exactly', () => {
    expect(report.unknownRefs).toEqual([
      { check: 'pagination.walk', id: 'pagination.no-such' },
      { check: 'errors.misc', id: 'errors.unknown' },
    ]);
  });

  test('lists untestable ids and per-area totals', () => {
    expect(report.untestable).toEqual(['audit.immutable']);
    expect(report.byArea).toEqual({
      pagination: { total: 3, testable: 3, covered: 2 },
      audit: { total: 1, testable: 0, covered: 1 },
      errors: { total: 1, testable: 1, covered: 0 },
    });
  });

  test('no checks: every testable id is uncovered, nothing unknown', () => {
    const empty = coverage(reqs, []);
    expect(empty.covered).toEqual([]);
    expect(empty.unknownRefs).toEqual([]);
    expect(empty.uncovered).toEqual(reqs.filter((r) => r.testable).map((r) => r.id));
  });
});

describe('renderCoverageMatrix', () => {
  const report = coverage(reqs, checks);
  const text = renderCoverageMatrix(reqs, report);
  const lines = text.split('\n');

  test('summarises the totals', () => {
    expect(lines[0]).toBe('Requirement coverage: 5 requirements, 4 testable, 3 covered, 2 uncovered, 1 untestable, 2 unknown references');
  });

  test('prints one row per area with totals, in canonical area order', () => {
    const rows = lines.filter((l) => /^(pagination|audit|errors|total)\s+\d/.test(l)).map((l) => l.split(/\s+/));
    expect(rows).toEqual([
      ['errors', '1', '1', '0', '1'],
      ['pagination', '3', '3', '2', '1'],
      ['audit', '1', '0', '1', '0'],
      ['total', '5', '4', '3', '2'],
    ]);
  });

  test('prints each requirement with its checks, "—" or the untestable reason', () => {
    const row = (id: string) =>
      lines
        .find((l) => l.trimStart().startsWith(`${id} `))!
        .trim()
        .split(/\s{2,}/);
    expect(row('pagination.self-link')).toEqual(['pagination.self-link', 'MUST', 'pagination.walk, pagination.links']);
    expect(row('pagination.next-absent-on-last-page')).toEqual(['pagination.next-absent-on-last-page', 'MUST', '—']);
    expect(row('pagination.total-advisory')).toEqual(['pagination.total-advisory', 'observation', 'pagination.walk']);
    expect(row('errors.throttled-code')).toEqual(['errors.throttled-code', 'MUST', '—']);
  });

  test('prints the untestable reason when no check names the requirement', () => {
    const r = renderCoverageMatrix(reqs, coverage(reqs, []));
    expect(r).toMatch(/audit\.immutable\s+MUST\s+untestable: not readable/);
  });

  test('lists unknown references', () => {
    expect(text).toContain('Checks naming unknown requirement ids\n  pagination.walk -> pagination.no-such\n  errors.misc -> errors.unknown');
  });

  test('colours only on request', () => {
    expect(text).not.toContain('\x1b[');
    const coloured = renderCoverageMatrix(reqs, report, { color: true });
    expect(coloured).toContain('\x1b[31m—\x1b[0m');
    expect(coloured.replace(/\x1b\[\d+m/g, '')).toBe(text);
  });
});
