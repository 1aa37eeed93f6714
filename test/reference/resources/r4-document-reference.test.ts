/** Mode r4DocumentReference=writes: DocumentReference mirrored on R4 over the same records, held to the R4 schema. */
import { describe, expect, it } from 'vitest';
import { capabilityStatement, openApiDocument, servedOperations } from '../../../src/reference/discovery.js';
import { DEFAULT_MODES } from '../../../src/reference/types.js';
import { sharedFhirValidator } from '../../../src/fhir/index.js';
import { expectError, harness, IDS } from './harness.js';

const init = (r4DocumentReference: 'none' | 'writes') => ({
  baseUrl: 'http://127.0.0.1:9999',
  tokenUrl: 'http://127.0.0.1:9999/auth/token',
  modes: { ...DEFAULT_MODES, r4DocumentReference },
  scopesSupported: [],
  startedAt: '2025-03-10T12:00:00Z',
});

describe('r4DocumentReference', () => {
  it('is published in the OpenAPI document (with a request schema) and the R4 CapabilityStatement only in mode writes', () => {
    const paths = (mode: 'none' | 'writes') =>
      Object.keys((openApiDocument(init(mode)) as { paths: object }).paths).filter((p) => p.includes('DocumentReference'));
    expect(paths('none')).toEqual([]);
    expect(paths('writes')).toEqual(['/fhir/R4/DocumentReference/{id}', '/fhir/R4/DocumentReference']);
    const types = (mode: 'none' | 'writes') =>
      (capabilityStatement('R4', init(mode)) as { rest: Array<{ resource: Array<{ type: string }> }> }).rest[0]!.resource.map((r) => r.type);
    expect(types('writes')).toContain('DocumentReference');
    expect(types('none')).not.toContain('DocumentReference');
    expect(
      servedOperations(init('writes').modes)
        .filter((o) => o.release === 'R4' && o.resource === 'DocumentReference')
        .map((o) => o.interaction),
    ).toEqual(['read', 'search-type', 'create', 'update']);
  });

  it('reads the R5 records as valid R4 (attachment.size a number) and writes them back', async () => {
    const h = await harness({ modes: { r4DocumentReference: 'writes' } });
    const doc = await h.ok('R4DocumentReference.read', { id: IDS.documentReference });
    expect(sharedFhirValidator().validate('R4', doc)).toEqual([]);
    const created = await h.ok('R4DocumentReference.create', {
      body: {
        resourceType: 'DocumentReference',
        status: 'current',
        subject: { reference: `Patient/${IDS.patient}` },
        content: [{ attachment: { contentType: 'text/plain', data: Buffer.from('hello').toString('base64') } }],
      },
    });
    expect((await h.ok('DocumentReference.read', { id: created.id })).status).toBe('current');
    expect(
      expectError(
        await h.call('R4DocumentReference.create', {
          body: { resourceType: 'DocumentReference', status: 'current', subject: { reference: `Patient/${IDS.patient}` } },
        }),
      ),
    ).toMatchObject({ status: 400, code: 'HPB-00101' });
  });
});
