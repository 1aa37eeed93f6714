/** The reference's rendering modes (src/reference/rendering.ts): server-owned content that differs from what was written. */
import { describe, expect, it } from 'vitest';
import { renderBody, type RenderModes } from '../../src/reference/rendering.js';

const AS_STORED: RenderModes = { narrative: 'none', referenceDisplay: 'as-written', instantFormat: 'as-stored' };
const doc = (versionId: string) => ({
  resourceType: 'DocumentReference',
  id: 'd1',
  meta: { versionId, lastUpdated: '2026-05-01T10:15:00Z' },
  status: 'current',
  text: { status: 'generated', div: '<div>sent by the client</div>' },
  subject: { reference: 'Patient/3a0f5bb8-0d8c-442d-9237-db7ce012cb64' },
  date: '2026-05-01T10:15:00Z',
});

describe('renderBody', () => {
  it('leaves the body alone in the default modes and for non-resources', () => {
    const body = doc('1');
    expect(renderBody(body, AS_STORED)).toBe(body);
    expect(renderBody('text', { ...AS_STORED, narrative: 'regenerate' })).toBe('text');
  });

  it('narrative=regenerate: a text of its own, after meta, changing with the version; the input untouched', () => {
    const modes: RenderModes = { ...AS_STORED, narrative: 'regenerate' };
    const one = renderBody(doc('1'), modes) as Record<string, unknown>;
    const two = renderBody(doc('2'), modes) as Record<string, unknown>;
    expect(Object.keys(one).slice(0, 4)).toEqual(['resourceType', 'id', 'meta', 'text']);
    expect(one.text).toEqual({
      status: 'generated',
      div: '<div xmlns="http://www.w3.org/1999/xhtml"><p>DocumentReference d1, current (version 1, 2026-05-01T10:15:00Z)</p></div>',
    });
    expect((two.text as { div: string }).div).toContain('version 2');
    expect(doc('1').text.div).toBe('<div>sent by the client</div>');
  });

  it('narrative=regenerate renders Bundle entries, not the Bundle', () => {
    const bundle = { resourceType: 'Bundle', type: 'searchset', entry: [{ resource: doc('3') }] };
    const out = renderBody(bundle, { ...AS_STORED, narrative: 'regenerate' }) as { text?: unknown; entry: Array<{ resource: { text: { div: string } } }> };
    expect(out.text).toBeUndefined();
    expect(out.entry[0]!.resource.text.div).toContain('version 3');
  });

  it('referenceDisplay=inject: a display on literal references without one; local references and written displays kept', () => {
    const enc = {
      resourceType: 'Encounter',
      subject: { reference: 'Patient/3a0f5bb8-0d8c-442d-9237-db7ce012cb64' },
      participant: [{ individual: { reference: 'Practitioner/371b4f2c-bee8-48e3-a71b-5c5c96e37b69', display: 'Dr. As Written' } }],
      diagnosis: [{ condition: { reference: '#condition-1' } }],
    };
    const out = renderBody(enc, { ...AS_STORED, referenceDisplay: 'inject' }) as typeof enc & { subject: { display?: string } };
    expect(out.subject).toEqual({ reference: 'Patient/3a0f5bb8-0d8c-442d-9237-db7ce012cb64', display: 'Patient 3a0f5bb8' });
    expect(out.participant[0]!.individual.display).toBe('Dr. As Written');
    expect(out.diagnosis[0]!.condition).toEqual({ reference: '#condition-1' });
  });

  it('instantFormat: utc-millis and offset spell the same instant; dates without a time are kept', () => {
    const r = {
      resourceType: 'MedicationRequest',
      authoredOn: '2026-05-01T10:15:00+02:00',
      meta: { lastUpdated: '2026-05-01T02:00:00.123Z' },
      note: [{ time: '2026-05-01' }],
    };
    const utc = renderBody(r, { ...AS_STORED, instantFormat: 'utc-millis' }) as typeof r;
    expect(utc.authoredOn).toBe('2026-05-01T08:15:00.000Z');
    expect(utc.note[0]!.time).toBe('2026-05-01');
    const local = renderBody(r, { ...AS_STORED, instantFormat: 'offset' }) as typeof r;
    expect(local.authoredOn).toBe('2026-05-01T02:15:00-06:00');
    expect(local.meta.lastUpdated).toBe('2026-04-30T20:00:00.123-06:00');
    expect(Date.parse(local.meta.lastUpdated)).toBe(Date.parse(r.meta.lastUpdated));
  });
});
