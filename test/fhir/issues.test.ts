import type { ErrorObject } from 'ajv';
import { describe, expect, test } from 'vitest';
import { formatIssue, pointerToPath, toSchemaIssues } from '../../src/fhir/issues.js';

const error = (keyword: string, instancePath: string, params: Record<string, unknown>, message?: string): ErrorObject => ({
  keyword,
  instancePath,
  schemaPath: '#',
  params,
  message,
});

describe('pointerToPath', () => {
  test('array indexes in brackets, properties dotted, prefix kept', () => {
    expect(pointerToPath('/entry/3/resource/subject/reference')).toBe('entry[3].resource.subject.reference');
    expect(pointerToPath('/contained/0', 'entry[1].resource')).toBe('entry[1].resource.contained[0]');
    expect(pointerToPath('')).toBe('');
  });

  test('unescapes JSON pointer tokens and quotes non-identifier names', () => {
    expect(pointerToPath('/a~1b/c~0d/e f')).toBe('["a/b"]["c~d"]["e f"]');
  });
});

describe('toSchemaIssues', () => {
  const patterns = new Map([['^[0-9]+$', 'positiveInt']]);

  test('maps each ajv keyword to one readable line', () => {
    const issues = toSchemaIssues(
      [
        error('required', '/subject', { missingProperty: 'reference' }),
        error('additionalProperties', '', { additionalProperty: 'colour' }),
        error('enum', '/status', { allowedValues: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'] }),
        error('const', '/resourceType', { allowedValue: 'Patient' }),
        error('type', '/total', { type: 'integer' }),
        error('pattern', '/count', { pattern: '^[0-9]+$' }),
        error('pattern', '/code', { pattern: `^${'x'.repeat(80)}$` }),
        error('minimum', '/n', { limit: 1 }, 'must be >= 1'),
      ],
      'entry[0].resource',
      patterns,
    );
    expect(issues.map(formatIssue)).toEqual([
      'entry[0].resource.subject.reference: required property missing',
      'entry[0].resource.colour: unknown property (not defined by the FHIR schema)',
      'entry[0].resource.status: must be equal to one of the allowed values (a, b, c, d, e, f, g, h, …)',
      'entry[0].resource.resourceType: must be "Patient"',
      'entry[0].resource.total: must be an integer',
      'entry[0].resource.count: must be a valid FHIR positiveInt',
      `entry[0].resource.code: must match pattern ^${'x'.repeat(59)}…`,
      'entry[0].resource.n: must be >= 1',
    ]);
  });

  test('drops duplicate issues', () => {
    const twice = [error('type', '/id', { type: 'string' }), error('type', '/id', { type: 'string' })];
    expect(toSchemaIssues(twice, '', patterns)).toEqual([{ path: 'id', message: 'must be a string' }]);
  });
});

test('formatIssue leaves out an empty path', () => {
  expect(formatIssue({ path: '', message: 'must be a JSON object' })).toBe('must be a JSON object');
  expect(formatIssue({ path: 'id', message: 'must be a string' })).toBe('id: must be a string');
});
