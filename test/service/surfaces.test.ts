import { describe, expect, it } from 'vitest';
import type { ModelOperation } from '../../src/discovery/model.js';
import { surfaceLabel, surfaceProbeUrl, surfaceScopes, surfacesOf } from '../../src/service/surfaces.js';

const op = (release: 'R4' | 'R5', resource: string, interaction: ModelOperation['interaction'], path: string, params: string[] = []): ModelOperation => ({
  operationId: `${resource}.${interaction}.${release}`,
  release,
  resource,
  interaction,
  method: interaction === 'read' || interaction === 'search-type' ? 'GET' : 'POST',
  path,
  scope: `system/${resource}.${interaction === 'create' ? 'cru' : 'rs'}`,
  searchParams: params.map((name) => ({ name })),
  errorStatuses: [],
  errorCodes: [],
  sources: ['openapi'],
});

describe('surfacesOf', () => {
  const operations = [
    op('R5', 'DocumentReference', 'search-type', '/fhir/R5/DocumentReference', ['patient', '_count']),
    op('R4', 'MedicationRequest', 'create', '/fhir/R4/MedicationRequest'),
    op('R4', 'MedicationRequest', 'search-type', '/fhir/R4/MedicationRequest', ['patient']),
    op('R4', 'MedicationRequest', 'read', '/fhir/R4/MedicationRequest/{id}'),
    op('R4', 'Encounter', 'read', '/fhir/R4/Encounter/{id}'),
  ];

  it('lists every published (release, resource) with a read or search, R4 first, the read preferred', () => {
    const surfaces = surfacesOf({ operations });
    expect(surfaces.map(surfaceLabel)).toEqual(['R4 Encounter', 'R4 MedicationRequest', 'R5 DocumentReference']);
    expect(surfaces.map((s) => s.probe.interaction)).toEqual(['read', 'read', 'search-type']);
    expect(surfaceScopes(surfaces)).toEqual(['system/DocumentReference.rs', 'system/Encounter.rs', 'system/MedicationRequest.rs']);
  });

  it('probes a read on a random id, a search on a random patient', () => {
    const [enc, , doc] = surfacesOf({ operations });
    expect(surfaceProbeUrl(enc!)).toMatch(/^\/fhir\/R4\/Encounter\/[0-9a-f-]{36}$/);
    expect(surfaceProbeUrl(doc!)).toMatch(/^\/fhir\/R5\/DocumentReference\?patient=[0-9a-f-]{36}$/);
  });
});
