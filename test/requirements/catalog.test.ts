import { describe, expect, test } from 'vitest';
import { AREAS, REQUIREMENT_ID_PATTERN, loadRequirements, normalizeQuote, specText } from '../../src/requirements/index.js';
import { catalogCodes, openPoints, sectionBodies } from './spec-sections.js';

const reqs = loadRequirements();
const spec = specText();
const normalizedSpec = normalizeQuote(spec);
const sections = sectionBodies(spec);

describe('suites/requirements.json', () => {
  test('ids are unique and look like <area>.<kebab-slug>', () => {
    const ids = reqs.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    const pattern = new RegExp(REQUIREMENT_ID_PATTERN);
    expect(ids.filter((id) => !pattern.test(id))).toEqual([]);
  });

  test('area is a known area and the id prefix', () => {
    expect(reqs.filter((r) => !(AREAS as readonly string[]).includes(r.area)).map((r) => r.id)).toEqual([]);
    expect(reqs.filter((r) => !r.id.startsWith(`${r.area}.`)).map((r) => r.id)).toEqual([]);
  });

  test('level is MUST, SHOULD or observation', () => {
    expect(reqs.filter((r) => !['MUST', 'SHOULD', 'observation'].includes(r.level)).map((r) => r.id)).toEqual([]);
  });

  test('reason is present exactly when testable is false', () => {
    const bad = reqs.filter((r) => (r.testable === false) !== (typeof r.reason === 'string' && r.reason.length > 0));
    expect(bad.map((r) => r.id)).toEqual([]);
  });

  test('every text is a verbatim substring of the spec', () => {
    const missing = reqs.filter((r) => !normalizedSpec.includes(normalizeQuote(r.text)));
    expect(missing.map((r) => `${r.id}: ${r.text}`)).toEqual([]);
  });

  test('every section is a heading path of the spec and contains the text', () => {
    const unknownSection = reqs.filter((r) => !sections.has(r.section));
    expect(unknownSection.map((r) => `${r.id}: ${r.section}`)).toEqual([]);
    const misplaced = reqs.filter((r) => !sections.get(r.section)!.includes(normalizeQuote(r.text)));
    expect(misplaced.map((r) => `${r.id}: ${r.section}`)).toEqual([]);
  });

  test('every catalog code of both error tables appears in a requirement text or notes', () => {
    const codes = catalogCodes(spec);
    expect(codes).toContain('HPB-00101');
    expect(codes).toContain('HPB-00149');
    expect(codes).toContain('SVC-00007');
    expect(codes.length).toBe(45);
    const mentioned = (code: string) => reqs.some((r) => r.text.includes(code) || (r.notes ?? '').includes(code));
    expect(codes.filter((c) => !mentioned(c))).toEqual([]);
  });

  test('every "not shown" / "not stated" statement maps to an observation or untestable entry', () => {
    const points = openPoints(spec);
    expect(points.length).toBeGreaterThanOrEqual(24);
    const open = reqs.filter((r) => r.level === 'observation' || !r.testable).map((r) => normalizeQuote(r.text));
    const unmapped = points.filter((p) => !open.some((text) => p.line.includes(text) && (text.includes(p.sentence) || p.sentence.includes(text))));
    expect(unmapped.map((p) => p.sentence)).toEqual([]);
  });

  test('ids other engineers already use exist', () => {
    const ids = new Set(reqs.map((r) => r.id));
    for (const id of [
      'headers.correlation-id',
      'rate-limit.headers-present',
      'rate-limit.headers-arithmetic',
      'rate-limit.retry-after',
      'media-type.fhir-json',
      'errors.operation-outcome-shape',
      'errors.catalog-code-format',
      'errors.throttled-code',
    ]) {
      expect(ids.has(id), id).toBe(true);
    }
  });

  test('the pagination rule 3 split and the spec contradictions are present', () => {
    const byId = new Map(reqs.map((r) => [r.id, r]));
    for (const id of [
      'pagination.self-link',
      'pagination.next-present-when-more',
      'pagination.next-absent-on-last-page',
      'pagination.next-carries-parameters',
    ]) {
      expect(byId.get(id)?.level, id).toBe('MUST');
    }
    // A MUST that accepts both readings, plus an observation of the reading chosen.
    expect(byId.get('medication-request.signed-prescription-409')?.notes).toMatch(/HPB-00114.*HPB-00103/);
    expect(byId.get('medication-request.signed-prescription-code')?.level).toBe('observation');
    expect(byId.get('catalog.hpb-00101')?.notes).toMatch(/400.*422/);
    expect(byId.get('errors.validation-status-chosen')?.level).toBe('observation');
    expect(byId.get('document-reference.read-404')?.notes).toMatch(/HPB-00102.*HPB-00118/);
    expect(byId.get('document-reference.not-found-code')?.level).toBe('observation');
    expect(byId.get('catalog.merged-deceased-updates')?.level).toBe('observation');
  });

  test('unreachable catalog codes are untestable with a reason', () => {
    const byId = new Map(reqs.map((r) => [r.id, r]));
    for (const id of [
      'catalog.hpb-00110',
      'catalog.hpb-00122',
      'catalog.hpb-00112',
      'catalog.hpb-00117',
      'catalog.hpb-00143',
      'catalog.svc-00001',
      'catalog.svc-00007',
    ]) {
      expect(byId.get(id)?.testable, id).toBe(false);
      expect(byId.get(id)?.reason, id).toBeTruthy();
    }
  });

  test('each endpoint-table error of each operation has its own requirement', () => {
    const ids = new Set(reqs.map((r) => r.id));
    const expected = [
      ...['401', '403', '404', '429'].map((s) => `medication-request.read-${s}`),
      ...['400', '401', '403', '404', '409', '422', '429'].map((s) => `medication-request.update-${s}`),
      ...['400', '401', '403', '429'].map((s) => `medication-request.search-${s}`),
      ...['400', '401', '403', '422', '429'].map((s) => `medication-request.create-${s}`),
      ...['401', '403', '404', '429'].map((s) => `encounter.read-${s}`),
      ...['400', '401', '403', '404', '422', '429'].map((s) => `encounter.update-${s}`),
      ...['401', '403', '429'].map((s) => `encounter.search-${s}`),
      ...['400', '401', '403', '422', '429'].map((s) => `encounter.create-${s}`),
    ];
    expect(expected.filter((id) => !ids.has(id))).toEqual([]);
  });
});
