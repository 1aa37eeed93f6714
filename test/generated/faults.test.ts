/**
 * The generated and scopes checks pass on the clean reference in its
 * alternative-conformant modes, and each fault of src/reference/faults/scopes.ts
 * names the checks it must fail. That each planted fault makes them fail is the
 * mutation shards' assertion (test/mutation/faults-1.test.ts, faults-2.test.ts),
 * not repeated here.
 */
import { describe, expect, it } from 'vitest';
import generatedChecks from '../../suites/generated/checks.js';
import scopeChecks from '../../suites/scopes/checks.js';
import type { OperationModel } from '../../src/discovery/model.js';
import { faults } from '../../src/reference/faults/scopes.js';
import { describeResults, runChecks } from './target.js';

const allChecks = (model: OperationModel) => [...scopeChecks, ...generatedChecks(model)];

/** Fault -> checks that must fail with it planted: what each fault declares (`checks`). */
const CAUGHT_BY: Record<string, string[]> = Object.fromEntries(faults.map((f) => [f.name, f.checks ?? []]));

describe('generated and scopes checks on the clean reference', () => {
  it.each([
    ['default modes', {}],
    [
      'alternative modes',
      { createStatus: 200, updateStatus: 201, validationStatus: 400, excessScope: 'narrow', uploadPath: '$binary-upload', tokenResponseExtras: false },
    ],
  ] as const)(
    '%s: no fail, no error, no skip',
    async (_label, modes) => {
      const results = await runChecks(allChecks, { modes });
      expect(describeResults(results).filter((l) => /: (fail|error|skip)/.test(l))).toEqual([]);
      const observed = [...results.values()].filter((r) => r.level === 'observation');
      expect(observed.length).toBeGreaterThan(0);
      expect(observed.every((r) => r.outcome === 'observation' && r.observations.length > 0)).toBe(true);
    },
    120_000,
  );
});

describe('each planted fault is caught', () => {
  it('every fault of the area names the checks it must fail', () => {
    expect(faults.filter((f) => !f.checks?.length).map((f) => f.name)).toEqual([]);
  });

  it('named checks beside an empty requirement list select exactly those checks, whatever their area', async () => {
    const expected = [...new Set(Object.values(CAUGHT_BY).flat())];
    const results = await runChecks('all', { ids: expected, requirements: [] });
    expect([...results.keys()].sort()).toEqual([...expected].sort());
  }, 60_000);
});
