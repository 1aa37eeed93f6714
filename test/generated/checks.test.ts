/** Which checks the generated suite derives from a published operation model. */
import { describe, expect, it } from 'vitest';
import generatedChecks from '../../suites/generated/checks.js';
import type { ModelOperation, OperationModel } from '../../src/discovery/model.js';
import { requirementById } from '../../src/requirements/index.js';

const op = (o: Partial<ModelOperation> & Pick<ModelOperation, 'operationId' | 'resource' | 'interaction' | 'method' | 'path'>): ModelOperation => ({
  release: 'R4',
  searchParams: [],
  errorStatuses: [],
  errorCodes: [],
  sources: ['openapi'],
  ...o,
});

const mrWrite = {
  type: 'object',
  required: ['resourceType', 'medicationCodeableConcept', 'subject'],
  properties: { resourceType: { type: 'string' }, medicationCodeableConcept: { type: 'object' }, subject: { type: 'object' } },
};

const model: OperationModel = {
  operations: [
    op({
      operationId: 'MedicationRequest.read',
      resource: 'MedicationRequest',
      interaction: 'read',
      method: 'GET',
      path: '/fhir/R4/MedicationRequest/{id}',
      scope: 'system/MedicationRequest.rs',
    }),
    op({
      operationId: 'MedicationRequest.create',
      resource: 'MedicationRequest',
      interaction: 'create',
      method: 'POST',
      path: '/fhir/R4/MedicationRequest',
      scope: 'system/MedicationRequest.c',
      requestSchema: mrWrite,
    }),
    op({
      operationId: 'MedicationRequest.update',
      resource: 'MedicationRequest',
      interaction: 'update',
      method: 'PUT',
      path: '/fhir/R4/MedicationRequest/{id}',
      scope: 'system/MedicationRequest.cru',
    }),
    op({
      operationId: 'DocumentReference.read',
      resource: 'DocumentReference',
      interaction: 'read',
      method: 'GET',
      path: '/fhir/R4/DocumentReference/{id}',
      scope: 'system/DocumentReference.rs',
    }),
    op({
      operationId: 'DocumentReference.read',
      release: 'R5',
      resource: 'DocumentReference',
      interaction: 'read',
      method: 'GET',
      path: '/fhir/R5/DocumentReference/{id}',
      scope: 'system/DocumentReference.rs',
      sources: ['capability-r5'],
    }),
    op({ operationId: 'Observation.read', resource: 'Observation', interaction: 'read', method: 'GET', path: '/fhir/R4/Observation/{id}' }),
  ],
  divergences: [],
  problems: [],
  hashes: {},
};

const checks = generatedChecks(model);
const byId = new Map(checks.map((c) => [c.id, c]));

describe('generatedChecks', () => {
  it('derives no-token, other-resource, letter and published-scope checks per operation', () => {
    expect([...byId.keys()].filter((id) => id.startsWith('generated.medication-request-read.'))).toEqual([
      'generated.medication-request-read.no-token',
      'generated.medication-request-read.other-resource-scope',
      'generated.medication-request-read.letters-c',
      'generated.medication-request-read.letters-cru',
      'generated.medication-request-read.required-scope',
    ]);
  });

  it('makes letters no reading accepts a MUST refusal and the open ones observations', () => {
    expect(byId.get('generated.medication-request-read.letters-c')!.level).toBe('MUST');
    expect(byId.get('generated.medication-request-read.letters-cru')!.level).toBe('observation');
    expect(byId.get('generated.medication-request-update.letters-c')!.level).toBe('MUST');
    const cruCreate = byId.get('generated.medication-request-create.letters-cru')!;
    expect(cruCreate.level).toBe('observation');
    expect(cruCreate.requirements).toEqual(['scopes.medication-request-create-with-cru']);
  });

  it('maps checks to the per-operation requirements', () => {
    expect(byId.get('generated.medication-request-read.no-token')!.requirements).toContain('medication-request.read-401');
    expect(byId.get('generated.medication-request-read.other-resource-scope')!.requirements).toContain('medication-request.read-403');
    expect(byId.get('generated.medication-request-create.required-scope')!.requirements).toEqual([
      'medication-request.create-scope',
      'scopes.c-for-medication-request-create',
    ]);
    expect(byId.get('generated.medication-request-read.letters-c')!.requirements).toContain('scopes.medication-request-c-not-enough-for-others');
    expect(byId.get('generated.document-reference-read-r5.no-token')!.requirements).toContain('document-reference.mirror-r4');
  });

  it('names every requirement from the catalog, and only once', () => {
    const known = requirementById();
    for (const c of checks) {
      expect(
        c.requirements.filter((r) => !known.has(r)),
        c.id,
      ).toEqual([]);
      expect(new Set(c.requirements).size, c.id).toBe(c.requirements.length);
    }
  });

  it('derives invalid bodies from the published request schema, else from the HL7 FHIR schema of the release and type, tagged as writes', () => {
    const invalid = checks.filter((c) => c.id.includes('.invalid-')).map((c) => c.id);
    expect(invalid).toEqual([
      'generated.medication-request-create.invalid-missing-resource-type',
      'generated.medication-request-create.invalid-missing-medication-codeable-concept',
      'generated.medication-request-create.invalid-missing-subject',
      'generated.medication-request-create.invalid-wrong-resource-type',
      'generated.medication-request-create.invalid-wrong-type-medication-codeable-concept',
      'generated.medication-request-create.invalid-wrong-type-subject',
      // The update publishes no request schema: HL7's R4 MedicationRequest requires subject and resourceType
      // (subject is a $ref'd Reference, so no wrong-type variant from its JSON type).
      'generated.medication-request-update.invalid-missing-subject',
      'generated.medication-request-update.invalid-missing-resource-type',
      'generated.medication-request-update.invalid-wrong-resource-type',
    ]);
    for (const id of invalid) expect(byId.get(id)!.tags).toEqual(['writes']);
    expect(byId.get('generated.medication-request-update.no-token')!.tags).toEqual(['writes']);
    expect(byId.get('generated.medication-request-read.no-token')!.tags).toBeUndefined();
  });

  it('keeps ids unique when an operation id repeats across releases', () => {
    expect(byId.size).toBe(checks.length);
    expect(byId.has('generated.document-reference-read-r4.no-token')).toBe(true);
    expect(byId.has('generated.document-reference-read-r5.no-token')).toBe(true);
  });

  it('still generates the checks of an operation without a published scope (they skip when run)', () => {
    expect([...byId.keys()].filter((id) => id.startsWith('generated.observation-read.'))).toEqual([
      'generated.observation-read.no-token',
      'generated.observation-read.other-resource-scope',
      'generated.observation-read.required-scope',
    ]);
  });
  it('a read of a type no config can name a fixture of reads a resource the run creates: tagged writes (the read-only profile leaves it out)', () => {
    expect(byId.get('generated.observation-read.no-token')!.tags).toEqual(['writes']);
    expect(byId.get('generated.medication-request-read.no-token')!.tags).toBeUndefined();
  });

  it('a published request schema that names only resourceType gets the HL7 required fields as variants too (the valid body derives from both)', () => {
    const untyped = { type: 'object', required: ['resourceType'], properties: { resourceType: { type: 'string', enum: ['Observation'] } } };
    const obs = generatedChecks({
      ...model,
      operations: [
        op({
          operationId: 'R4Observation.create',
          resource: 'Observation',
          interaction: 'create',
          method: 'POST',
          path: '/fhir/R4/Observation',
          scope: 'system/Observation.cru',
          requestSchema: untyped,
        }),
      ],
    });
    expect(obs.filter((c) => c.id.includes('.invalid-')).map((c) => c.id)).toEqual([
      'generated.r4-observation-create.invalid-missing-resource-type',
      'generated.r4-observation-create.invalid-missing-code',
      'generated.r4-observation-create.invalid-wrong-resource-type',
    ]);
  });
});
