import { describe, expect, test } from 'vitest';
import { ConformanceError } from '../../src/errors.js';
import { loadRequirements, parseRequirements, requirementById } from '../../src/requirements/index.js';

const good = { id: 'pagination.self-link', area: 'pagination', section: 'Endpoints', text: 'x', level: 'MUST', testable: true };
const doc = (...requirements: unknown[]) => ({ specVersion: 'v1', requirements });

describe('parseRequirements', () => {
  test('accepts a valid document', () => {
    expect(parseRequirements(doc(good), 'f.json')).toEqual([good]);
  });

  test.each([
    [
      'a missing reason on an untestable entry',
      { ...good, testable: false },
      /requirements\[0\] \(id "pagination.self-link"\) must have required property 'reason'/,
    ],
    ['a reason on a testable entry', { ...good, reason: 'r' }, /requirements\[0\] \(id "pagination.self-link"\) must not carry a reason/],
    [
      'an unknown area',
      { ...good, area: 'nope' },
      /requirements\[0\] \(id "pagination.self-link"\) area must be equal to one of the allowed values: discovery, auth/,
    ],
    ['a bad level', { ...good, level: 'MAY' }, /requirements\[0\] .* level must be equal to one of the allowed values: MUST, SHOULD, observation/],
    ['an id without area', { ...good, id: 'self-link' }, /requirements\[0\] \(id "self-link"\) id must match pattern/],
    ['an extra field', { ...good, owner: 'x' }, /requirements\[0\] .* must NOT have additional properties/],
    ['a numeric id part', { ...good, id: 'pagination.3' }, /requirements\[0\] \(id "pagination.3"\) has a numeric part/],
  ])('names the entry on %s', (_name, entry, message) => {
    expect(() => parseRequirements(doc(entry), 'f.json')).toThrow(message);
  });

  test('refuses a repeated id and an area that is not the id prefix', () => {
    expect(() => parseRequirements(doc(good, good), 'f.json')).toThrow('f.json: requirements[1] repeats the id "pagination.self-link"');
    expect(() => parseRequirements(doc({ ...good, area: 'errors' }), 'f.json')).toThrow(/has area "errors" but its id starts with "pagination"/);
  });

  test('errors are ConformanceError ERR_INTERNAL naming the source', () => {
    try {
      parseRequirements({ requirements: [] }, 'cat.json');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConformanceError);
      expect((e as ConformanceError).code).toBe('ERR_INTERNAL');
      expect((e as Error).message).toMatch(/^cat\.json: \(root\) must have required property 'specVersion'/);
    }
  });
});

describe('loadRequirements / requirementById', () => {
  test('load the shipped catalog', () => {
    const reqs = loadRequirements();
    expect(reqs.length).toBeGreaterThan(150);
    const byId = requirementById();
    expect(byId.size).toBe(reqs.length);
    expect(byId.get('errors.throttled-code')).toMatchObject({ area: 'errors', level: 'MUST', testable: true });
  });
});
