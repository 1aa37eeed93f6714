/** Config: the declared $upload contract and document size maximum (documentReference). */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactedConfig, resolveConfig } from '../../src/config/index.js';
import { ConformanceError } from '../../src/errors.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fc-config-dr-'));
  const key = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey;
  await writeFile(join(dir, 'ec.jwk.json'), JSON.stringify(key.export({ format: 'jwk' })));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const raw = (documentReference?: unknown) => ({
  baseUrl: 'https://staging.example.com',
  clients: [{ role: 'main', clientId: 'c', alg: 'ES384', privateKey: { file: 'ec.jwk.json' } }],
  ...(documentReference === undefined ? {} : { documentReference }),
});

async function refused(documentReference: unknown): Promise<ConformanceError> {
  const e = await resolveConfig(raw(documentReference), dir).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ConformanceError);
  return e as ConformanceError;
}

describe('documentReference', () => {
  it('is empty when not declared', async () => {
    const c = await resolveConfig(raw(), dir);
    expect(c.documentReference).toEqual({});
    expect(redactedConfig(c)).not.toHaveProperty('documentReference');
  });

  it('takes the upload contract and the maximum; the level follows from the path', async () => {
    const c = await resolveConfig(
      raw({ upload: { path: '/fhir/R5/DocumentReference/{id}/$upload', payload: 'raw', contentType: 'image/png' }, maxBytes: 5_000_000 }),
      dir,
    );
    expect(c.documentReference).toEqual({
      upload: { path: '/fhir/R5/DocumentReference/{id}/$upload', level: 'instance', payload: 'raw', contentType: 'image/png' },
      maxBytes: 5_000_000,
    });
    expect(redactedConfig(c)).toMatchObject({ documentReference: { maxBytes: 5_000_000 } });
    const t = await resolveConfig(raw({ upload: { path: '/fhir/R5/DocumentReference/$upload', payload: 'parameters', parameterName: 'file' } }), dir);
    expect(t.documentReference.upload).toMatchObject({ level: 'type', parameterName: 'file' });
  });

  it('takes a query template after the path: {patient} in it, the level from the path before it', async () => {
    const t = await resolveConfig(
      raw({ upload: { path: '/fhir/R5/DocumentReference/$upload?patient={patient}&type={type}&format=pdf', payload: 'raw' } }),
      dir,
    );
    expect(t.documentReference.upload).toEqual({
      path: '/fhir/R5/DocumentReference/$upload?patient={patient}&type={type}&format=pdf',
      level: 'type',
      payload: 'raw',
    });
  });

  it('names the placeholder it has no value for, and the fix', async () => {
    const e = await refused({ upload: { path: '/fhir/R5/DocumentReference/$upload?subject={subject}' } });
    expect(e.message).toContain('has the placeholder {subject} in the query');
    expect(e.message).toContain(
      "use {id} in the path (the instance level) and {patient}, {type} or {category} in the query (the fixture patient's id, the document's type and category tokens)",
    );
  });

  it.each([
    [{ maxBytes: 0 }, 'documentReference.maxBytes'],
    [{ maxBytes: 1.5 }, 'documentReference.maxBytes'],
    [{ upload: { payload: 'raw' } }, 'documentReference.upload.path'],
    [{ upload: { path: 'fhir/R5/DocumentReference/$upload' } }, 'documentReference.upload.path'],
    [{ upload: { path: '/fhir/R5/DocumentReference/{id}' } }, 'documentReference.upload.path'],
    [{ upload: { path: '/fhir/R5/DocumentReference/$upload', payload: 'multipart' } }, 'documentReference.upload.payload'],
    [{ upload: { path: '/fhir/R5/DocumentReference/$upload', contentType: 'application/zip' } }, 'documentReference.upload.contentType'],
    [{ upload: { path: '/fhir/R5/DocumentReference/$upload', level: 'instance' } }, 'documentReference.upload.level'],
    [{ upload: { path: '/fhir/R5/DocumentReference/{id}/$upload', level: 'type' } }, 'documentReference.upload.level'],
    [{ upload: { path: '/fhir/R5/DocumentReference/{id}/$upload', payload: 'document-reference' } }, 'documentReference.upload.payload'],
    [{ upload: { path: '/fhir/R5/DocumentReference/$upload' }, sizeMax: 3 }, 'documentReference.sizeMax'],
    [{ upload: { path: '/fhir/R5/DocumentReference/$upload?subject={subject}' } }, 'documentReference.upload.path'],
    [{ upload: { path: '/fhir/R5/DocumentReference/{patient}/$upload' } }, 'documentReference.upload.path'],
    [{ upload: { path: '/fhir/R5/DocumentReference/$upload?patient={patient}', level: 'instance' } }, 'documentReference.upload.level'],
  ])('refuses %j naming %s', async (declared, field) => {
    const e = await refused(declared);
    expect(e.code).toBe('ERR_CONFIG_INVALID');
    expect(e.field).toBe(field);
  });
});
