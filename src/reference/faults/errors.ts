/**
 * Faults caught by the errors suite: each rewrites error responses
 * (OperationOutcome bodies) so that one rule of Errors > Format, or one
 * catalog row, is broken.
 */
import { issue0, issueCode, type Issue } from './edit.js';
import type { FaultDef, FaultResponse } from './types.js';

/** Rewrites issue[0] of error responses for which `when` holds. */
export function rewriteIssue(when: (res: FaultResponse, issue: Issue) => boolean, change: (issue: Issue) => Issue): FaultDef['transformResponse'] {
  return (res) => {
    const issue = issue0(res);
    if (res.status < 400 || !issue || !when(res, issue)) return res;
    const body = res.body as { issue: Issue[] };
    return { ...res, body: { ...body, issue: [change({ ...issue }), ...body.issue.slice(1)] } };
  };
}

const withCode = (code: string) => (_res: FaultResponse, issue: Issue) => issueCode(issue) === code;
const anyCatalog = (_res: FaultResponse, issue: Issue) => issueCode(issue) !== undefined;
const withoutPrefix = (issue: Issue) => (issue.diagnostics ?? '').replace(/^(HPB|SVC)-\d{5}: /, '');

export const faults: FaultDef[] = [
  {
    name: 'error-without-details-coding',
    area: 'errors',
    violates: ['errors.catalog-details-coding'],
    symptom: 'Catalog errors keep the "<CODE>: " diagnostics prefix but carry no details.coding.',
    checks: ['errors.catalog-code-format'],
    transformResponse: rewriteIssue(anyCatalog, ({ details: _details, ...rest }) => rest),
  },
  {
    name: 'error-diagnostics-without-prefix',
    area: 'errors',
    violates: ['errors.catalog-code-format'],
    symptom: 'Catalog errors carry details.coding, but diagnostics lack the "<CODE>: " prefix.',
    checks: ['errors.catalog-code-format', 'invariants.error-catalog-code-format'],
    transformResponse: rewriteIssue(anyCatalog, (issue) => ({ ...issue, diagnostics: withoutPrefix(issue) })),
  },
  {
    name: 'error-prefix-differs-from-details',
    area: 'errors',
    violates: ['errors.prefix-matches-details-code'],
    symptom: '404 HPB-00102 errors say "HPB-00111: ..." in diagnostics while details.coding says HPB-00102.',
    checks: ['errors.catalog-code-format'],
    transformResponse: rewriteIssue(withCode('HPB-00102'), (issue) => ({ ...issue, diagnostics: `HPB-00111: ${withoutPrefix(issue)}` })),
  },
  {
    name: 'error-details-without-catalog-code',
    area: 'errors',
    violates: ['errors.prefix-only-with-catalog-code'],
    symptom: '404 errors have plain-text diagnostics but still carry details.coding (an HL7 operation-outcome code, no catalog code).',
    checks: ['errors.catalog-code-format'],
    transformResponse: rewriteIssue(
      (res, issue) => res.status === 404 && anyCatalog(res, issue),
      (issue) => ({
        ...issue,
        diagnostics: withoutPrefix(issue),
        details: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/operation-outcome', code: 'MSG_NO_EXIST' }] },
      }),
    ),
  },
  {
    name: 'error-catalog-status-mismatch',
    area: 'errors',
    violates: ['errors.catalog-code-format'],
    symptom: 'HPB-00104 (a 403 in the catalog) is sent with status 400.',
    checks: ['errors.catalog-code-format'],
    transformResponse: (res) => (res.status === 403 && issueCode(issue0(res)) === 'HPB-00104' ? { ...res, status: 400 } : res),
  },
  {
    name: 'error-details-coding-without-system',
    area: 'errors',
    violates: ['errors.details-coding-shape', 'errors.catalog-details-coding'],
    symptom: 'details.coding of catalog errors has a code but no system.',
    checks: ['errors.operation-outcome-format', 'errors.catalog-code-format'],
    transformResponse: rewriteIssue(anyCatalog, (issue) => ({ ...issue, details: { coding: (issue.details?.coding ?? []).map(({ system: _s, ...c }) => c) } })),
  },
  {
    name: 'error-issue-code-not-fhir-type',
    area: 'errors',
    violates: ['errors.issue-code-fhir-issue-type'],
    symptom: '404 errors carry issue code "resource-not-found", which is not a FHIR issue type.',
    checks: ['errors.operation-outcome-format'],
    transformResponse: rewriteIssue(
      (res) => res.status === 404,
      (issue) => ({ ...issue, code: 'resource-not-found' }),
    ),
  },
  {
    name: 'error-issue-code-missing',
    area: 'errors',
    violates: ['errors.status-and-issue-code-present'],
    symptom: '401 errors carry no issue[0].code.',
    checks: ['errors.operation-outcome-format'],
    transformResponse: rewriteIssue(
      (res) => res.status === 401,
      ({ code: _code, ...rest }) => rest,
    ),
  },
  {
    name: 'error-issue-severity-missing',
    area: 'errors',
    violates: ['errors.operation-outcome-shape'],
    symptom: 'Error issues carry no severity.',
    checks: ['errors.operation-outcome-format', 'invariants.error-operation-outcome'],
    transformResponse: rewriteIssue(
      () => true,
      ({ severity: _severity, ...rest }) => rest,
    ),
  },
  {
    name: 'errors-as-plain-text',
    area: 'errors',
    violates: ['errors.operation-outcome-shape'],
    symptom: '403 errors are a plain-text line instead of an OperationOutcome.',
    checks: ['errors.operation-outcome-format', 'invariants.error-operation-outcome'],
    transformResponse: (res) => {
      const issue = issue0(res);
      if (res.status !== 403 || !issue) return res;
      const headers = Object.fromEntries(Object.entries(res.headers).filter(([k]) => k.toLowerCase() !== 'content-type'));
      return { ...res, headers: { ...headers, 'Content-Type': 'text/plain; charset=utf-8' }, body: issue.diagnostics ?? 'Forbidden' };
    },
  },
  {
    name: 'error-validation-issue-code-not-invalid',
    area: 'errors',
    violates: ['errors.invalid-issue-code'],
    symptom: '400 HPB-00101 carries issue code structure instead of invalid.',
    checks: ['errors.invalid-body-hpb-00101', 'generated.medication-request-create.invalid-missing-subject'],
    transformResponse: rewriteIssue(
      (res, issue) => res.status === 400 && issueCode(issue) === 'HPB-00101',
      (issue) => ({ ...issue, code: 'structure' }),
    ),
  },
  {
    name: 'malformed-json-500',
    area: 'errors',
    violates: ['catalog.hpb-00101'],
    symptom: 'A write whose body is not valid JSON gets 500 SVC-00001 instead of 400 HPB-00101.',
    checks: ['errors.invalid-body-hpb-00101'],
    transformResponse: (res) => {
      const issue = issue0(res);
      if (res.status !== 400 || !issue || !/not valid JSON/.test(issue.diagnostics ?? '')) return res;
      const coding = [{ ...issue.details?.coding?.[0], code: 'SVC-00001' }];
      return {
        ...res,
        status: 500,
        body: {
          resourceType: 'OperationOutcome',
          issue: [{ severity: 'error', code: 'exception', diagnostics: 'SVC-00001: Internal server error', details: { coding } }],
        },
      };
    },
  },
  {
    name: 'unknown-path-svc-00002-wrong-status',
    area: 'errors',
    violates: ['catalog.svc-00002'],
    symptom: 'An unknown path gets SVC-00002 with status 400 instead of 404.',
    checks: ['errors.unknown-path-code'],
    transformResponse: (res) => (res.status === 404 && issueCode(issue0(res)) === 'SVC-00002' ? { ...res, status: 400 } : res),
  },
  {
    name: 'malformed-json-svc-00003-wrong-status',
    area: 'errors',
    violates: ['catalog.svc-00003'],
    symptom: 'A write whose body is not valid JSON gets SVC-00003 with status 422 instead of 400.',
    checks: ['errors.malformed-json-code'],
    transformResponse: (res) => {
      const issue = issue0(res);
      if (res.status !== 400 || !issue || !/not valid JSON/.test(issue.diagnostics ?? '')) return res;
      const coding = [{ ...issue.details?.coding?.[0], code: 'SVC-00003' }];
      const body = res.body as { issue: Issue[] };
      return { ...res, status: 422, body: { ...body, issue: [{ ...issue, diagnostics: `SVC-00003: ${withoutPrefix(issue)}`, details: { coding } }] } };
    },
  },
  {
    name: 'error-issue-list-empty',
    area: 'errors',
    violates: ['errors.operation-outcome-shape', 'errors.status-and-issue-code-present'],
    symptom: '404 errors are an OperationOutcome with an empty issue list (no issue[0].code to branch on).',
    checks: ['errors.operation-outcome-format'],
    transformResponse: (res) => (res.status === 404 && issue0(res) ? { ...res, body: { resourceType: 'OperationOutcome', issue: [] } } : res),
  },
];
