import { describe, expect, it } from 'vitest';
import type { Exchange } from '../../src/engine/types.js';
import {
  CORRELATION_ID_DISTINCT_REQUIREMENT,
  META_VERSION_ID_REQUIREMENT,
  correlationIdRepeats,
  resourcesWithoutVersion,
  versionlessResources,
} from '../../src/service/run-wide.js';

function exchange(id: string, correlationId: string | undefined, status = 200, method = 'GET'): Exchange {
  return {
    id,
    startedAt: '2026-11-30T12:00:00.000Z',
    durationMs: 1,
    request: { method, url: 'http://t/fhir/R4/MedicationRequest/1', headers: {} },
    response: { status, headers: correlationId === undefined ? {} : { 'x-correlation-id': correlationId }, bodyBytes: 0 },
  } as Exchange;
}

describe('correlationIdRepeats', () => {
  it("fails an authenticated answer that repeats another exchange's id, whatever the status, once per repeat", () => {
    const judge = correlationIdRepeats();
    expect(judge(exchange('x-1', 'a'), true)).toEqual([]);
    expect(judge(exchange('x-2', 'b', 201, 'POST'), true)).toEqual([]);
    const [f] = judge(exchange('x-3', ' a ', 429), true);
    expect(f).toMatchObject({ requirement: CORRELATION_ID_DISTINCT_REQUIREMENT, exchange: 'x-3', actual: { correlationId: 'a', firstExchange: 'x-1' } });
    expect(judge(exchange('x-4', 'a', 401), true)).toHaveLength(1);
  });

  it('leaves out unauthenticated GETs (a cache may serve a discovery document again), answers without an id, and the same exchange seen again', () => {
    const judge = correlationIdRepeats();
    expect(judge(exchange('x-1', 'a'), true)).toEqual([]);
    expect(judge(exchange('x-1', 'a'), true)).toEqual([]);
    expect(judge(exchange('x-2', 'a'), false)).toEqual([]);
    expect(judge(exchange('x-3', ''), true)).toEqual([]);
    expect(judge(exchange('x-4', undefined), true)).toEqual([]);
  });

  it("judges the token endpoint's answers (unauthenticated POSTs)", () => {
    const judge = correlationIdRepeats();
    expect(judge(exchange('x-1', 't', 200, 'POST'), false)).toEqual([]);
    expect(judge(exchange('x-2', 't', 401, 'POST'), false)).toMatchObject([{ exchange: 'x-2', actual: { firstExchange: 'x-1' } }]);
  });

  it('keeps one memory per run', () => {
    correlationIdRepeats()(exchange('x-1', 'a'), true);
    expect(correlationIdRepeats()(exchange('x-2', 'a'), true)).toEqual([]);
  });
});

const TYPES = new Set(['MedicationRequest', 'DocumentReference']);
const versioned = (type: string, id: string, versionId?: unknown) => ({
  resourceType: type,
  id,
  meta: versionId === undefined ? { lastUpdated: 'x' } : { versionId },
});

describe('resourcesWithoutVersion', () => {
  it('finds a published resource without a non-empty meta.versionId, as the body or as a searchset entry', () => {
    expect(resourcesWithoutVersion(versioned('MedicationRequest', '1', '3'), TYPES)).toEqual([]);
    expect(resourcesWithoutVersion(versioned('MedicationRequest', '1'), TYPES)).toEqual([{ where: 'the body', resourceType: 'MedicationRequest', id: '1' }]);
    expect(resourcesWithoutVersion({ resourceType: 'MedicationRequest', id: '2' }, TYPES)).toHaveLength(1);
    expect(resourcesWithoutVersion(versioned('MedicationRequest', '1', ' '), TYPES)).toHaveLength(1);
    expect(resourcesWithoutVersion(versioned('MedicationRequest', '1', 3), TYPES)).toHaveLength(1);
    const bundle = {
      resourceType: 'Bundle',
      entry: [{ resource: versioned('DocumentReference', 'a', '1') }, { resource: versioned('DocumentReference', 'b') }],
    };
    expect(resourcesWithoutVersion(bundle, TYPES)).toEqual([{ where: 'entry[1].resource', resourceType: 'DocumentReference', id: 'b' }]);
  });

  it('leaves out types the target publishes no operation for, and bodies that are no resource', () => {
    expect(resourcesWithoutVersion({ resourceType: 'OperationOutcome', issue: [] }, TYPES)).toEqual([]);
    expect(resourcesWithoutVersion({ resourceType: 'Bundle', entry: [{ resource: { resourceType: 'Patient', id: 'p' } }] }, TYPES)).toEqual([]);
    expect(resourcesWithoutVersion(undefined, TYPES)).toEqual([]);
    expect(resourcesWithoutVersion('text', TYPES)).toEqual([]);
  });
});

describe('versionlessResources', () => {
  it('judges successful FHIR answers only', () => {
    const body = versioned('MedicationRequest', '1');
    expect(versionlessResources(exchange('x-1', 'a', 200, 'PUT'), '/fhir/R4/MedicationRequest/1', body, TYPES)).toMatchObject([
      { requirement: META_VERSION_ID_REQUIREMENT, exchange: 'x-1' },
    ]);
    expect(versionlessResources(exchange('x-2', 'a', 404), '/fhir/R4/MedicationRequest/1', body, TYPES)).toEqual([]);
    expect(versionlessResources(exchange('x-3', 'a', 200), '/openapi.json', body, TYPES)).toEqual([]);
  });
});
