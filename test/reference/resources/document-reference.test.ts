import { createHash } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { DocumentReferenceRow, FixtureData } from '../../../src/reference/resources/records.js';
import { allPages, BASE, expectError, harness, IDS, NOW, type Harness } from './harness.js';

const LOINC = 'http://loinc.org';
const CATEGORY = 'https://clinical-records.example/fhir/CodeSystem/document-category';
const newBody = (extra: Record<string, unknown> = {}) => ({
  resourceType: 'DocumentReference',
  status: 'current',
  subject: { reference: `Patient/${IDS.patient}` },
  type: { coding: [{ system: LOINC, code: '11488-4', display: 'Consult note' }] },
  content: [{ attachment: { contentType: 'application/pdf', title: 'note.pdf' } }],
  ...extra,
});
const PDF = Buffer.from('%PDF-1.7\n1 0 obj\n<<>>\nendobj\n%%EOF\n');
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('IHDR-and-the-rest')]);

let h: Harness;
beforeEach(async () => {
  h = await harness();
});

describe('DocumentReference read/create/update', () => {
  it('reads the R5 shape with versioning headers', async () => {
    const res = await h.call('DocumentReference.read', { id: IDS.documentReference });
    if (!res.ok) throw new Error(res.message);
    expect(res.body).toMatchObject({
      resourceType: 'DocumentReference',
      id: IDS.documentReference,
      status: 'current',
      subject: { reference: `Patient/${IDS.patient}` },
      meta: { versionId: '1' },
    });
    expect(res.body.content[0].attachment).toMatchObject({ contentType: 'application/pdf' });
    expect(res.headers).toMatchObject({ ETag: 'W/"1"', 'Last-Modified': 'Mon, 03 Mar 2025 10:00:00 GMT' });
  });

  it('answers 404 with modes.unknownDocumentCode', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    expect(expectError(await h.call('DocumentReference.read', { id }))).toEqual({ status: 404, code: 'HPB-00118', issueCode: 'not-found' });
    const h102 = await harness({ modes: { unknownDocumentCode: 'HPB-00102' } });
    expect(expectError(await h102.call('DocumentReference.read', { id }))).toMatchObject({ status: 404, code: 'HPB-00102' });
    expect(expectError(await h102.call('DocumentReference.update', { id, body: newBody() }))).toMatchObject({ status: 404, code: 'HPB-00102' });
  });

  it('creates with a server id and Location', async () => {
    const res = await h.call('DocumentReference.create', { body: newBody() });
    if (!res.ok) throw new Error(res.message);
    expect(res.status).toBe(201);
    expect(res.headers).toMatchObject({ Location: `${BASE}/fhir/R5/DocumentReference/${res.body.id}`, ETag: 'W/"1"' });
    expect(await h.ok('DocumentReference.read', { id: res.body.id })).toEqual(res.body);
  });

  it.each([
    ['no content', newBody({ content: undefined })],
    ['an empty content', newBody({ content: [] })],
    ['content without attachment', newBody({ content: [{ format: { code: 'x' } }] })],
    ['no subject', newBody({ subject: undefined })],
    ['no status', newBody({ status: undefined })],
    ['a body that breaks the R5 schema', newBody({ date: 'today' })],
  ])('refuses %s with 400 HPB-00101', async (_name, body) => {
    expect(expectError(await h.call('DocumentReference.create', { body }))).toEqual({ status: 400, code: 'HPB-00101', issueCode: 'invalid' });
  });

  it('refuses a status outside current|superseded|entered-in-error and an unknown patient with 422 HPB-00101', async () => {
    expect(expectError(await h.call('DocumentReference.create', { body: newBody({ status: 'preliminary' }) }))).toMatchObject({
      status: 422,
      code: 'HPB-00101',
    });
    const ghost = newBody({ subject: { reference: 'Patient/00000000-0000-4000-8000-000000000000' } });
    expect(expectError(await h.call('DocumentReference.create', { body: ghost }))).toMatchObject({ status: 422, code: 'HPB-00101' });
  });

  it('updates with a new version and refuses a stale If-Match', async () => {
    const body = await h.ok('DocumentReference.read', { id: IDS.documentReference });
    const stale = await h.call('DocumentReference.update', { id: IDS.documentReference, body, headers: { 'If-Match': 'W/"7"' } });
    expect(expectError(stale)).toEqual({ status: 409, code: 'HPB-00103', issueCode: 'conflict' });
    const res = await h.call('DocumentReference.update', {
      id: IDS.documentReference,
      body: { ...body, status: 'superseded' },
      headers: { 'If-Match': 'W/"1"' },
    });
    if (!res.ok) throw new Error(res.message);
    expect(res.body).toMatchObject({ status: 'superseded', meta: { versionId: '2' } });
    expect(res.headers?.ETag).toBe('W/"2"');
  });
});

describe('DocumentReference search', () => {
  let rows: DocumentReferenceRow[];
  beforeEach(() => {
    rows = (h.resources.snapshot() as FixtureData).documentReferences.filter((r) => r.org === 'org-a') as DocumentReferenceRow[];
  });
  // Every page (patientManyRecords puts more than 100 documents in the organization).
  const ids = async (query: string) =>
    (await allPages(h, 'DocumentReference.search', `${query}&_count=100`)).flatMap((body) => body.entry.map((e: any) => e.resource.id)).sort();
  const expected = (pred: (r: DocumentReferenceRow) => boolean) =>
    rows
      .filter(pred)
      .map((r) => r.id)
      .sort();

  it('has at least 25 documents for the patient', () => {
    expect(expected((r) => r.subjectId === IDS.patient).length).toBeGreaterThanOrEqual(25);
  });

  it('filters by patient, type, category and date prefixes', async () => {
    expect(await ids(`patient=${IDS.patient}`)).toEqual(expected((r) => r.subjectId === IDS.patient));
    const consult = expected((r) => r.type?.coding?.[0]?.code === '11488-4');
    expect(consult.length).toBeGreaterThan(0);
    expect(await ids('type=11488-4')).toEqual(consult);
    expect(await ids(`type=${encodeURIComponent(`${LOINC}|11488-4`)}`)).toEqual(consult);
    expect(await ids('type=11488-4,18842-5')).toEqual(expected((r) => ['11488-4', '18842-5'].includes(r.type?.coding?.[0]?.code ?? '')));
    const imaging = expected((r) => r.category?.[0]?.coding?.[0]?.code === 'imaging');
    expect(imaging.length).toBeGreaterThan(0);
    expect(await ids(`category=${encodeURIComponent(`${CATEGORY}|imaging`)}`)).toEqual(imaging);
    const day = (r: DocumentReferenceRow) => r.date!.slice(0, 10);
    const d = '2025-03-05';
    const preds: Record<string, (x: string) => boolean> = {
      eq: (x) => x === d,
      ne: (x) => x !== d,
      gt: (x) => x > d,
      ge: (x) => x >= d,
      lt: (x) => x < d,
      le: (x) => x <= d,
    };
    expect(expected((r) => day(r) === d).length).toBe(2);
    for (const [prefix, pred] of Object.entries(preds)) expect(await ids(`date=${prefix}${d}`)).toEqual(expected((r) => pred(day(r))));
  });

  it('applies _offset as an initial skip, then pages from there', async () => {
    const all = (await h.ok('DocumentReference.search', { query: `patient=${IDS.patient}&_count=100` })).entry.map((e: any) => e.resource.id);
    const pages = await allPages(h, 'DocumentReference.search', `patient=${IDS.patient}&_offset=5&_count=10`);
    expect(pages.map((p) => p.entry.length)).toEqual([10, 10, 5]);
    expect(pages.flatMap((p) => p.entry.map((e: any) => e.resource.id))).toEqual(all.slice(5));
    for (const p of pages) expect(p.total).toBe(all.length);
    const beyond = await h.ok('DocumentReference.search', { query: `patient=${IDS.patient}&_offset=${all.length}` });
    expect(beyond).toMatchObject({ total: all.length, entry: [] });
    expect(beyond.link.map((l: any) => l.relation)).toEqual(['self']);
  });

  it.each(['_offset=-1', '_offset=abc', '_offset=1.5', '_offset=10001'])('refuses %s with 400 HPB-00101', async (q) => {
    expect(expectError(await h.call('DocumentReference.search', { query: `patient=${IDS.patient}&${q}` }))).toMatchObject({ status: 400, code: 'HPB-00101' });
  });

  it('accepts _offset=10000', async () => {
    expect((await h.ok('DocumentReference.search', { query: '_offset=10000' })).entry).toEqual([]);
  });
});

describe('DocumentReference $upload', () => {
  const upload = (body: Buffer, contentType: string, harnessToUse = h, id = IDS.documentReference) =>
    harnessToUse.call('DocumentReference.upload', { id, rawBody: body, headers: { 'content-type': contentType }, now: NOW + 60_000 });

  it.each([
    ['application/pdf', PDF],
    ['image/png', PNG],
    ['text/plain; charset=utf-8', Buffer.from('Nota clínica: paciente estable.\n')],
  ])('stores a %s document as a new version with contentType, size, hash and creation', async (type, data) => {
    const res = await upload(data, type);
    if (!res.ok) throw new Error(res.message);
    expect(res.status).toBe(200);
    expect(res.body.meta.versionId).toBe('2');
    expect(res.headers?.ETag).toBe('W/"2"');
    expect(res.body.content).toEqual([
      {
        attachment: {
          contentType: type.split(';')[0],
          size: String(data.length),
          hash: createHash('sha1').update(data).digest('base64'),
          creation: new Date(NOW + 60_000).toISOString(),
        },
      },
    ]);
    expect(await h.ok('DocumentReference.read', { id: IDS.documentReference })).toEqual(res.body);
  });

  it('refuses a document over limits.documentMaxBytes with 413 HPB-00119 and accepts exactly the maximum', async () => {
    const small = await harness({ limits: { documentMaxBytes: PDF.length } });
    expect((await upload(PDF, 'application/pdf', small)).status).toBe(200);
    const big = Buffer.concat([PDF, Buffer.from('x')]);
    expect(expectError(await upload(big, 'application/pdf', small))).toEqual({ status: 413, code: 'HPB-00119', issueCode: 'too-long' });
  });

  it.each([
    ['an empty body', Buffer.alloc(0), 'application/pdf'],
    ['an unsupported type', PDF, 'application/zip'],
    ['no declared type', PDF, ''],
    ['PNG bytes declared as PDF', PNG, 'application/pdf'],
    ['PDF bytes declared as PNG', PDF, 'image/png'],
    ['invalid UTF-8 declared as text', Buffer.from([0x48, 0xff, 0xfe, 0x00]), 'text/plain'],
  ])('refuses %s with 400 HPB-00120 and changes nothing', async (_name, data, type) => {
    const before = h.resources.snapshot();
    expect(expectError(await upload(data, type))).toEqual({ status: 400, code: 'HPB-00120', issueCode: 'invalid' });
    expect(h.resources.snapshot()).toEqual(before);
  });

  it('answers 404 with modes.unknownDocumentCode for an unknown or other-org document', async () => {
    expect(expectError(await upload(PDF, 'application/pdf', h, '00000000-0000-4000-8000-000000000000'))).toMatchObject({ status: 404, code: 'HPB-00118' });
    expect(expectError(await upload(PDF, 'application/pdf', h, IDS.otherOrgDocumentReference))).toMatchObject({ status: 404, code: 'HPB-00118' });
  });
});

describe('DocumentReference inline documents (content[].attachment.data)', () => {
  const inline = (data: Buffer, contentType = 'application/pdf') =>
    newBody({ content: [{ attachment: { contentType, data: data.toString('base64'), title: 'x' } }] });
  const padded = (size: number) => Buffer.concat([PDF, Buffer.alloc(size - PDF.length, 0x25)]);

  it('accepts a document of exactly limits.documentMaxBytes and refuses one byte more with 413 HPB-00119, on create and on update', async () => {
    const small = await harness({ limits: { documentMaxBytes: 1000 } });
    const created = await small.ok('DocumentReference.create', { body: inline(padded(1000)) });
    expect(created.content[0].attachment.data).toBe(padded(1000).toString('base64'));
    expect(expectError(await small.call('DocumentReference.create', { body: inline(padded(1001)) }))).toEqual({
      status: 413,
      code: 'HPB-00119',
      issueCode: 'too-long',
    });
    const { meta: _m, ...body } = created;
    expect(expectError(await small.call('DocumentReference.update', { id: created.id, body: { ...body, ...inline(padded(1001)) } }))).toEqual({
      status: 413,
      code: 'HPB-00119',
      issueCode: 'too-long',
    });
    expect((await small.call('DocumentReference.update', { id: created.id, body: { ...body, ...inline(padded(999)) } })).ok).toBe(true);
  });

  it('refuses bytes that do not match a known declared contentType with 400 HPB-00120; an unknown type is stored as sent', async () => {
    expect(expectError(await h.call('DocumentReference.create', { body: inline(Buffer.from('plain text, not a PDF')) }))).toEqual({
      status: 400,
      code: 'HPB-00120',
      issueCode: 'invalid',
    });
    expect(expectError(await h.call('DocumentReference.create', { body: inline(PDF, 'image/png') }))).toMatchObject({ status: 400, code: 'HPB-00120' });
    expect((await h.call('DocumentReference.create', { body: inline(Buffer.from('<x/>'), 'application/xml') })).ok).toBe(true);
    expect((await h.call('DocumentReference.create', { body: inline(PNG, 'image/png') })).ok).toBe(true);
  });
});

describe('DocumentReference $upload contracts (modes.uploadContract)', () => {
  const pdf = { contentType: 'application/pdf', data: PDF.toString('base64') };
  const json = (body: unknown) => ({ rawBody: Buffer.from(JSON.stringify(body)), headers: { 'content-type': 'application/fhir+json' } });

  it('instance-binary takes a Binary and refuses raw bytes with 415', async () => {
    const b = await harness({ modes: { uploadContract: 'instance-binary' } });
    const res = await b.call('DocumentReference.upload', { id: IDS.documentReference, ...json({ resourceType: 'Binary', ...pdf }), now: NOW + 1 });
    if (!res.ok) throw new Error(res.message);
    expect(res.body.content[0].attachment).toMatchObject({ contentType: 'application/pdf', size: String(PDF.length) });
    expect(
      expectError(await b.call('DocumentReference.upload', { id: IDS.documentReference, rawBody: PDF, headers: { 'content-type': 'application/pdf' } })),
    ).toMatchObject({ status: 415 });
    expect(
      expectError(
        await b.call('DocumentReference.upload', {
          id: IDS.documentReference,
          ...json({ resourceType: 'Binary', contentType: 'application/pdf', data: Buffer.from('text').toString('base64') }),
        }),
      ),
    ).toMatchObject({ status: 400, code: 'HPB-00120' });
  });

  it('instance-parameters takes a Parameters with a document valueAttachment', async () => {
    const p = await harness({ modes: { uploadContract: 'instance-parameters' } });
    const res = await p.call('DocumentReference.upload', {
      id: IDS.documentReference,
      ...json({ resourceType: 'Parameters', parameter: [{ name: 'document', valueAttachment: pdf }] }),
    });
    expect(res.ok).toBe(true);
    expect(expectError(await p.call('DocumentReference.upload', { id: IDS.documentReference, ...json({ resourceType: 'Binary', ...pdf }) }))).toMatchObject({
      status: 400,
      code: 'HPB-00101',
    });
  });

  it('type-parameters creates a DocumentReference for the subject given', async () => {
    const t = await harness({ modes: { uploadContract: 'type-parameters' } });
    const res = await t.call('DocumentReference.upload', {
      ...json({
        resourceType: 'Parameters',
        parameter: [
          { name: 'document', valueAttachment: pdf },
          { name: 'subject', valueReference: { reference: `Patient/${IDS.patient}` } },
        ],
      }),
    });
    if (!res.ok) throw new Error(res.message);
    expect(res.headers?.Location).toBe(`${BASE}/fhir/R5/DocumentReference/${res.body.id}`);
    expect(res.body).toMatchObject({ status: 'current', subject: { reference: `Patient/${IDS.patient}` }, meta: { versionId: '1' } });
    expect(await t.ok('DocumentReference.read', { id: res.body.id })).toEqual(res.body);
    const big = await harness({ modes: { uploadContract: 'type-parameters' }, limits: { documentMaxBytes: 10 } });
    expect(
      expectError(
        await big.call(
          'DocumentReference.upload',
          json({
            resourceType: 'Parameters',
            parameter: [
              { name: 'document', valueAttachment: pdf },
              { name: 'subject', valueReference: { reference: `Patient/${IDS.patient}` } },
            ],
          }),
        ),
      ),
    ).toMatchObject({ status: 413, code: 'HPB-00119' });
    expect(
      expectError(await t.call('DocumentReference.upload', json({ resourceType: 'Parameters', parameter: [{ name: 'document', valueAttachment: pdf }] }))),
    ).toMatchObject({ status: 400, code: 'HPB-00101' });
  });

  it('type-document-reference creates the DocumentReference sent, with the document as its content', async () => {
    const t = await harness({ modes: { uploadContract: 'type-document-reference' } });
    const res = await t.call('DocumentReference.upload', json(newBody({ description: 'via $upload', content: [{ attachment: { ...pdf, title: 'n.pdf' } }] })));
    if (!res.ok) throw new Error(res.message);
    expect(res.body).toMatchObject({
      description: 'via $upload',
      content: [{ attachment: { contentType: 'application/pdf', size: String(PDF.length), title: 'n.pdf' } }],
    });
    expect(expectError(await t.call('DocumentReference.upload', json(newBody())))).toMatchObject({ status: 400, code: 'HPB-00120' });
  });
});

describe('base64 of large documents', () => {
  it('decodes tens of megabytes (no regular expression that recurses per character group)', async () => {
    const { decodeBase64 } = await import('../../../src/reference/resources/documents.js');
    const data = Buffer.alloc(24 * 1024 * 1024, 0x25);
    expect(decodeBase64(data.toString('base64'))?.equals(data)).toBe(true);
    expect(decodeBase64('not base64!')).toBeUndefined();
    expect(decodeBase64('QUJD\nREVG')?.toString()).toBe('ABCDEF');
  });

  it('accepts exactly what the strict pattern ^[A-Za-z0-9+/]*={0,2}$ accepts, whitespace ignored, length a multiple of 4', async () => {
    const { decodeBase64 } = await import('../../../src/reference/resources/documents.js');
    const strict = (text: string) => {
      const clean = text.replace(/\s+/g, '');
      return clean.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(clean) ? Buffer.from(clean, 'base64') : undefined;
    };
    const alphabet = 'QUJ+/=\n !-';
    let state = 7;
    const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31);
    const texts = ['', 'QQ==', 'QQ=A', 'Q===', '=QUJ', 'QUJ=', 'QUJD=', 'QU=D', 'QUJD QUJD', 'QUJD\tQQ=\n='];
    for (let i = 0; i < 5000; i++) texts.push(Array.from({ length: next() % 13 }, () => alphabet[next() % alphabet.length]).join(''));
    for (const text of texts) expect(decodeBase64(text)?.toString('hex'), JSON.stringify(text)).toBe(strict(text)?.toString('hex'));
  });
});
