import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadReleaseSchema, NESTED_RESOURCE_KEYWORD, reachable, readReleaseSchema, schemaFile, typeSchema } from '../../src/fhir/schema-source.js';

describe.each(['R4', 'R5'] as const)('%s schema source', (release) => {
  const schema = loadReleaseSchema(release);

  test('is loaded once per process', () => {
    expect(loadReleaseSchema(release)).toBe(schema);
  });

  test("its digest (the kept validators' key) follows the file's text: the same text, the same digest; one definition changed, another", () => {
    const text = readFileSync(schemaFile(release), 'utf8');
    const dir = mkdtempSync(join(tmpdir(), 'fhirc-schema-'));
    try {
      const same = join(dir, 'same.json');
      const changed = join(dir, 'changed.json');
      writeFileSync(same, text);
      const doc = JSON.parse(text) as { definitions: Record<string, { pattern?: string }> };
      doc.definitions.id = { ...doc.definitions.id, pattern: '^[A-Za-z0-9]{1,64}$' };
      writeFileSync(changed, JSON.stringify(doc));
      expect(schema.digest).toMatch(/^[0-9a-f]{64}$/);
      expect(readReleaseSchema(release, same).digest).toBe(schema.digest);
      expect(readReleaseSchema(release, changed).digest).not.toBe(schema.digest);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('keeps the HL7 root id and draft-06', () => {
    expect(schema.id).toBe(release === 'R4' ? 'http://hl7.org/fhir/json-schema/4.0' : 'http://hl7.org/fhir/json-schema/5.0');
    expect(schema.$schema).toBe('http://json-schema.org/draft-06/schema#');
  });

  test('stubs the resource list so nested resources are validated separately', () => {
    expect(schema.definitions.ResourceList).toMatchObject({ type: 'object', required: ['resourceType'], [NESTED_RESOURCE_KEYWORD]: true });
    expect(schema.definitions.ResourceList).not.toHaveProperty('oneOf');
  });

  test('defines every referenced definition', () => {
    const refs = new Set(JSON.stringify(schema.definitions).match(/#\/definitions\/[A-Za-z0-9_]+/g));
    const missing = [...refs].map((ref) => ref.slice('#/definitions/'.length)).filter((name) => !schema.definitions[name]);
    expect(missing).toEqual([]);
  });

  test('complex types are typed as objects', () => {
    expect(schema.definitions.Reference.type).toBe('object');
    expect(schema.definitions.MedicationRequest.type).toBe('object');
  });

  test('lists resource types and names primitive patterns', () => {
    expect(schema.resourceTypes.has('Patient')).toBe(true);
    expect(schema.resourceTypes.has('Reference')).toBe(false);
    expect(schema.primitiveByPattern.get(String(schema.definitions.uri.pattern))).toBe('canonical, uri or url');
  });
});

test('R5 decimal pattern has no stray brace', () => {
  expect(loadReleaseSchema('R5').definitions.decimal.pattern).toBe('^-?(0|[1-9][0-9]{0,17})(\\.[0-9]{1,17})?([eE][+-]?[0-9]{1,9})?$');
});

test('R4 drops the Medplum additions to Meta and Reference', () => {
  const { definitions } = loadReleaseSchema('R4');
  expect(Object.keys(definitions.Meta.properties as object)).not.toContain('project');
  expect(Object.keys(definitions.Reference.properties as object)).not.toContain('resource');
});

describe.each(['R4', 'R5'] as const)('%s type schemas and the kept index', (release) => {
  test("a type's schema holds every definition it reaches and nothing else; its refs all resolve", () => {
    const full = readReleaseSchema(release, schemaFile(release));
    for (const type of ['MedicationRequest', 'Encounter', 'DocumentReference']) {
      const own = typeSchema(release, type)!;
      expect(own.definition).toEqual(full.definitions[type]);
      const refs = new Set(JSON.stringify(own.definitions).match(/#\/definitions\/[A-Za-z0-9_]+/g));
      for (const ref of refs)
        expect(own.definitions[ref.slice('#/definitions/'.length)], `${type} ${ref}`).toEqual(full.definitions[ref.slice('#/definitions/'.length)]);
      expect(Object.keys(own.definitions).length).toBeLessThan(Object.keys(full.definitions).length / 5);
      expect(reachable(full.definitions, type)).toEqual(own.definitions);
    }
    expect(typeSchema(release, 'Reference')).toBeUndefined();
  });

  test('the index gives what a full read gives', () => {
    const full = readReleaseSchema(release, schemaFile(release));
    const schema = loadReleaseSchema(release);
    expect([schema.id, schema.$schema, schema.digest]).toEqual([full.id, full.$schema, full.digest]);
    expect(schema.resourceTypes).toEqual(full.resourceTypes);
    expect(schema.primitiveByPattern).toEqual(full.primitiveByPattern);
    expect(schema.definitions).toEqual(full.definitions);
  });
});
