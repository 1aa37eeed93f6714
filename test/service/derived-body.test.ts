/** Bodies derived from what the target publishes (src/service/derived-body.ts): valid against their schema, deterministic, with the fixtures' references. */
import { describe, expect, it } from 'vitest';
import type { CheckContext } from '../../src/engine/context.js';
import { SkipSignal } from '../../src/errors.js';
import { baseProfileUrl, bodyProblems, derivedBody, profileRequiredElements, writeBody } from '../../src/service/derived-body.js';

const FIXTURES: Record<string, string> = {
  patient: '3a0f5bb8-0d8c-442d-9237-db7ce012cb64',
  encounter: '633f199a-a18b-44dd-a3a0-1e1961997cc8',
  practitioner: '371b4f2c-bee8-48e3-a71b-5c5c96e37b69',
};
const ctx = {
  runId: 'run-1',
  config: { documentReference: {} },
  hasFixture: (k: string) => k in FIXTURES,
  fixture: (k: string) => FIXTURES[k]!,
  skip: (reason: string) => {
    throw new SkipSignal(reason);
  },
} as unknown as CheckContext;
const TAG = { tag: [{ system: 'https://fhir-conformance.dev/run', code: 'run-1' }] };

describe('derivedBody', () => {
  it('R4 DocumentReference from the HL7 schema: status, the fixture patient, one document inline; valid and the same every time', async () => {
    const body = await derivedBody(ctx, { release: 'R4', resource: 'DocumentReference' });
    expect(body).toEqual({
      resourceType: 'DocumentReference',
      meta: TAG,
      status: 'current',
      subject: { reference: `Patient/${FIXTURES.patient}` },
      content: [{ attachment: { contentType: 'application/pdf', data: expect.any(String), title: 'fhir-conformance document' } }],
    });
    expect(bodyProblems({ release: 'R4', resource: 'DocumentReference' }, body)).toEqual([]);
    expect(await derivedBody(ctx, { release: 'R4', resource: 'DocumentReference' })).toEqual(body);
  });

  it('R4 Observation: a status of its enum, subject from the fixtures, an empty required CodeableConcept given a text', async () => {
    const body = await derivedBody(ctx, { release: 'R4', resource: 'Observation' });
    expect(body).toMatchObject({
      resourceType: 'Observation',
      status: 'final',
      subject: { reference: `Patient/${FIXTURES.patient}` },
      code: { text: 'fhir-conformance run run-1' },
    });
    expect(bodyProblems({ release: 'R4', resource: 'Observation' }, body)).toEqual([]);
  });

  it('from the published request schema: its required fields, checked against it', async () => {
    const requestSchema = {
      type: 'object',
      required: ['resourceType', 'status', 'subject', 'code'],
      properties: {
        resourceType: { type: 'string', enum: ['Observation'] },
        status: { type: 'string', enum: ['registered', 'final'] },
        subject: { type: 'object', required: ['reference'], properties: { reference: { type: 'string' } } },
        code: { type: 'object' },
      },
    };
    const src = { release: 'R4' as const, resource: 'Observation', requestSchema };
    const body = await derivedBody(ctx, src);
    expect(body.subject).toEqual({ reference: `Patient/${FIXTURES.patient}` });
    expect(body.status).toBe('final');
    expect(bodyProblems(src, body)).toEqual([]);
    expect(bodyProblems(src, { ...body, status: 3 }).slice(0, 2)).toEqual(['/status must be string', '/status must be equal to one of the allowed values']);
  });

  it('a published schema that says little (resourceType only): the FHIR type gives the rest, valid against both', async () => {
    const requestSchema = { type: 'object', required: ['resourceType'], properties: { resourceType: { type: 'string', enum: ['DocumentReference'] } } };
    const src = { release: 'R4' as const, resource: 'DocumentReference', requestSchema };
    const body = await derivedBody(ctx, src);
    expect(body).toEqual(await derivedBody(ctx, { release: 'R4', resource: 'DocumentReference' }));
    expect(bodyProblems(src, body)).toEqual([]);
  });

  it('skips a type neither schema describes; keeps the hand-written bodies where they carry meaning', async () => {
    await expect(derivedBody(ctx, { release: 'R4', resource: 'NoSuchType' })).rejects.toBeInstanceOf(SkipSignal);
    expect(await writeBody(ctx, { release: 'R4', resource: 'MedicationRequest' })).toMatchObject({ status: 'active', intent: 'order' });
  });
});

describe('profileRequiredElements', () => {
  it('reads the top-level elements a StructureDefinition requires (snapshot first, else differential), choices as written', () => {
    const sd = (holder: 'snapshot' | 'differential') => ({
      resourceType: 'StructureDefinition',
      type: 'Observation',
      [holder]: {
        element: [
          { path: 'Observation', min: 0 },
          { path: 'Observation.status', min: 1 },
          { path: 'Observation.effective[x]', min: 1 },
          { path: 'Observation.note', min: 0 },
          { path: 'Observation.component.code', min: 1 },
        ],
      },
    });
    expect(profileRequiredElements(sd('snapshot'), 'Observation')).toEqual(['status', 'effective[x]']);
    expect(profileRequiredElements(sd('differential'), 'Observation')).toEqual(['status', 'effective[x]']);
    expect(profileRequiredElements({ resourceType: 'Patient' }, 'Observation')).toEqual([]);
    expect(baseProfileUrl('Observation')).toBe('http://hl7.org/fhir/StructureDefinition/Observation');
  });
});

describe('derivedBody with the CapabilityStatement profile', () => {
  const BASE = 'https://t.example';
  const profile = `${BASE}/fhir/R4/StructureDefinition/obs`;
  const withTarget = (served: unknown) => {
    const observed: Array<[string, unknown]> = [];
    const requested: string[] = [];
    const c = {
      ...(ctx as object),
      config: { baseUrl: BASE },
      shared: new Map<string, unknown>(),
      observe: (key: string, value: unknown) => observed.push([key, value]),
      request: async (opts: { url: string }) => {
        requested.push(opts.url);
        return served === undefined ? { status: 404, json: undefined } : { status: 200, json: served };
      },
    } as unknown as CheckContext;
    return { c, observed, requested };
  };
  const sd = {
    resourceType: 'StructureDefinition',
    type: 'Observation',
    differential: {
      element: [
        { path: 'Observation.category', min: 1 },
        { path: 'Observation.effective[x]', min: 1 },
      ],
    },
  };

  it('a profile the target serves under its base URL: its required elements are in the body, which stays valid; read once', async () => {
    const { c, observed, requested } = withTarget(sd);
    const body = await derivedBody(c, { release: 'R4', resource: 'Observation', profile });
    expect(Array.isArray(body.category)).toBe(true);
    expect(Object.keys(body).some((k) => k.startsWith('effective'))).toBe(true);
    expect(bodyProblems({ release: 'R4', resource: 'Observation' }, body)).toEqual([]);
    await derivedBody(c, { release: 'R4', resource: 'Observation', profile });
    expect(requested).toEqual(['/fhir/R4/StructureDefinition/obs']);
    expect(observed[0]).toEqual(['body.profile', { profile, requiredElements: ['category', 'effective[x]'] }]);
  });

  it('a profile neither served nor known: the body is from the base schema, and that is recorded; another host is never called', async () => {
    const { c, observed, requested } = withTarget(undefined);
    const body = await derivedBody(c, { release: 'R4', resource: 'Observation', profile: 'https://elsewhere.example/StructureDefinition/obs' });
    expect(body.category).toBeUndefined();
    expect(requested).toEqual([]);
    expect(observed[0]).toEqual(['body.profile', { profile: 'https://elsewhere.example/StructureDefinition/obs', derivedFrom: 'the base schema' }]);
    // The HL7 base profile needs nothing more.
    const base = withTarget(undefined);
    await derivedBody(base.c, { release: 'R4', resource: 'Observation', profile: 'http://hl7.org/fhir/StructureDefinition/Observation' });
    expect([base.observed, base.requested]).toEqual([[], []]);
  });
});
