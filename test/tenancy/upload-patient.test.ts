/**
 * tenancy.foreign-patient-in-upload runs where the upload contract names a patient (type level: its
 * query, its Parameters subject, its DocumentReference subject) and skips where it names none
 * (instance level). Every type-level contract passes with each way of answering a patient that exists
 * nowhere (mode unresolvedReference); the fault that resolves the upload's patient in any organization
 * fails it in another channel than the one it is proven in (its query: test/mutation/faults-*.test.ts).
 */
import { describe, expect, it } from 'vitest';
import checks from '../../suites/tenancy/checks.js';
import { pick, runChecks } from '../auth/target.js';

const ID = 'tenancy.foreign-patient-in-upload';
const check = pick(checks, [ID]);

describe(ID, () => {
  it.each([
    ['type-parameters', 'refused'],
    ['type-document-reference', 'not-found'],
    ['type-query-raw', 'unchecked'],
    ['type-query-binary', 'refused'],
  ] as const)('passes with the contract %s when a patient of no record of the caller is %s', async (uploadContract, unresolvedReference) => {
    const result = (await runChecks(check, { modes: { uploadContract, unresolvedReference } })).get(ID);
    expect(result?.outcome, result?.message).toBe('pass');
  });

  it('skips an instance-level contract, which names no patient', async () => {
    const result = (await runChecks(check, { modes: { uploadContract: 'instance-binary' } })).get(ID);
    expect(result?.outcome).toBe('skip');
    expect(result?.message).toMatch(/names no patient/);
  });

  it("fails when the upload's patient is found in any organization, the patient in a Parameters subject", async () => {
    const result = (await runChecks(check, { faults: ['tenancy-upload-foreign-patient'], modes: { uploadContract: 'type-parameters' } })).get(ID);
    expect(result?.outcome).toBe('fail');
    expect(result?.message).toMatch(
      /naming another organization's patient .* in the Parameters "subject" valueReference was accepted \(200\) while one naming a patient that exists nowhere was refused/,
    );
  });
});

describe('a planted fault that brings its modes', () => {
  it('runs the reference in those modes, and the run states the fault and the modes', async () => {
    const { runConformance } = await import('../../src/run/index.js');
    const outcome = await runConformance({
      checks: check,
      profile: 'quick',
      reference: { faults: ['tenancy-upload-foreign-patient'] },
      progress: false,
      writeReports: false,
    });
    expect(outcome.results.map((r) => [r.id, r.outcome])).toEqual([[ID, 'fail']]);
    expect(outcome.result.info.deviations).toEqual(
      expect.arrayContaining([
        'embedded reference with fault tenancy-upload-foreign-patient planted',
        'embedded reference in mode uploadContract=type-query-raw',
      ]),
    );
  });
});
