import { describe, expect, it } from 'vitest';
import type { HttpResponse } from '../../src/http/types.js';
import { CATALOG_SYSTEM } from '../../src/service/catalog.js';
import { catalogCodeOf as catalogCode, catalogFindings, formatFindings, type ErrorSample } from '../../src/service/errors.js';

function response(status: number, body: unknown): HttpResponse {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return {
    status,
    headers: {},
    text,
    json: typeof body === 'string' ? undefined : body,
    bodyTruncated: false,
    exchange: { id: 'x-1' } as HttpResponse['exchange'],
  };
}

function outcome(issue: Record<string, unknown>): unknown {
  return { resourceType: 'OperationOutcome', issue: [issue] };
}

const sample = (status: number, body: unknown, release: 'R4' | 'R5' = 'R4'): ErrorSample => ({ kind: 'k', release, res: response(status, body) });
const catalogIssue = (code: string, issueCode = 'not-found') => ({
  severity: 'error',
  code: issueCode,
  diagnostics: `${code}: message`,
  details: { coding: [{ system: CATALOG_SYSTEM, code }] },
});
const requirements = (s: ErrorSample, f: (s: ErrorSample) => Array<{ requirement?: string }>) => f(s).map((x) => x.requirement);

describe('formatFindings (Errors > Format 1, 2)', () => {
  it('accepts a well-formed OperationOutcome, with or without details', () => {
    expect(formatFindings(sample(404, outcome(catalogIssue('HPB-00102'))))).toEqual([]);
    expect(formatFindings(sample(405, outcome({ severity: 'error', code: 'not-supported', diagnostics: 'Method not allowed' })))).toEqual([]);
  });

  it('rejects a body that is not an OperationOutcome', () => {
    expect(requirements(sample(403, 'Forbidden'), formatFindings)).toEqual(['errors.operation-outcome-shape']);
    expect(requirements(sample(403, { resourceType: 'OperationOutcome', issue: [] }), formatFindings)).toEqual(['errors.operation-outcome-shape']);
  });

  it('names the rule each missing or wrong field breaks', () => {
    expect(requirements(sample(401, outcome({ severity: 'error', diagnostics: 'x' })), formatFindings)).toEqual(['errors.status-and-issue-code-present']);
    expect(requirements(sample(401, outcome({ code: 'login', diagnostics: 'x' })), formatFindings)).toEqual(['errors.operation-outcome-shape']);
    expect(requirements(sample(404, outcome({ severity: 'error', code: 'resource-not-found', diagnostics: 'x' })), formatFindings)).toEqual([
      'errors.issue-code-fhir-issue-type',
    ]);
    expect(requirements(sample(404, outcome({ severity: 'bad', code: 'not-found', diagnostics: 'x' })), formatFindings)).toEqual([
      'errors.operation-outcome-shape',
    ]);
    expect(requirements(sample(404, outcome({ ...catalogIssue('HPB-00102'), details: { coding: [{ code: 'HPB-00102' }] } })), formatFindings)).toEqual([
      'errors.details-coding-shape',
    ]);
  });

  it('knows the issue types of each release', () => {
    const success = outcome({ severity: 'information', code: 'success', diagnostics: 'x' });
    expect(formatFindings(sample(400, success, 'R5'))).toEqual([]);
    expect(requirements(sample(400, success, 'R4'), formatFindings)).toEqual(['errors.issue-code-fhir-issue-type']);
  });
});

describe('catalogFindings (Errors > Format 3 and the catalogs)', () => {
  it('accepts catalog errors at their catalog status, HPB-00101 also with 422', () => {
    expect(catalogFindings(sample(404, outcome(catalogIssue('HPB-00102'))))).toEqual([]);
    expect(catalogFindings(sample(422, outcome(catalogIssue('HPB-00101', 'business-rule'))))).toEqual([]);
    expect(catalogFindings(sample(405, outcome({ severity: 'error', code: 'not-supported', diagnostics: 'Method not allowed' })))).toEqual([]);
  });

  it('finds each broken rule', () => {
    const issue = catalogIssue('HPB-00102');
    const { details: _d, ...noDetails } = issue;
    expect(requirements(sample(404, outcome(noDetails)), catalogFindings)).toEqual(['errors.catalog-details-coding']);
    expect(requirements(sample(404, outcome({ ...issue, diagnostics: 'message' })), catalogFindings)).toEqual(['errors.catalog-code-format']);
    expect(requirements(sample(404, outcome({ ...issue, diagnostics: 'HPB-00111: message' })), catalogFindings)).toEqual([
      'errors.prefix-matches-details-code',
    ]);
    expect(
      requirements(sample(404, outcome({ ...issue, diagnostics: 'message', details: { coding: [{ system: 'urn:x', code: 'gone' }] } })), catalogFindings),
    ).toEqual(['errors.prefix-only-with-catalog-code']);
    expect(requirements(sample(400, outcome(issue)), catalogFindings)).toEqual(['errors.catalog-code-format']);
    expect(requirements(sample(404, outcome(catalogIssue('HPB-99999'))), catalogFindings)).toEqual(['errors.catalog-code-format']);
    expect(requirements(sample(404, outcome({ ...issue, details: { coding: [{ code: 'HPB-00102' }] } })), catalogFindings)).toEqual([
      'errors.catalog-details-coding',
    ]);
  });

  it('reads the catalog code from details, else from the prefix', () => {
    expect(catalogCode(response(404, outcome(catalogIssue('HPB-00102'))))).toBe('HPB-00102');
    expect(catalogCode(response(404, outcome({ severity: 'error', code: 'not-found', diagnostics: 'SVC-00002: no route' })))).toBe('SVC-00002');
    expect(catalogCode(response(404, outcome({ severity: 'error', code: 'not-found', diagnostics: 'Not found: x' })))).toBeUndefined();
  });
});
