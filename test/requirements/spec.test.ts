import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { SPEC_PATH, normalizeQuote, specSha256, specText } from '../../src/requirements/index.js';

describe('spec access', () => {
  test('SPEC_PATH is shared/spec/service-interface-spec.md beside the project root', () => {
    expect(SPEC_PATH.replaceAll('\\', '/')).toMatch(/\/shared\/spec\/service-interface-spec\.md$/);
  });

  test('specText reads the spec and specSha256 hashes the same bytes', () => {
    const text = specText();
    expect(text.startsWith('# Clinical Records FHIR Service: Interface Specification')).toBe(true);
    expect(specSha256()).toBe(createHash('sha256').update(readFileSync(SPEC_PATH)).digest('hex'));
    expect(specSha256()).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('normalizeQuote', () => {
  test('drops backticks and collapses whitespace', () => {
    expect(normalizeQuote('  `total` is\n advisory\t and `x`  ')).toBe('total is advisory and x');
  });
});
