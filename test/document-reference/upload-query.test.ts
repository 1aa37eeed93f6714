/**
 * `$upload` with the patient in the query: the template declared in the config, and the query
 * the target publishes (OperationDefinition `in` parameters of primitive types, the
 * CapabilityStatement's documentation, the OpenAPI operation's required query parameters).
 */
import { describe, expect, it } from 'vitest';
import type { ModelOperation } from '../../src/discovery/model.js';
import type { CheckResult } from '../../src/engine/types.js';
import { describeResults, nonConforming, runInProcess } from '../../src/run/in-process.js';
import { publishedQuery, queryTemplate, type UploadDefinition as Definition } from '../../src/service/index.js';

const UPLOAD: ModelOperation = {
  operationId: 'DocumentReference.upload',
  release: 'R5',
  resource: 'DocumentReference',
  interaction: 'operation',
  operationName: 'upload',
  method: 'POST',
  path: '/fhir/R5/DocumentReference/$upload',
  searchParams: [],
  errorStatuses: [],
  errorCodes: [],
  sources: ['capability-r5'],
};
const definition = (queryParameters: Definition['queryParameters']): Definition => ({
  levels: ['type'],
  payloads: ['raw', 'binary'],
  extra: {},
  where: '/od',
  queryParameters,
});

describe('queryTemplate: a published query in the suite terms', () => {
  it.each([
    ['patient={uuid}', { template: 'patient={patient}', dropped: [] }],
    ['subject=Patient/{id}&format=pdf', { template: 'subject=Patient/{patient}&format=pdf', dropped: [] }],
    ['patient={uuid}&type={code}&category={category}', { template: 'patient={patient}&type={type}&category={category}', dropped: [] }],
    ['format={format}&encounter={id}', { dropped: ['format', 'encounter'] }],
  ])('%s', (query, expected) => {
    expect(queryTemplate(query)).toEqual(expected);
  });
});

describe('publishedQuery: where the query of $upload comes from', () => {
  it("the OperationDefinition's primitive in parameters: the patient, a required type or category; a required one it cannot fill is noted", () => {
    const basis: string[] = [];
    const q = publishedQuery(
      { ...UPLOAD, query: 'subject={x}' },
      definition([
        { name: 'patient', min: 1 },
        { name: 'type', min: 1 },
        { name: 'category', min: 0 },
        { name: 'encounter', min: 1 },
      ]),
      basis,
    );
    expect(q).toBe('patient={patient}&type={type}');
    expect(basis).toEqual([
      'OperationDefinition query parameters the suite has no value for: encounter',
      "query from the OperationDefinition's in parameters: patient={patient}&type={type}",
    ]);
  });

  it("else the query the CapabilityStatement's documentation writes after the path", () => {
    const basis: string[] = [];
    expect(publishedQuery({ ...UPLOAD, query: 'subject=Patient/{uuid}' }, definition([]), basis)).toBe('subject=Patient/{patient}');
    expect(basis).toEqual(["query from the CapabilityStatement's documentation: subject=Patient/{patient}"]);
  });

  it("else the OpenAPI operation's required query parameters naming the patient; none: no query", () => {
    const basis: string[] = [];
    const op = { ...UPLOAD, searchParams: [{ name: 'patient-id', type: 'string', required: true }, { name: 'note', required: true }, { name: 'subject' }] };
    expect(publishedQuery(op, undefined, basis)).toBe('patient-id={patient}');
    expect(publishedQuery(UPLOAD, undefined, [])).toBeUndefined();
  });
});

const upload = (results: Map<string, CheckResult>) =>
  Object.fromEntries(
    ['document-reference.upload-valid-document', 'document-reference.upload-type-mismatch-400', 'document-reference.size-limit-upload'].map((id) => [
      id,
      results.get(id)?.outcome,
    ]),
  );
const contractOf = (results: Map<string, CheckResult>) =>
  results.get('document-reference.upload-contract')!.observations.find((o) => o.key === 'document-reference.upload-contract')!.value;
const ALL_PASS = {
  'document-reference.upload-valid-document': 'pass',
  'document-reference.upload-type-mismatch-400': 'pass',
  'document-reference.size-limit-upload': 'pass',
};

describe('the embedded reference with the patient in the query', () => {
  it('declared as a URL template: the $upload checks run in that form and pass', async () => {
    const results = await runInProcess('all', {
      only: /^document-reference\.(upload(?!-foreign-instance)|size-limit-upload)/,
      modes: { uploadContract: 'type-query-binary', r5Capability: 'bare' },
      config: { documentReference: { upload: { path: '/fhir/R5/DocumentReference/$upload?patient={patient}&type={type}', payload: 'binary' } } },
    });
    expect(nonConforming(results), describeResults(results).join('\n')).toEqual([]);
    expect(upload(results)).toEqual(ALL_PASS);
    expect(contractOf(results)).toMatchObject({
      form: 'POST /fhir/R5/DocumentReference/$upload?patient={patient}&type={type} (type level, binary)',
      source: 'config',
    });
    // The placeholders filled: the fixture patient's id and the document type's system|code token.
    const sent = results.get('document-reference.upload-valid-document')!.evidence.map((x) => new URL(x.request.url));
    expect(sent.map((u) => u.searchParams.get('type'))).toContain('http://loinc.org|11488-4');
    expect(sent.every((u) => u.pathname !== '/fhir/R5/DocumentReference/$upload' || /^[0-9a-f-]{36}$/.test(u.searchParams.get('patient') ?? ''))).toBe(true);
  }, 300_000);

  it('declared without the query the target publishes: the declared contract fails', async () => {
    const results = await runInProcess('all', {
      only: /^document-reference\.upload-valid-document$/,
      modes: { uploadContract: 'type-query-raw' },
      config: { documentReference: { upload: { path: '/fhir/R5/DocumentReference/$upload', payload: 'raw' } } },
    });
    expect(results.get('document-reference.upload-valid-document')!.message).toMatch(/accepted no small valid document .*400 HPB-00101/);
  }, 300_000);

  it.each([
    ['type-query-raw', 'raw'],
    ['type-query-binary', 'binary'],
  ] as const)(
    'published (%s): read from the OperationDefinition, the checks pass',
    async (mode, payload) => {
      const results = await runInProcess('all', {
        only: /^document-reference\.(upload(?!-foreign-instance)|size-limit-upload)/,
        modes: { uploadContract: mode },
      });
      expect(nonConforming(results), describeResults(results).join('\n')).toEqual([]);
      expect(upload(results)).toEqual(ALL_PASS);
      expect(contractOf(results)).toEqual({
        form: `POST /fhir/R5/DocumentReference/$upload?patient={patient} (type level, ${payload})`,
        contentType: 'application/pdf',
        source: 'published',
      });
    },
    300_000,
  );
});
