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

/** docs/comparison.md: each rule tolerates the server-owned change and still catches a dropped or changed client field. */
describe('comparison rules (docs/comparison.md)', () => {
  const written = {
    resourceType: 'DocumentReference',
    status: 'current',
    description: 'sent by the client',
    date: '2026-05-01T10:15:00Z',
    subject: { reference: 'Patient/3a0f5bb8-0d8c-442d-9237-db7ce012cb64' },
    text: { status: 'generated', div: '<div xmlns="http://www.w3.org/1999/xhtml">as sent</div>' },
  };
  const paths = (c: { differences: Array<{ path: string }> }) => c.differences.map((d) => d.path);

  it('a regenerated narrative is no difference; a dropped client field beside it is', () => {
    const regenerated = { ...written, text: { status: 'generated', div: '<div xmlns="http://www.w3.org/1999/xhtml">version 2</div>' } };
    expect(paths(writtenIsRead(written, regenerated))).toEqual([]);
    expect(paths(sameResource(written, regenerated))).toEqual([]);
    const { description: _d, ...dropped } = regenerated;
    expect(paths(writtenIsRead(written, dropped))).toEqual(['description']);
    expect(paths(sameResource(written, dropped))).toEqual(['description']);
  });

  it('a narrative on one rendering only, or on a contained resource, is no difference', () => {
    const { text: _t, ...bare } = written;
    expect(paths(sameResource(written, bare))).toEqual([]);
    const enc = (div: string) => ({
      resourceType: 'Encounter',
      contained: [{ resourceType: 'CarePlan', id: 'care-plan', text: { status: 'generated', div }, description: 'x' }],
    });
    expect(paths(sameResource(enc('<div>1</div>'), enc('<div>2</div>')))).toEqual([]);
    const changed = enc('<div>1</div>');
    changed.contained[0]!.description = 'y';
    expect(paths(sameResource(enc('<div>1</div>'), changed))).toEqual(['contained[0].description']);
  });

  it('meta is the server’s, in a resource and a contained one; a client field under another key is not', () => {
    const read = { ...written, meta: { versionId: '3', lastUpdated: '2026-05-01T10:16:00Z', tag: [{ code: 'server' }] } };
    expect(paths(writtenIsRead({ ...written, meta: { tag: [{ code: 'run' }] } }, read))).toEqual([]);
    expect(paths(writtenIsRead(written, { ...read, status: 'superseded' }))).toEqual(['status']);
  });

  it('a display added to a reference is no difference; a written display dropped or a reference changed is', () => {
    const injected = { ...written, subject: { ...written.subject, display: 'María López' } };
    expect(paths(writtenIsRead(written, injected))).toEqual([]);
    expect(paths(sameResource(written, injected))).toEqual([]);
    expect(paths(sameResource(injected, written))).toEqual([]);
    expect(paths(writtenIsRead(injected, written))).toEqual(['subject.display']);
    expect(paths(sameResource(written, { ...written, subject: { reference: 'Patient/4d52906b-381a-4733-aef1-f4452e5e094f', display: 'x' } }))).toEqual([
      'subject.reference',
    ]);
    // Between two renderings a display both carry must agree (owned by default there).
    expect(paths(sameResource(injected, { ...written, subject: { ...written.subject, display: 'Another Name' } }))).toEqual(['subject.display']);
  });

  it('an instant at another offset or precision is the same instant; an hour off is not', () => {
    for (const same of ['2026-05-01T10:15:00.000Z', '2026-05-01T04:15:00-06:00', '2026-05-01T10:15:00+00:00', '2026-05-01T10:15:00.0000000Z']) {
      expect(paths(writtenIsRead(written, { ...written, date: same })), same).toEqual([]);
    }
    expect(paths(writtenIsRead(written, { ...written, date: '2026-05-01T10:15:00-01:00' }))).toEqual(['date']);
    expect(paths(writtenIsRead(written, { ...written, date: '2026-05-01T05:15:00-06:00' }))).toEqual(['date']);
  });

  it('a Bundle’s timestamp and an entry’s search are the server’s; an entry resource changed is not', () => {
    const bundle = (timestamp: string, mode: string, status: string) => ({
      resourceType: 'Bundle',
      type: 'searchset',
      timestamp,
      entry: [{ fullUrl: 'https://x/DocumentReference/1', resource: { ...written, status }, search: { mode } }],
    });
    expect(paths(sameResource(bundle('2026-05-01T10:00:00Z', 'match', 'current'), bundle('2026-05-01T10:00:09Z', 'include', 'current')))).toEqual([]);
    expect(paths(sameResource(bundle('2026-05-01T10:00:00Z', 'match', 'current'), bundle('2026-05-01T10:00:00Z', 'match', 'superseded')))).toEqual([
      'entry[0].resource.status',
    ]);
  });

  it('the layout of a body does not matter: the same JSON pretty-printed or compact compares equal', () => {
    const pretty = JSON.parse(JSON.stringify(written, null, 2)) as typeof written;
    const compact = JSON.parse(JSON.stringify(written)) as typeof written;
    expect(paths(sameResource(pretty, compact))).toEqual([]);
  });
});
