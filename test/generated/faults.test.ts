/**
 * The generated and scopes checks pass on the clean reference in its
 * alternative-conformant modes, and each planted fault of
 * src/reference/faults/scopes.ts makes the checks of the rule it breaks fail.
 */
import { describe, expect, it } from 'vitest';
import generatedChecks from '../../suites/generated/checks.js';
import scopeChecks from '../../suites/scopes/checks.js';
import type { OperationModel } from '../../src/discovery/model.js';
import { faults } from '../../src/reference/faults/scopes.js';
import { describeResults, runChecks } from './target.js';

const allChecks = (model: OperationModel) => [...scopeChecks, ...generatedChecks(model)];

/** Fault -> checks that must fail with it planted (a sample where a fault breaks many). */
const CAUGHT_BY: Record<string, string[]> = {
  'encounter-read-scope-not-enforced': ['generated.encounter-read.other-resource-scope'],
  'rs-accepted-for-update': ['generated.medication-request-update.letters-rs', 'generated.encounter-update.letters-rs', 'generated.document-reference-update.letters-rs'],
  'medication-request-c-accepted-for-others': [
    'scopes.medication-request-c-refused-for-others',
    'generated.medication-request-read.letters-c',
    'generated.medication-request-search.letters-c',
    'generated.medication-request-update.letters-c',
  ],
  'rs-refused-for-read-search': ['generated.medication-request-read.required-scope', 'generated.encounter-search.required-scope', 'generated.document-reference-read.required-scope'],
  'cru-refused-for-update': ['generated.medication-request-update.required-scope', 'generated.encounter-update.required-scope', 'generated.document-reference-update.required-scope'],
  'cru-refused-for-create': ['generated.encounter-create.required-scope', 'generated.document-reference-create.required-scope'],
  'upload-refuses-cru': ['generated.document-reference-upload.required-scope'],
  'medication-request-create-refuses-c': ['scopes.medication-request-create-with-c', 'generated.medication-request-create.required-scope'],
  'r5-scopes-not-shared': ['scopes.document-reference-rs-both-releases', 'scopes.one-token-r4-and-r5'],
  'scope-refusal-wrong-code': ['generated.medication-request-read.other-resource-scope', 'generated.encounter-create.letters-rs', 'generated.document-reference-upload.other-resource-scope'],
  'missing-token-403': ['generated.medication-request-search.no-token', 'generated.document-reference-upload.no-token'],
  'missing-token-wrong-code': ['generated.encounter-update.no-token'],
  'validation-error-500': ['generated.medication-request-create.invalid-missing-subject', 'generated.encounter-update.invalid-wrong-type-status'],
  'validation-error-issue-processing': ['generated.encounter-create.invalid-missing-class', 'generated.medication-request-update.invalid-wrong-resource-type'],
  'scopes-supported-wrong-form': ['scopes.form'],
};

describe('generated and scopes checks on the clean reference', () => {
  it.each([
    ['default modes', {}],
    ['alternative modes', { createStatus: 200, updateStatus: 201, validationStatus: 400, excessScope: 'narrow', uploadPath: '$binary-upload', tokenResponseExtras: false }],
  ] as const)('%s: no fail, no error, no skip', async (_label, modes) => {
    const results = await runChecks(allChecks, { modes });
    expect(describeResults(results).filter((l) => /: (fail|error|skip)/.test(l))).toEqual([]);
    const observed = [...results.values()].filter((r) => r.level === 'observation');
    expect(observed.length).toBeGreaterThan(0);
    expect(observed.every((r) => r.outcome === 'observation' && r.observations.length > 0)).toBe(true);
  }, 120_000);
});

describe('each planted fault is caught', () => {
  it('every fault of the area has an expectation', () => {
    expect(Object.keys(CAUGHT_BY).sort()).toEqual(faults.map((f) => f.name).sort());
  });

  it.each(Object.entries(CAUGHT_BY))('%s', async (fault, expected) => {
    const only = new RegExp(`^(${expected.map((id) => id.replace(/\./g, '\\.')).join('|')})$`);
    const results = await runChecks(allChecks, { faults: [fault], only });
    expect(describeResults(results).filter((l) => !/: fail/.test(l))).toEqual([]);
    expect([...results.keys()].sort()).toEqual([...expected].sort());
  }, 60_000);
});
