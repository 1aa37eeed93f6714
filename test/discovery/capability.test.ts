import { describe, expect, it } from 'vitest';
import { operationsFromCapability, queryInText } from '../../src/discovery/capability.js';
import { OPERATION_PATH_EXTENSION } from '../../src/discovery/model.js';

describe('queryInText: the query the documentation writes after the operation path', () => {
  it.each([
    ['POST https://fhir.example/fhir/R5/DocumentReference/$upload?patient={patient}: the body is the document.', '$upload', 'patient={patient}'],
    ['POST /fhir/R5/DocumentReference/$upload?subject=Patient/{uuid}&type={type}.', '$upload', 'subject=Patient/{uuid}&type={type}'],
    ['POST /fhir/R5/DocumentReference/$binary-upload?patient={id}, raw bytes', '$binary-upload', 'patient={id}'],
    ['POST /fhir/R5/DocumentReference/{id}/$upload: raw bytes', '$upload', undefined],
    ['POST /fhir/R5/DocumentReference/$upload-other?patient={id}', '$upload', undefined],
  ])('%s', (text, segment, query) => {
    expect(queryInText(text, segment)).toBe(query);
  });
});

describe('operationsFromCapability: an operation with a query in its documentation', () => {
  it('keeps the path (from the extension, without the query) and the query apart', () => {
    const cs = {
      rest: [
        {
          resource: [
            {
              type: 'DocumentReference',
              operation: [
                {
                  name: 'upload',
                  extension: [{ url: OPERATION_PATH_EXTENSION, valueString: '/fhir/R5/DocumentReference/$upload' }],
                  documentation: 'POST http://127.0.0.1:8080/fhir/R5/DocumentReference/$upload?patient={patient}: the request body is the document',
                },
                { name: 'reindex', documentation: 'POST /fhir/R5/DocumentReference/$reindex?all=true' },
              ],
            },
          ],
        },
      ],
    };
    const ops = operationsFromCapability(cs, 'R5', () => {});
    expect(ops.map((o) => [o.path, o.query])).toEqual([
      ['/fhir/R5/DocumentReference/$upload', 'patient={patient}'],
      ['/fhir/R5/DocumentReference/$reindex', 'all=true'],
    ]);
  });
});

describe('operationsFromCapability: published operation paths, absolute or relative', () => {
  const statement = (path: string, implementation?: string) => ({
    ...(implementation ? { implementation: { description: 'x', url: implementation } } : {}),
    rest: [{ resource: [{ type: 'DocumentReference', operation: [{ name: 'upload', extension: [{ url: OPERATION_PATH_EXTENSION, valueString: path }] }] }] }],
  });
  const read = (path: string, implementation?: string) => {
    const notes: string[] = [];
    const ops = operationsFromCapability(statement(path, implementation), 'R5', (n) => notes.push(n), 'https://h.test/api');
    return { path: ops[0]!.path, assumed: ops[0]!.pathAssumed, notes };
  };

  it.each([
    ['/fhir/R5/DocumentReference/{id}/$upload', undefined, '/fhir/R5/DocumentReference/{id}/$upload'],
    ['https://h.test/api/fhir/R5/DocumentReference/{id}/$upload', undefined, '/fhir/R5/DocumentReference/{id}/$upload'],
    ['DocumentReference/$upload', undefined, '/fhir/R5/DocumentReference/$upload'],
    ['DocumentReference/{id}/$upload', 'https://h.test/api/fhir/R5', '/fhir/R5/DocumentReference/{id}/$upload'],
    ['DocumentReference/$upload', '/api/fhir/R5/', '/fhir/R5/DocumentReference/$upload'],
  ])('%s (implementation.url %s) is %s', (path, implementation, expected) => {
    expect(read(path, implementation)).toEqual({ path: expected, assumed: undefined, notes: [] });
  });

  it('an absolute URL on another origin: noted, its path read under the base URL', () => {
    expect(read('https://production.example/fhir/R5/DocumentReference/$upload')).toEqual({
      path: '/fhir/R5/DocumentReference/$upload',
      assumed: undefined,
      notes: [
        '/fhir/R5/metadata: operation $upload on DocumentReference publishes https://production.example/fhir/R5/DocumentReference/$upload, outside the base URL https://h.test/api/; its path /fhir/R5/DocumentReference/$upload is read under the base URL, no other host is called',
      ],
    });
  });
});

describe('operationsFromCapability: the profile of a resource', () => {
  it('is kept on each of its operations (the derived bodies honour it)', () => {
    const profile = 'http://127.0.0.1:8080/fhir/R4/StructureDefinition/obs';
    const cs = {
      rest: [
        {
          resource: [
            { type: 'Observation', profile, interaction: [{ code: 'create' }, { code: 'read' }] },
            { type: 'Encounter', interaction: [{ code: 'read' }] },
          ],
        },
      ],
    };
    const ops = operationsFromCapability(cs, 'R4', () => {});
    expect(ops.map((o) => [o.resource, o.interaction, o.profile])).toEqual([
      ['Observation', 'create', profile],
      ['Observation', 'read', profile],
      ['Encounter', 'read', undefined],
    ]);
  });
});
