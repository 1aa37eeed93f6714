/** Mode r4Observation=writes: a resource type the spec does not name, published and served with read, create and update. */
import { describe, expect, it } from 'vitest';
import {
  capabilityStatement,
  extraScopes,
  OBSERVATION_PROFILE_PATH,
  observationProfile,
  openApiDocument,
  servedOperations,
} from '../../../src/reference/discovery.js';
import { profileRequiredElements } from '../../../src/service/derived-body.js';
import { DEFAULT_MODES } from '../../../src/reference/types.js';
import { createFhirValidator } from '../../../src/fhir/index.js';
import { expectError, harness, IDS } from './harness.js';

const init = (r4Observation: 'none' | 'writes') => ({
  baseUrl: 'http://127.0.0.1:9999',
  tokenUrl: 'http://127.0.0.1:9999/auth/token',
  modes: { ...DEFAULT_MODES, r4Observation },
  scopesSupported: [],
  startedAt: '2025-03-10T12:00:00Z',
});

const observation = (extra: object = {}) => ({
  resourceType: 'Observation',
  status: 'final',
  category: [{ text: 'vital-signs' }],
  code: { text: 'body weight' },
  effectiveDateTime: '2025-03-10T10:00:00Z',
  subject: { reference: `Patient/${IDS.patient}` },
  valueQuantity: { value: 72.5, unit: 'kg' },
  ...extra,
});

describe('r4Observation', () => {
  it('is published in the OpenAPI document and the R4 CapabilityStatement, with its scopes, only in mode writes', () => {
    const doc = (mode: 'none' | 'writes') => openApiDocument(init(mode)) as { paths: Record<string, Record<string, { 'x-service-scope'?: string }>> };
    expect(Object.keys(doc('none').paths).filter((p) => p.includes('Observation'))).toEqual([]);
    const paths = doc('writes').paths;
    expect([paths['/fhir/R4/Observation']?.post?.['x-service-scope'], paths['/fhir/R4/Observation/{id}']?.put?.['x-service-scope']]).toEqual([
      'system/Observation.cru',
      'system/Observation.cru',
    ]);
    expect(paths['/fhir/R4/Observation/{id}']?.get?.['x-service-scope']).toBe('system/Observation.rs');
    const resource = (
      capabilityStatement('R4', init('writes')) as {
        rest: Array<{ resource: Array<{ type: string; profile?: string; interaction: Array<{ code: string }> }> }>;
      }
    ).rest[0]!.resource.find((r) => r.type === 'Observation');
    expect(resource?.interaction.map((i) => i.code).sort()).toEqual(['create', 'read', 'update']);
    expect(
      servedOperations(init('writes').modes)
        .filter((o) => o.resource === 'Observation')
        .map((o) => o.interaction),
    ).toEqual(['read', 'create', 'update']);
    expect(extraScopes(init('writes').modes)).toEqual(['system/Observation.rs', 'system/Observation.cru']);
    expect(extraScopes(init('none').modes)).toEqual([]);
    expect(resource).toMatchObject({ profile: `http://127.0.0.1:9999${OBSERVATION_PROFILE_PATH}` });
    expect(profileRequiredElements(observationProfile('http://127.0.0.1:9999'), 'Observation')).toEqual(['status', 'category', 'subject', 'effective[x]']);
  });

  it('creates, reads and updates valid R4 Observations; refuses what HL7 R4 refuses (400) and a patient of another organization (422)', async () => {
    const h = await harness({ modes: { r4Observation: 'writes' } });
    const created = await h.ok('R4Observation.create', { body: observation() });
    expect(created).toMatchObject({ resourceType: 'Observation', meta: { versionId: '1' }, code: { text: 'body weight' } });
    expect(createFhirValidator({ types: { R4: ['Observation'] } }).validate('R4', created)).toEqual([]);
    expect(await h.ok('R4Observation.read', { id: created.id })).toEqual(created);
    const updated = await h.ok('R4Observation.update', { id: created.id, body: observation({ id: created.id, status: 'amended' }) });
    expect(updated).toMatchObject({ id: created.id, status: 'amended', meta: { versionId: '2' } });

    const { code: _code, ...noCode } = observation();
    expect(expectError(await h.call('R4Observation.create', { body: noCode }))).toMatchObject({ status: 400, code: 'HPB-00101' });
    // The profile the CapabilityStatement names requires category and effective[x].
    const { effectiveDateTime: _e, ...noEffective } = observation();
    expect(expectError(await h.call('R4Observation.create', { body: noEffective }))).toMatchObject({ status: 400, code: 'HPB-00101' });
    expect(
      await h.ok('R4Observation.create', { body: observation({ effectiveDateTime: undefined, effectivePeriod: { start: '2025-03-10T10:00:00Z' } }) }),
    ).toMatchObject({
      effectivePeriod: { start: '2025-03-10T10:00:00Z' },
    });
    expect(expectError(await h.call('R4Observation.create', { body: observation({ code: 'weight' }) }))).toMatchObject({ status: 400, code: 'HPB-00101' });
    expect(
      expectError(await h.call('R4Observation.create', { body: observation({ subject: { reference: `Patient/${IDS.otherOrgPatient}` } }) })),
    ).toMatchObject({ status: 422, code: 'HPB-00101' });
    // The records are the organization's own.
    expect(expectError(await h.call('R4Observation.read', { id: created.id, org: 'org-b' }))).toMatchObject({ status: 404, code: 'HPB-00102' });
  });
});
