import { describe, expect, it } from 'vitest';
import { coversUnderSomeReading, isScopeForm, letterVerdict, parseScope } from '../../src/service/scope-letters.js';

describe('parseScope / isScopeForm', () => {
  it('splits system/<ResourceType>.<letters>', () => {
    expect(parseScope('system/MedicationRequest.cru')).toEqual({ resource: 'MedicationRequest', letters: 'cru' });
  });

  it.each(['MedicationRequest.rs', 'system/medicationRequest.rs', 'system/*.rs', 'user/Patient.rs', 'system/Patient', 'system/Patient.RS'])(
    'refuses %s',
    (scope) => {
      expect(parseScope(scope)).toBeUndefined();
      expect(isScopeForm(scope)).toBe(false);
    },
  );
});

describe('letterVerdict: refused under every reading, or open', () => {
  it.each([
    ['c', 'rs', 'read', 'refused'],
    ['c', 'rs', 'search-type', 'refused'],
    ['cru', 'rs', 'read', 'open'], // r covers read under the per-interaction reading
    ['cru', 'rs', 'search-type', 'refused'], // neither all of rs nor s
    ['rs', 'cru', 'update', 'refused'],
    ['c', 'cru', 'update', 'refused'],
    ['rs', 'c', 'create', 'refused'],
    ['cru', 'c', 'create', 'open'], // holds every required letter
    ['c', 'cru', 'create', 'open'], // c covers create under the per-interaction reading
    ['rs', 'cru', 'operation', 'open'], // an operation has no letter of its own; r is shared
  ] as const)('%s for a %s-scoped %s is %s', (held, required, interaction, verdict) => {
    expect(letterVerdict(held, required, interaction)).toBe(verdict);
  });

  it('an operation with disjoint letters is refused', () => {
    expect(coversUnderSomeReading('s', 'cu', 'operation')).toBe(false);
  });

  it('the required letters themselves always cover', () => {
    for (const [letters, interaction] of [
      ['rs', 'read'],
      ['rs', 'search-type'],
      ['cru', 'update'],
      ['c', 'create'],
      ['cru', 'operation'],
    ] as const) {
      expect(coversUnderSomeReading(letters, letters, interaction)).toBe(true);
    }
  });
});
