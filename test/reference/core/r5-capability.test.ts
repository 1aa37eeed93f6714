/** The R5 CapabilityStatement and the `$upload` OperationDefinition per mode (r5Capability, uploadContract). */
import { expect, test } from 'vitest';
import { OPERATION_DEFINITION_PATH } from '../../../src/reference/discovery.js';
import { createFhirValidator } from '../../../src/fhir/index.js';
import { call, codeOf, startStub } from './helpers.js';

const FHIR = { accept: 'application/fhir+json' };

test('full (default): the $upload path, scope and payload are published, and the OperationDefinition is served', async () => {
  const s = await startStub();
  try {
    const cs = (await call(`${s.url}/fhir/R5/metadata`, { headers: FHIR })).json;
    expect(createFhirValidator().validate('R5', cs)).toEqual([]);
    const op = cs.rest[0].resource[0].operation[0];
    expect(op.name).toBe('upload');
    expect(op.documentation).toBe(`POST ${s.url}/fhir/R5/DocumentReference/{id}/$upload: the request body is the document; Content-Type is its media type.`);
    const od = await call(`${s.url}${OPERATION_DEFINITION_PATH}`, { headers: FHIR });
    expect(od.status).toBe(200);
    expect(od.json).toMatchObject({ resourceType: 'OperationDefinition', code: 'upload', url: op.definition, instance: true, type: false, system: false });
    expect(od.json.parameter.filter((p: any) => p.use === 'in')).toMatchObject([{ name: 'document', type: 'Binary', min: 1 }]);
    expect(createFhirValidator({ types: { R5: ['OperationDefinition', 'CapabilityStatement'] } }).validate('R5', od.json)).toEqual([]);
  } finally {
    await s.close();
  }
});

test('type-parameters: a type-level path, an OperationDefinition with document and subject', async () => {
  const s = await startStub({ modes: { uploadContract: 'type-parameters' } });
  try {
    const op = (await call(`${s.url}/fhir/R5/metadata`, { headers: FHIR })).json.rest[0].resource[0].operation[0];
    expect(op.documentation).toMatch(new RegExp(`^POST ${s.url.replace(/\./g, '\\.')}/fhir/R5/DocumentReference/\\$upload: `));
    const od = (await call(`${s.url}${OPERATION_DEFINITION_PATH}`, { headers: FHIR })).json;
    expect(od).toMatchObject({ instance: false, type: true });
    expect(od.parameter.filter((p: any) => p.use === 'in').map((p: any) => `${p.name}:${p.type}`)).toEqual(['document:Attachment', 'subject:Reference']);
  } finally {
    await s.close();
  }
});

test('bare: no scope, path or documentation, no OperationDefinition; none: no R5 CapabilityStatement', async () => {
  const bare = await startStub({ modes: { r5Capability: 'bare' } });
  try {
    const resource = (await call(`${bare.url}/fhir/R5/metadata`, { headers: FHIR })).json.rest[0].resource[0];
    expect(resource.interaction.every((i: any) => i.extension === undefined)).toBe(true);
    expect(Object.keys(resource.operation[0]).sort()).toEqual(['definition', 'name']);
    const od = await call(`${bare.url}${OPERATION_DEFINITION_PATH}`, { headers: FHIR });
    expect([od.status, codeOf(od)]).toEqual([404, 'SVC-00002']);
  } finally {
    await bare.close();
  }
  const none = await startStub({ modes: { r5Capability: 'none' } });
  try {
    const r5 = await call(`${none.url}/fhir/R5/metadata`, { headers: FHIR });
    expect([r5.status, codeOf(r5)]).toEqual([404, 'SVC-00002']);
    expect((await call(`${none.url}/fhir/R4/metadata`, { headers: FHIR })).status).toBe(200);
  } finally {
    await none.close();
  }
});
