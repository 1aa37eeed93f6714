import { describe, expect, it } from 'vitest';
import type { Exchange } from '../../src/engine/types.js';
import { createFhirValidator, type FhirValidator } from '../../src/fhir/index.js';
import { FHIR_BODY_REQUIREMENT, fhirBodyValidator } from '../../src/service/fhir-bodies.js';

const ex = { id: 'x-1', response: { status: 200, headers: {}, body: '' } } as unknown as Exchange;
const answer = (path: string, json: unknown) => ({ path, status: 200, json, truncated: false });

/** The real validator, counting the validations it runs. */
function counted(): FhirValidator & { runs: number } {
  const real = createFhirValidator();
  const v = { runs: 0, supports: real.supports, validate: (r: 'R4' | 'R5', x: unknown) => (v.runs++, real.validate(r, x)) };
  return v;
}

describe('the FHIR-body rule', () => {
  it('validates a body it has already judged once (same release, same JSON text), with the same finding', () => {
    const v = counted();
    const rule = fhirBodyValidator(v);
    const bad = () => ({ resourceType: 'Encounter', id: 'e1', status: 'nonsense', class: { code: 'AMB' } });
    const first = rule(answer('/fhir/R4/Encounter/e1', bad()), ex);
    const again = rule(answer('/fhir/R4/Encounter/e1', bad()), ex);
    expect(first.map((f) => f.requirement)).toEqual([FHIR_BODY_REQUIREMENT]);
    expect(again).toEqual(first);
    expect(v.runs).toBe(1);
  });

  it('judges each different body, and the same body under each release, on its own', () => {
    const v = counted();
    const rule = fhirBodyValidator(v);
    const good = {
      resourceType: 'Encounter',
      id: 'e1',
      status: 'finished',
      class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB' },
    };
    expect(rule(answer('/fhir/R4/Encounter/e1', good), ex)).toEqual([]);
    expect(rule(answer('/fhir/R4/Encounter/e1', { ...good, status: 'nonsense' }), ex)).toHaveLength(1);
    // The same OperationOutcome text under R4 and R5: validated once for each release.
    const outcome = { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'not-found' }] };
    expect(rule(answer('/fhir/R4/Encounter/x', outcome), ex)).toEqual([]);
    expect(rule(answer('/fhir/R5/DocumentReference/x', outcome), ex)).toEqual([]);
    expect(v.runs).toBe(4);
  });

  it('keys a body given with its text by that text: the same text is judged once, a text of the same value with other spacing again', () => {
    const v = counted();
    const rule = fhirBodyValidator(v);
    const body = { resourceType: 'Encounter', id: 'e1', status: 'nonsense', class: { code: 'AMB' } };
    const text = JSON.stringify(body);
    const withText = (t: string) => ({ ...answer('/fhir/R4/Encounter/e1', JSON.parse(t) as unknown), text: t });
    const first = rule(withText(text), ex);
    expect(first).toHaveLength(1);
    expect(rule(withText(text), ex)).toEqual(first);
    expect(v.runs).toBe(1);
    expect(rule(withText(JSON.stringify(body, null, 2)), ex)).toEqual(first);
    expect(v.runs).toBe(2);
  });
});
