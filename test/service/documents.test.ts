/** The documents the DocumentReference checks send, and the round-trip comparison. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DOCUMENT_TYPES as REFERENCE_TYPES } from '../../src/reference/resources/documents.js';
import { differences, missingFrom } from '../../suites/document-reference/compare.js';
import { DOCUMENT_TYPES, documentOf, notOf, smallDocument } from '../../src/service/documents.js';

describe('documents', () => {
  it.each(DOCUMENT_TYPES)('%s: valid at the smallest size and padded to exact sizes; notOf is not of the type', (type) => {
    const looksRight = REFERENCE_TYPES[type]!;
    const small = smallDocument(type);
    expect(looksRight(small)).toBe(true);
    for (const size of [small.length + 64, 1024, 1025, 65_537, 65_538, 65_541, 131_075, 1024 * 1024 + 1]) {
      const doc = documentOf(type, size);
      expect(doc?.length, `${type} ${size}`).toBe(size);
      expect(looksRight(doc!), `${type} ${size}`).toBe(true);
    }
    expect(documentOf(type, small.length - 1)).toBeUndefined();
    expect(looksRight(notOf(type))).toBe(false);
  });

  it('a PNG keeps its chunk structure (length + CRC) when padded', () => {
    const png = documentOf('image/png', 4096)!;
    const chunks: string[] = [];
    for (let at = 8; at < png.length; ) {
      const length = png.readUInt32BE(at);
      chunks.push(png.subarray(at + 4, at + 8).toString('latin1'));
      at += 12 + length;
    }
    expect(chunks).toEqual(['IHDR', 'tEXt', 'IDAT', 'IEND']);
  });
});

describe('compare', () => {
  it('missingFrom: what was sent is carried; added members are fine; instants compare as instants', () => {
    const sent = { status: 'current', date: '2025-03-01T10:00:00Z', category: [{ coding: [{ code: 'a' }] }] };
    expect(missingFrom(sent, { ...sent, date: '2025-03-01T10:00:00.000+00:00', id: 'x', content: [] })).toEqual([]);
    expect(missingFrom(sent, { status: 'current', date: '2025-03-01T10:00:01Z', category: [{ coding: [{ code: 'a', display: 'A' }] }] })).toEqual([
      'date: "2025-03-01T10:00:00Z" -> "2025-03-01T10:00:01Z"',
    ]);
    expect(missingFrom(sent, { status: 'current', date: sent.date })).toEqual(['category: [{"coding":[{"code":"a"}]}] -> absent']);
    expect(missingFrom(sent, { ...sent, category: [] })).toEqual(['category: 1 items -> 0 items']);
  });

  it('missingFrom: inline bytes may come back stored apart (url), with the size and SHA-1 hash of the bytes sent', () => {
    const data = Buffer.from('%PDF-1.4 demo').toString('base64');
    const sent = { content: [{ attachment: { contentType: 'application/pdf', data } }] };
    const apart = { contentType: 'application/pdf', url: 'https://x.example/Binary/1', size: '13', hash: '' };
    const sha1 = (b: string) => createHash('sha1').update(Buffer.from(b, 'base64')).digest('base64');
    apart.hash = sha1(data);
    expect(missingFrom(sent, { content: [{ attachment: apart }] })).toEqual([]);
    expect(missingFrom(sent, { content: [{ attachment: { contentType: 'application/pdf', url: apart.url } }] })).toEqual([]);
    expect(missingFrom(sent, { content: [{ attachment: { ...apart, size: '12' } }] })).toEqual(['content[0].attachment.size: 13 bytes sent -> "12"']);
    expect(missingFrom(sent, { content: [{ attachment: { ...apart, hash: 'AAAA' } }] })).toEqual([
      `content[0].attachment.hash: SHA-1 ${apart.hash} of the bytes sent -> "AAAA"`,
    ]);
    // Neither the bytes nor a url: lost.
    expect(missingFrom(sent, { content: [{ attachment: { contentType: 'application/pdf' } }] })).toEqual([
      expect.stringMatching(/^content\[0\]\.attachment\.data: ".*" -> absent$/),
    ]);
    // The other members still compare.
    expect(missingFrom(sent, { content: [{ attachment: { ...apart, contentType: 'text/plain' } }] })).toEqual([
      'content[0].attachment.contentType: "application/pdf" -> "text/plain"',
    ]);
  });

  it('differences: both sides, members left out on request', () => {
    const a = { id: '1', meta: { versionId: '1' }, description: 'x', content: [{ attachment: { size: '3' } }] };
    expect(differences(a, { ...a, meta: { versionId: '2' } }, ['meta'])).toEqual([]);
    expect(differences(a, { ...a, meta: { versionId: '2' }, extra: true }, ['meta'])).toEqual(['extra: absent -> true']);
    expect(differences(a, { ...a, content: [{ attachment: {} }] })).toEqual(['content[0].attachment.size: "3" -> absent']);
  });
});

describe('compare: server-owned content (docs/comparison.md)', () => {
  const sent = { resourceType: 'DocumentReference', status: 'current', description: 'd', subject: { reference: 'Patient/p1' } };
  it('missingFrom: a regenerated narrative and meta are no loss; a dropped field beside them is', () => {
    const read = { ...sent, meta: { versionId: '2' }, text: { status: 'generated', div: '<div>v2</div>' } };
    expect(missingFrom({ ...sent, text: { status: 'generated', div: '<div>v1</div>' } }, read)).toEqual([]);
    const { description: _d, ...dropped } = read;
    expect(missingFrom({ ...sent, text: { status: 'generated', div: '<div>v1</div>' } }, dropped)).toEqual(['description: "d" -> absent']);
  });

  it('differences: narrative, meta, a reference display on one side, Bundle timestamp and entry search are the server’s', () => {
    const a = { ...sent, text: { status: 'generated', div: '<div>1</div>' }, meta: { versionId: '1' } };
    const b = { ...sent, text: { status: 'generated', div: '<div>2</div>' }, subject: { reference: 'Patient/p1', display: 'María' } };
    expect(differences(a, b)).toEqual([]);
    expect(differences(a, { ...b, status: 'superseded' })).toEqual(['status: "current" -> "superseded"']);
    expect(differences(a, { ...b, subject: { reference: 'Patient/p2', display: 'María' } })).toEqual(['subject.reference: "Patient/p1" -> "Patient/p2"']);
    const bundle = (timestamp: string, mode: string) => ({ resourceType: 'Bundle', timestamp, entry: [{ resource: a, search: { mode } }] });
    expect(differences(bundle('2026-01-01T00:00:00Z', 'match'), bundle('2026-01-01T00:00:05Z', 'include'))).toEqual([]);
  });
});
