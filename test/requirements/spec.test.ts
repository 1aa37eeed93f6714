import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { SHARED_SPEC_PATH, SPEC_PATH, normalizeQuote, specSha256, specText } from '../../src/requirements/index.js';
import { PROJECT_ROOT } from '../../src/paths.js';

describe('spec access', () => {
  test('SPEC_PATH is the copy shipped in the package; SHARED_SPEC_PATH its source beside the project root', () => {
    expect(SPEC_PATH.replaceAll('\\', '/')).toBe(`${PROJECT_ROOT.replaceAll('\\', '/')}/spec/service-interface-spec.md`);
    expect(SHARED_SPEC_PATH.replaceAll('\\', '/')).toMatch(/\/shared\/spec\/service-interface-spec\.md$/);
    expect(existsSync(SPEC_PATH)).toBe(true);
  });

  test('specText reads the packaged spec and specSha256 hashes the same bytes', () => {
    const text = specText();
    expect(text.startsWith('# Clinical Records FHIR Service: Interface Specification')).toBe(true);
    expect(specSha256()).toBe(createHash('sha256').update(readFileSync(SPEC_PATH)).digest('hex'));
    expect(specSha256()).toMatch(/^[0-9a-f]{64}$/);
  });

  // The source of truth is ../shared/spec/; the copy must not drift from it (npm run sync-spec).
  test.skipIf(!existsSync(SHARED_SPEC_PATH))('the packaged copy is byte-identical to ../shared/spec/service-interface-spec.md', () => {
    const copy = readFileSync(SPEC_PATH);
    const source = readFileSync(SHARED_SPEC_PATH);
    expect(copy.equals(source), 'spec/service-interface-spec.md differs from ../shared/spec/: run `npm run sync-spec`').toBe(true);
  });
});

describe('normalizeQuote', () => {
  test('drops backticks and collapses whitespace', () => {
    expect(normalizeQuote('  `total` is\n advisory\t and `x`  ')).toBe('total is advisory and x');
  });
});
