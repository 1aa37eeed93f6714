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
