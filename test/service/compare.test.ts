/** The structural comparison of the round-trip checks: what a conforming server may change, and what it may not. */
import { describe, expect, it } from 'vitest';
import { sameResource, writtenIsRead } from '../../src/service/compare.js';

describe('writtenIsRead', () => {
  const written = {
    resourceType: 'MedicationRequest',
    meta: { tag: [{ system: 'x', code: 'run' }] },
    authoredOn: '2026-05-01T10:15:00-06:00',
    subject: { reference: 'Patient/3A0F5BB8-0D8C-442D-9237-DB7CE012CB64' },
    medicationCodeableConcept: { coding: [{ system: 'rx', code: '1', display: 'one' }] },
    note: [{ text: 'a' }, { text: 'b' }],
    dosageInstruction: [{ text: 'x', timing: { repeat: { frequency: 1, period: 12, periodUnit: 'h' } } }],
  };

  it('accepts an equivalent UTC offset, UUID case, added keys, array order, meta and narrative', () => {
    const read = {
      ...written,
      meta: { versionId: '1' },
      text: { status: 'generated', div: '<div/>' },
      authoredOn: '2026-05-01T16:15:00.000Z',
      subject: { reference: 'Patient/3a0f5bb8-0d8c-442d-9237-db7ce012cb64', display: 'María' },
      note: [{ text: 'b' }, { text: 'a' }],
      intent: 'order',
    };
    expect(writtenIsRead(written, read)).toEqual({ differences: [], displays: [] });
  });

  it('reports a dropped inner field and a lost array item', () => {
    const read = { ...written, dosageInstruction: [{ text: 'x' }], note: [{ text: 'a' }] };
    const paths = writtenIsRead(written, read).differences.map((d) => d.path);
    expect(paths).toEqual(['note', 'dosageInstruction[0].timing']);
  });

  it('records a replaced display apart, unless the display is owned', () => {
    const read = { ...written, medicationCodeableConcept: { coding: [{ system: 'rx', code: '1', display: 'ONE (normalized)' }] } };
    expect(writtenIsRead(written, read).differences).toEqual([]);
    expect(writtenIsRead(written, read).displays.map((d) => d.path)).toEqual(['medicationCodeableConcept.coding[0].display']);
    const owned = writtenIsRead(written, read, { ownedDisplay: (p) => p.startsWith('medicationCodeableConcept.') });
    expect(owned.differences.map((d) => d.path)).toEqual(['medicationCodeableConcept.coding[0].display']);
  });

  it('does not accept another instant', () => {
    expect(writtenIsRead(written, { ...written, authoredOn: '2026-05-01T10:15:00Z' }).differences.map((d) => d.path)).toEqual(['authoredOn']);
  });
});

describe('sameResource', () => {
  it('finds keys only one side has, and ignores meta', () => {
    const a = { resourceType: 'Encounter', meta: { versionId: '1' }, status: 'planned', reasonCode: [{ text: 'r' }] };
    const b = { resourceType: 'Encounter', meta: { versionId: '2' }, status: 'planned' };
    expect(sameResource(a, b).differences.map((d) => d.path)).toEqual(['reasonCode']);
    expect(sameResource(b, a).differences.map((d) => d.path)).toEqual(['reasonCode']);
    expect(sameResource(a, { ...a, meta: { versionId: '9' } }).differences).toEqual([]);
  });
});
