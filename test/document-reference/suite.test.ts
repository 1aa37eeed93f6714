/**
 * The DocumentReference suite against the reference: with the contract and the size
 * maximum declared in the config (and declared wrongly), and against a target that
 * publishes no R5 CapabilityStatement.
 */
import { describe, expect, it } from 'vitest';
import { describeResults, nonConforming, runInProcess } from '../../src/run/in-process.js';
import type { CheckResult } from '../../src/engine/types.js';
import { EMBEDDED_LIMITS } from '../../src/run/embedded.js';

const MAX = 1024 * 1024;
/** The embedded run's short windows and high ceilings, with the document maximum pinned. */
const LIMITS = { ...EMBEDDED_LIMITS, documentMaxBytes: MAX };
const DOCREF = /^document-reference\./;
const outcome = (results: Map<string, CheckResult>, id: string) => `${id}: ${results.get(id)?.outcome}`;

describe('quick runs against the embedded reference', () => {
  const SIZE = /^document-reference\.size-(limit-(create|update|upload)|maximum)$/;
  const declaredMax = (results: Map<string, CheckResult>) =>
    results.get('document-reference.size-maximum')?.observations.find((o) => o.key === 'document-reference.size-maximum')?.value;

  it("declare the reference's document maximum: the size checks judge it exactly (no 32 MiB probe) and pass", async () => {
    const results = await runInProcess('all', { only: SIZE, profile: 'quick', limits: LIMITS });
    expect(nonConforming(results)).toEqual([]);
    expect(declaredMax(results)).toEqual({ bytes: MAX, from: 'config documentReference.maxBytes' });
  }, 300_000);

  it.concurrent.each([['document-reference-inline-size-not-enforced'], ['document-reference-oversize-500']] as const)(
    'fault %s still fails the size checks it names',
    async (fault) => {
      const results = await runInProcess('all', { only: SIZE, profile: 'quick', limits: LIMITS, faults: [fault] });
      expect(declaredMax(results)).toMatchObject({ bytes: MAX });
      for (const way of ['create', 'update'])
        expect(outcome(results, `document-reference.size-limit-${way}`)).toBe(`document-reference.size-limit-${way}: fail`);
    },
    300_000,
  );
});

describe('declared in the config (documentReference)', () => {
  it('a matching declaration: every document check runs and passes, the maximum itself is accepted', async () => {
    const results = await runInProcess('all', {
      only: DOCREF,
      limits: LIMITS,
      config: { documentReference: { upload: { path: '/fhir/R5/DocumentReference/{id}/$upload', payload: 'raw', contentType: 'image/png' }, maxBytes: MAX } },
    });
    expect(nonConforming(results)).toEqual([]);
    for (const way of ['create', 'update', 'upload'])
      expect(outcome(results, `document-reference.size-limit-${way}`)).toBe(`document-reference.size-limit-${way}: pass`);
    const contract = results.get('document-reference.upload-contract')!.observations.find((o) => o.key === 'document-reference.upload-contract')!;
    expect(contract.value).toMatchObject({ contentType: 'image/png', source: 'config' });
  }, 300_000);

  it('documents accepted at the declared maximum are shrunk: later searches of the patient stay under the body cap', async () => {
    // 1 MiB documents of the patient, left whole, put every _count=100 DocumentReference search over the 2 MiB cap (error).
    const results = await runInProcess('all', {
      only: /^(document-reference\.size-limit-(create|update)|pagination\..*\.document-reference)$/,
      limits: LIMITS,
      config: { documentReference: { maxBytes: MAX } },
    });
    expect(nonConforming(results).filter((l) => !l.includes(': skip'))).toEqual([]);
    expect(results.get('pagination.count-honoured.document-reference')?.outcome).toBe('pass');
    for (const way of ['create', 'update']) {
      const shrunk = results.get(`document-reference.size-limit-${way}`)!.observations.find((o) => o.key === `document-reference.large-document-shrunk.${way}`);
      expect(shrunk?.value, way).toMatchObject({ status: 200 });
    }
  }, 300_000);

  it('a maximum declared above the real one fails every way (the declared maximum is refused)', async () => {
    const results = await runInProcess('all', { only: /size-limit/, limits: LIMITS, config: { documentReference: { maxBytes: 2 * MAX } } });
    for (const way of ['create', 'update', 'upload']) {
      const r = results.get(`document-reference.size-limit-${way}`)!;
      expect(r.outcome, describeResults(results).join('\n')).toBe('fail');
      expect(r.message).toMatch(/exactly the declared maximum \(2097152 bytes\) was refused with 413 HPB-00119/);
    }
  }, 300_000);

  it('a maximum declared below the real one fails every way (one byte more is accepted)', async () => {
    const results = await runInProcess('all', { only: /size-limit/, limits: LIMITS, config: { documentReference: { maxBytes: MAX / 2 } } });
    for (const way of ['create', 'update', 'upload']) expect(results.get(`document-reference.size-limit-${way}`)!.message).toMatch(/expected 413, got 20[01]/);
  }, 300_000);

  it('a declared payload the target does not take: the valid document is refused, a failure of the declared contract', async () => {
    const results = await runInProcess('all', {
      only: /upload/,
      config: { documentReference: { upload: { path: '/fhir/R5/DocumentReference/{id}/$upload', payload: 'binary' } } },
    });
    expect(results.get('document-reference.upload-valid-document')!.outcome).toBe('fail');
    // The other $upload rules are still checked in the declared form (here every upload is refused with 400 HPB-00120).
    expect(results.get('document-reference.upload-type-mismatch-400')!.outcome).toBe('pass');
  }, 300_000);
});

describe('no R5 CapabilityStatement', () => {
  it('the R5 read, search, create, update, 404 and scope checks run on the paths and scopes the spec states', async () => {
    const results = await runInProcess('all', { only: /^(document-reference\.|generated\.document-reference-)/, modes: { r5Capability: 'none' } });
    expect(nonConforming(results)).toEqual([]);
    const ran = [
      'document-reference.read',
      'document-reference.search',
      'document-reference.create',
      'document-reference.update',
      'document-reference.read-unknown-404',
      'document-reference.search-patient',
      'document-reference.create-read-round-trip',
      'document-reference.upload-valid-document',
      'generated.document-reference-read.other-resource-scope',
      'generated.document-reference-create.letters-rs',
      'generated.document-reference-update.required-scope',
    ];
    expect(ran.map((id) => outcome(results, id))).toEqual(ran.map((id) => `${id}: pass`));
    // Nothing declared: one 32 MiB document each way, refused as too large, and recorded.
    const probes = results.get('document-reference.size-maximum')!.observations;
    expect(Object.fromEntries(probes.map((o) => [o.key, o.value]))).toMatchObject({
      'document-reference.size-maximum': { assumedBelow: 32 * 1024 * 1024 },
      'document-reference.size-probe.create': { status: 413, code: 'HPB-00119' },
      'document-reference.size-probe.update': { status: 413, code: 'HPB-00119' },
      'document-reference.size-probe.upload': { status: 413, code: 'HPB-00119' },
    });
    const contract = results.get('document-reference.upload-contract')!.observations.find((o) => o.key === 'document-reference.upload-contract')!;
    expect(contract.value).toMatchObject({ form: 'POST /fhir/R5/DocumentReference/{id}/$upload (instance level, raw)', source: 'conventional' });
  }, 300_000);
});

describe('success status of create and update (not shown)', () => {
  it('a target answering 202 with the resource (and Location on create) passes every DocumentReference write check', async () => {
    const results = await runInProcess('all', { only: DOCREF, modes: { createStatus: 202, updateStatus: 202 } });
    expect(nonConforming(results)).toEqual([]);
    const ran = [
      'document-reference.create',
      'document-reference.update',
      'document-reference.create-read-round-trip',
      'document-reference.update-as-read-round-trip',
    ];
    expect(ran.map((id) => outcome(results, id))).toEqual(ran.map((id) => `${id}: pass`));
    const status = results.get('document-reference.create')!.observations.find((o) => o.key === 'document-reference.create.status')!;
    expect(status.value).toMatchObject({ status: 202, location: true });
  }, 300_000);
});
