import { describe, expect, it } from 'vitest';
import { applyVariant, invalidVariants, seedOf, validShapedInstance, variantSlug } from '../../suites/generated/invalid-variants.js';

const schema = {
  type: 'object',
  required: ['resourceType', 'status', 'subject', 'note'],
  properties: {
    resourceType: { type: 'string', enum: ['MedicationRequest'] },
    status: { type: 'string' },
    subject: { type: 'object', required: ['reference'], properties: { reference: { type: 'string' } } },
    note: { type: 'array', items: { type: 'object' } },
    meta: { type: 'object' },
  },
};

const valid = { resourceType: 'MedicationRequest', meta: { tag: [{ code: 'run-1' }] }, subject: { reference: 'Patient/p1' }, status: 'active' };

describe('invalidVariants', () => {
  it('removes each required field, breaks resourceType, and mistypes each typed required field', () => {
    expect(invalidVariants(schema).map(variantSlug)).toEqual([
      'missing-resource-type',
      'missing-status',
      'missing-subject',
      'missing-note',
      'wrong-resource-type',
      'wrong-type-status',
      'wrong-type-subject',
      'wrong-type-note',
    ]);
  });

  it('yields nothing for a schema without required fields', () => {
    expect(invalidVariants({ type: 'object', properties: {} })).toEqual([]);
  });
});

describe('validShapedInstance', () => {
  it('is deterministic for a seed and keeps the known-valid values and the run tag', async () => {
    const seed = seedOf('generated.medication-request-create.invalid-missing-status');
    const a = await validShapedInstance(schema, seed, valid);
    const b = await validShapedInstance(schema, seed, valid);
    expect(a).toEqual(b);
    expect(a).toMatchObject({ resourceType: 'MedicationRequest', status: 'active', subject: { reference: 'Patient/p1' }, meta: valid.meta });
    // A required field the valid body lacks comes from the generator, with the schema's type.
    expect(Array.isArray(a.note)).toBe(true);
  });

  it('seeds differ between check ids', () => {
    expect(seedOf('generated.a.invalid-missing-status')).not.toBe(seedOf('generated.b.invalid-missing-status'));
  });
});

describe('applyVariant', () => {
  const instance = { resourceType: 'MedicationRequest', status: 'active', subject: { reference: 'Patient/p1' }, note: [] };

  it('changes exactly one field and leaves the instance intact', () => {
    expect(applyVariant(instance, { kind: 'missing', field: 'subject' })).toEqual({ resourceType: 'MedicationRequest', status: 'active', note: [] });
    expect(applyVariant(instance, { kind: 'wrong-resource-type' }).resourceType).toBe('Patient');
    expect(typeof applyVariant(instance, { kind: 'wrong-type', field: 'status', jsonType: 'string' }).status).toBe('number');
    expect(typeof applyVariant(instance, { kind: 'wrong-type', field: 'subject', jsonType: 'object' }).subject).toBe('string');
    expect(Array.isArray(applyVariant(instance, { kind: 'wrong-type', field: 'note', jsonType: 'array' }).note)).toBe(false);
    expect(instance.subject).toEqual({ reference: 'Patient/p1' });
  });
});
