/**
 * tenancy.foreign-reference-in-write judges a refusal only where the same body naming the caller's own
 * record is accepted: a target that refuses the body for another reason (here every MedicationRequest
 * create, for its scope) leaves those surfaces unjudged instead of passing them. Each way of answering a
 * reference to no record of the caller's (mode unresolvedReference) passes; that each of its faults
 * fails it is the mutation shards' assertion (test/mutation/faults-*.test.ts).
 */
import { describe, expect, it } from 'vitest';
import checks from '../../suites/tenancy/checks.js';
import { pick, runChecks } from '../auth/target.js';

const ID = 'tenancy.foreign-reference-in-write';
const check = pick(checks, [ID]);

function surfaces(result: { observations: Array<{ key: string; value: unknown }> } | undefined) {
  return result?.observations.find((o) => o.key === 'surfaces')?.value as { checked: string[]; notChecked?: string[] };
}

describe(ID, () => {
  it.each(['refused', 'not-found', 'unchecked'] as const)('passes when references to no record of the caller are %s, on every surface', async (mode) => {
    const result = (await runChecks(check, { profile: 'full', modes: { unresolvedReference: mode } })).get(ID);
    expect(result?.outcome, result?.message).toBe('pass');
    expect(surfaces(result).checked).toHaveLength(5);
  });

  it('leaves unjudged a surface whose body is refused whatever it names', async () => {
    const result = (await runChecks(check, { profile: 'full', faults: ['required-scope-refused-medication-request-create'] })).get(ID);
    expect(result?.outcome, result?.message).toBe('pass');
    const s = surfaces(result);
    expect(s.checked).toEqual(['R4 Encounter.subject', 'R4 Encounter.participant', 'R5 DocumentReference.subject']);
    expect(s.notChecked?.map((n) => n.split(' (')[0])).toEqual(['R4 MedicationRequest.subject', 'R4 MedicationRequest.encounter']);
  });
});
