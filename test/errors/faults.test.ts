import { describe, expect, it } from 'vitest';
import type { HttpResponse } from '../../src/http/types.js';
import { catalogError, operationOutcome } from '../../src/reference/outcome.js';
import { faults } from '../../src/reference/faults/errors.js';
import { FAULTS } from '../../src/reference/faults/index.js';
import type { FaultResponse } from '../../src/reference/faults/types.js';
import { catalogFindings, formatFindings, type ErrorSample } from '../../src/service/errors.js';
import checks from '../../suites/errors/checks.js';
import { nonConforming, runInProcess } from '../../src/run/in-process.js';

/** The reference's own error responses, as the HTTP core renders them. */
const REFERENCE_ERRORS: FaultResponse[] = [
  catalogError('SVC-00004'),
  catalogError('HPB-00104'),
  catalogError('HPB-00102'),
  catalogError('SVC-00002'),
  catalogError('HPB-00101', { status: 400, message: 'Validation error: the body is not valid JSON' }),
].map((e) => ({ status: e.status, headers: { 'Content-Type': 'application/fhir+json; charset=utf-8' }, body: operationOutcome(e) }));

function asSample(res: FaultResponse): ErrorSample {
  const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
  const http: HttpResponse = {
    status: res.status,
    headers: {},
    text,
    json: typeof res.body === 'string' ? undefined : res.body,
    bodyTruncated: false,
    exchange: { id: 'x' } as HttpResponse['exchange'],
  };
  return { kind: 'k', release: 'R4', res: http };
}

const findings = (res: FaultResponse) => [...formatFindings(asSample(res)), ...catalogFindings(asSample(res))];

describe('errors faults', () => {
  it("the reference's own errors break no format rule", () => {
    for (const res of REFERENCE_ERRORS) expect(findings(res)).toEqual([]);
  });

  // Faults judged by status/code rules of a single check rather than the format rules.
  const byStatus = new Set([
    'malformed-json-500',
    'unknown-path-svc-00002-wrong-status',
    'malformed-json-svc-00003-wrong-status',
    'error-validation-issue-code-not-invalid',
    'not-found-500',
  ]);

  it.each(faults.filter((f) => !byStatus.has(f.name)).map((f) => [f.name, f] as const))('%s breaks a format rule it names', (_name, fault) => {
    const changed = REFERENCE_ERRORS.map((res) => fault.transformResponse!(structuredClone(res), { method: 'GET', path: '/fhir/R4/MedicationRequest/x' }));
    const broken = changed.flatMap(findings).map((f) => f.requirement);
    expect(broken.length).toBeGreaterThan(0);
    expect(broken.some((r) => fault.violates.includes(r!))).toBe(true);
  });

  it.each([...byStatus])('%s changes the status or issue code of the response it targets', (name) => {
    const fault = FAULTS.find((f) => f.name === name)!;
    const changed = REFERENCE_ERRORS.map((res) => fault.transformResponse!(structuredClone(res), { method: 'POST', path: '/fhir/R4/MedicationRequest' }));
    expect(changed).not.toEqual(REFERENCE_ERRORS);
  });
});

describe('errors faults against the reference', () => {
  // That each planted fault fails the checks it names is the mutation shards' assertion
  // (test/mutation/faults-1.test.ts, faults-2.test.ts), not repeated here.
  it('every errors fault names the checks it must fail', () => {
    expect(faults.filter((f) => !f.checks?.length).map((f) => f.name)).toEqual([]);
  });

  it.concurrent.each([
    ['issue codes other than invalid/throttled all processing', { issueCodes: 'processing' }],
    ['generic errors as plain text', { genericErrors: 'plain-text' }],
    ['every validation error with 400', { validationStatus: 400 }],
  ] as const)(
    'the errors suite passes against the reference (%s)',
    async (_label, modes) => {
      const results = await runInProcess(checks, { modes });
      expect(nonConforming(results)).toEqual([]);
    },
    120_000,
  );
});
