import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/service/api.js';
import { faults } from '../../src/reference/faults/media-type.js';
import type { FaultRequest, FaultResponse } from '../../src/reference/faults/types.js';
import type { HttpResponse } from '../../src/http/types.js';
import checks, { mediaTypeOf } from '../../suites/media-type/checks.js';
import { nonConforming, runInProcess } from '../../src/run/in-process.js';

const FHIR = 'application/fhir+json; charset=utf-8';
const outcome = { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'not-found', diagnostics: 'HPB-00102: Resource not found' }] };
const res = (status: number, body: unknown = outcome): FaultResponse => ({ status, headers: { 'Content-Type': FHIR }, body });
const apply = (name: string, r: FaultResponse, req: FaultRequest) => faults.find((f) => f.name === name)!.transformResponse!(structuredClone(r), req);
const contentType = (r: FaultResponse) => Object.entries(r.headers).find(([k]) => k.toLowerCase() === 'content-type')?.[1];

const op = (resource: string, interaction: string, release: string) =>
  OPERATIONS.find((o) => o.resource === resource && o.interaction === interaction && o.release === release)!;

describe('media-type faults', () => {
  const r4Read: FaultRequest = { method: 'GET', path: '/fhir/R4/MedicationRequest/x', op: op('MedicationRequest', 'read', 'R4') };
  const r5Read: FaultRequest = { method: 'GET', path: '/fhir/R5/DocumentReference/x', op: op('DocumentReference', 'read', 'R5') };
  const create: FaultRequest = { method: 'POST', path: '/fhir/R4/MedicationRequest', op: op('MedicationRequest', 'create', 'R4') };

  it('fhir-errors-plain-json changes errors only', () => {
    expect(contentType(apply('fhir-errors-plain-json', res(404), r4Read))).toMatch(/^application\/json/);
    expect(contentType(apply('fhir-errors-plain-json', res(200, {}), r4Read))).toBe(FHIR);
  });

  it('fhir-r5-plain-json changes R5 only', () => {
    expect(contentType(apply('fhir-r5-plain-json', res(200, {}), r5Read))).toMatch(/^application\/json/);
    expect(contentType(apply('fhir-r5-plain-json', res(200, {}), r4Read))).toBe(FHIR);
  });

  it('fhir-accept-fhir-json-refused answers R4 reads 406', () => {
    expect(apply('fhir-accept-fhir-json-refused', res(200, {}), r4Read).status).toBe(406);
    expect(apply('fhir-accept-fhir-json-refused', res(200, {}), r5Read).status).toBe(200);
  });

  it('fhir-json-write-refused answers successful creates 415', () => {
    expect(apply('fhir-json-write-refused', res(201, {}), create).status).toBe(415);
  });

  it('unsupported-media-type-plain-text and openapi-not-json', () => {
    const plain = apply('unsupported-media-type-plain-text', res(415), create);
    expect([typeof plain.body, contentType(plain)]).toEqual(['string', 'text/plain; charset=utf-8']);
    const yaml = apply('openapi-not-json', res(200, {}), { method: 'GET', path: '/openapi.json' });
    expect([typeof yaml.body, contentType(yaml)]).toEqual(['string', 'application/yaml; charset=utf-8']);
  });

  it('mediaTypeOf drops parameters and case', () => {
    expect(mediaTypeOf({ headers: { 'content-type': 'Application/FHIR+json; charset=utf-8' } } as unknown as HttpResponse)).toBe('application/fhir+json');
    expect(mediaTypeOf({ headers: {} } as unknown as HttpResponse)).toBeUndefined();
  });
});

describe('media-type suite against the reference', () => {
  it.concurrent.each([
    ['default modes', {}],
    ['/openapi.json served as text/plain', { openapiMediaType: 'text/plain' }],
    ['creates answer 200', { createStatus: 200 }],
  ] as const)(
    'passes (%s)',
    async (_label, modes) => {
      const results = await runInProcess(checks, { modes });
      expect(nonConforming(results)).toEqual([]);
    },
    60_000,
  );

  // That each planted fault fails the checks it names is the mutation shards' assertion
  // (test/mutation/faults-1.test.ts, faults-2.test.ts), not repeated here.
  it('every media-type fault names the checks it must fail', () => {
    expect(faults.filter((f) => !f.checks?.length).map((f) => f.name)).toEqual([]);
  });
});
