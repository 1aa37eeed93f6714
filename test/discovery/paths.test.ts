import { describe, expect, it } from 'vitest';
import { operationMatcher } from '../../src/discovery/index.js';

describe('operationMatcher', () => {
  const published = operationMatcher([
    { method: 'GET', path: '/fhir/R4/MedicationRequest/{id}' },
    { method: 'post', path: '/fhir/R5/DocumentReference/$upload' },
  ]);

  it('matches a published method and path, a path parameter being any one segment', () => {
    expect(published('GET', '/fhir/R4/MedicationRequest/abc-1')).toBe(true);
    expect(published('POST', '/fhir/R5/DocumentReference/$upload')).toBe(true);
  });

  it('matches nothing else: another method, another type, a longer or shorter path, a $ taken literally', () => {
    expect(published('PUT', '/fhir/R4/MedicationRequest/abc-1')).toBe(false);
    expect(published('GET', '/fhir/R4/NoSuchResourceType/abc-1')).toBe(false);
    expect(published('GET', '/fhir/R4/MedicationRequest/abc-1/_history/2')).toBe(false);
    expect(published('GET', '/fhir/R4/MedicationRequest/')).toBe(false);
    expect(published('POST', '/fhir/R5/DocumentReference/upload')).toBe(false);
  });
});
