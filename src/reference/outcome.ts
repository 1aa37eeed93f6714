/**
 * OperationOutcome building (spec "Errors", Format rules 1-4) and the FhirError
 * factories the HTTP core uses.
 */
import { CATALOG_SYSTEM, catalogEntry } from '../service/catalog.js';
import { FhirError, type ReferenceModes } from './types.js';

/** FHIR issue type per HTTP status where the spec names none (rule 5: reference choice). */
export function issueCodeForStatus(status: number): string {
  switch (status) {
    case 400:
      return 'invalid';
    case 401:
      return 'login';
    case 403:
      return 'forbidden';
    case 404:
      return 'not-found';
    case 405:
      return 'not-supported';
    case 409:
      return 'conflict';
    case 413:
      return 'too-long';
    case 415:
      return 'not-supported';
    case 422:
      return 'business-rule';
    case 429:
      return 'throttled';
    default:
      return status >= 500 ? 'exception' : 'processing';
  }
}

/**
 * An error with a catalog code. The issue code is the catalog's where the spec
 * states it (`invalid`, `throttled`), otherwise derived from the status.
 */
export function catalogError(code: string, opts: { status?: number; message?: string; headers?: Record<string, string> } = {}): FhirError {
  const entry = catalogEntry(code);
  const status = opts.status ?? entry.status;
  const issueCode = entry.issueCode ?? issueCodeForStatus(status);
  return new FhirError(status, issueCode, opts.message ?? entry.message, code, opts.headers);
}

/** An error without a catalog code: plain-text diagnostics, no details. */
export function plainError(status: number, message: string, issueCode = issueCodeForStatus(status), headers?: Record<string, string>): FhirError {
  return new FhirError(status, issueCode, message, undefined, headers);
}

/** Generic codes no endpoint table lists: mode `genericErrors: plain-text` drops them. */
const UNLISTED_GENERIC = new Set(['SVC-00001', 'SVC-00002', 'SVC-00003', 'SVC-00007']);

/** An error as the modes shape it (issue codes the spec does not show; plain-text handlers). */
export function styledError(err: FhirError, modes: Pick<ReferenceModes, 'issueCodes' | 'genericErrors'>): FhirError {
  const plain = modes.genericErrors === 'plain-text' && err.code !== undefined && UNLISTED_GENERIC.has(err.code);
  const stated = (err.status === 400 && err.code === 'HPB-00101') || (err.status === 429 && err.code === 'HPB-00105');
  const issueCode = modes.issueCodes === 'processing' && !stated ? 'processing' : err.issueCode;
  if (!plain && issueCode === err.issueCode) return err;
  return new FhirError(err.status, issueCode, err.message, plain ? undefined : err.code, err.headers);
}

export interface OperationOutcome {
  resourceType: 'OperationOutcome';
  issue: Array<{
    severity: 'error';
    code: string;
    diagnostics: string;
    details?: { coding: Array<{ system: string; code: string }> };
  }>;
}

export function operationOutcome(err: FhirError): OperationOutcome {
  const issue: OperationOutcome['issue'][number] = {
    severity: 'error',
    code: err.issueCode,
    diagnostics: err.code ? `${err.code}: ${err.message}` : err.message,
  };
  if (err.code) issue.details = { coding: [{ system: CATALOG_SYSTEM, code: err.code }] };
  return { resourceType: 'OperationOutcome', issue: [issue] };
}
