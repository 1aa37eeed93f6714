/**
 * The service's error format (spec "Errors" > "Format" 1-4 and the catalogs): reading an
 * OperationOutcome and its catalog code, and the format rules as functions returning
 * findings. The assertions built on them are in expect.ts; the run-wide rules in invariants.ts.
 */
import type { CheckContext } from '../engine/check.js';
import type { Finding } from '../engine/types.js';
import type { HttpResponse } from '../http/types.js';
import { CATALOG_CODE_PATTERN, GENERIC_CATALOG, PUBLIC_CATALOG, type CatalogEntry } from './catalog.js';

export interface OperationOutcomeIssue {
  severity?: unknown;
  code?: unknown;
  diagnostics?: unknown;
  details?: { coding?: Array<{ system?: unknown; code?: unknown }> };
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The issues of an OperationOutcome (parsed JSON), or undefined when it is not one. */
export function outcomeIssues(body: unknown): OperationOutcomeIssue[] | undefined {
  if (!isObject(body) || body.resourceType !== 'OperationOutcome' || !Array.isArray(body.issue)) return undefined;
  return body.issue.filter((i): i is OperationOutcomeIssue => i !== null && typeof i === 'object');
}

export function firstIssue(res: HttpResponse): OperationOutcomeIssue | undefined {
  const body = res.json;
  if (!isObject(body) || body.resourceType !== 'OperationOutcome' || !Array.isArray(body.issue)) return undefined;
  const issue = body.issue[0];
  return isObject(issue) ? (issue as OperationOutcomeIssue) : undefined;
}

/** The catalog code of an issue's diagnostics prefix (`<CODE>: `), if any. */
export function diagnosticsPrefix(issue: OperationOutcomeIssue): string | undefined {
  if (typeof issue.diagnostics !== 'string') return undefined;
  const i = issue.diagnostics.indexOf(': ');
  const head = i > 0 ? issue.diagnostics.slice(0, i) : '';
  return CATALOG_CODE_PATTERN.test(head) ? head : undefined;
}

/** The codes of an issue's details.coding. */
export function detailCodes(issue: OperationOutcomeIssue): unknown[] {
  return Array.isArray(issue.details?.coding) ? issue.details.coding.map((c) => (isObject(c) ? c.code : undefined)) : [];
}

/** The catalog code of an issue: details.coding[].code, else the diagnostics prefix. */
export function issueCatalogCode(issue: OperationOutcomeIssue): string | undefined {
  const coded = detailCodes(issue).find((c): c is string => typeof c === 'string' && CATALOG_CODE_PATTERN.test(c));
  return coded ?? diagnosticsPrefix(issue);
}

/** The catalog code of an error response: details.coding[].code, else the diagnostics prefix. */
export function catalogCodeOf(res: HttpResponse): string | undefined {
  const issue = firstIssue(res);
  return issue ? issueCatalogCode(issue) : undefined;
}

const CATALOG = new Map([...PUBLIC_CATALOG, ...GENERIC_CATALOG].map((e) => [e.code, e]));

/** The catalog entry of a code, when either catalog has it. */
export function catalogEntryOf(code: string): CatalogEntry | undefined {
  return CATALOG.get(code);
}

/** FHIR IssueType codes (http://hl7.org/fhir/issue-type), R4 4.0.1. */
const ISSUE_TYPES_R4 = [
  'invalid',
  'structure',
  'required',
  'value',
  'invariant',
  'security',
  'login',
  'unknown',
  'expired',
  'forbidden',
  'suppressed',
  'processing',
  'not-supported',
  'duplicate',
  'multiple-matches',
  'not-found',
  'deleted',
  'too-long',
  'code-invalid',
  'extension',
  'too-costly',
  'business-rule',
  'conflict',
  'transient',
  'lock-error',
  'no-store',
  'exception',
  'timeout',
  'incomplete',
  'throttled',
  'informational',
];
/** R5 5.0.0 adds `limited-filter` and `success`. */
export const ISSUE_TYPES: Record<'R4' | 'R5', ReadonlySet<string>> = {
  R4: new Set(ISSUE_TYPES_R4),
  R5: new Set([...ISSUE_TYPES_R4, 'limited-filter', 'success']),
};
/** FHIR IssueSeverity codes (both releases). */
export const ISSUE_SEVERITIES: ReadonlySet<string> = new Set(['fatal', 'error', 'warning', 'information']);

export interface ErrorSample {
  /** What was sent, e.g. `unknown-id`. */
  kind: string;
  release: 'R4' | 'R5';
  res: HttpResponse;
}

const finding = (res: HttpResponse, requirement: string, message: string, expected: unknown, actual: unknown): Finding => ({
  message,
  requirement,
  expected,
  actual,
  exchange: res.exchange.id,
});

/**
 * Format rules 1, 2 and the OperationOutcome shape: an OperationOutcome whose
 * issue entries hold severity, a FHIR issue type as code, and diagnostics;
 * details.coding, when present, holds system and code.
 */
export function formatFindings(sample: ErrorSample): Finding[] {
  const { res, kind, release } = sample;
  const body = res.json;
  const what = `${kind} (${res.status})`;
  if (!isObject(body) || body.resourceType !== 'OperationOutcome' || !Array.isArray(body.issue) || body.issue.length === 0) {
    return [
      finding(
        res,
        'errors.operation-outcome-shape',
        `${what}: the body is not an OperationOutcome with issues`,
        'OperationOutcome with issue[]',
        res.text.slice(0, 160),
      ),
    ];
  }
  const out: Finding[] = [];
  body.issue.forEach((raw, i) => {
    const issue = (isObject(raw) ? raw : {}) as OperationOutcomeIssue;
    const missing = (['severity', 'code', 'diagnostics'] as const).filter((k) => typeof issue[k] !== 'string' || issue[k] === '');
    if (missing.length)
      out.push(
        finding(
          res,
          i === 0 && missing.includes('code') ? 'errors.status-and-issue-code-present' : 'errors.operation-outcome-shape',
          `${what}: issue[${i}] lacks ${missing.join(', ')}`,
          'severity, code, diagnostics',
          raw,
        ),
      );
    if (typeof issue.severity === 'string' && !ISSUE_SEVERITIES.has(issue.severity))
      out.push(
        finding(
          res,
          'errors.operation-outcome-shape',
          `${what}: issue[${i}].severity ${issue.severity} is not a FHIR issue severity`,
          [...ISSUE_SEVERITIES],
          issue.severity,
        ),
      );
    if (typeof issue.code === 'string' && !ISSUE_TYPES[release].has(issue.code))
      out.push(
        finding(
          res,
          'errors.issue-code-fhir-issue-type',
          `${what}: issue[${i}].code ${issue.code} is not a FHIR ${release} issue type`,
          'http://hl7.org/fhir/issue-type',
          issue.code,
        ),
      );
    if (issue.details !== undefined) {
      const coding = issue.details.coding;
      const wellFormed =
        Array.isArray(coding) &&
        coding.length > 0 &&
        coding.every((c) => isObject(c) && typeof c.system === 'string' && c.system !== '' && typeof c.code === 'string' && c.code !== '');
      if (!wellFormed)
        out.push(
          finding(
            res,
            'errors.details-coding-shape',
            `${what}: issue[${i}].details.coding is not a list of codings with system and code`,
            '[{ system, code }]',
            issue.details,
          ),
        );
    }
  });
  return out;
}

/**
 * Format rule 3 on issue[0]: a catalog code comes with details.coding
 * (system + code) and a `<CODE>: ` diagnostics prefix naming the same code,
 * the code is in a catalog and the status is the catalog's; without a catalog
 * code there is neither prefix nor details.
 */
export function catalogFindings(sample: ErrorSample): Finding[] {
  const { res, kind } = sample;
  const issue = firstIssue(res);
  if (!issue) return [];
  const what = `${kind} (${res.status})`;
  const prefix = diagnosticsPrefix(issue);
  const codes = detailCodes(issue);
  const coded = codes.find((c): c is string => typeof c === 'string' && CATALOG_CODE_PATTERN.test(c));
  const out: Finding[] = [];
  if (issue.details !== undefined && !coded)
    out.push(
      finding(
        res,
        'errors.prefix-only-with-catalog-code',
        `${what}: details present without a catalog code`,
        'no details without a catalog code',
        issue.details,
      ),
    );
  if (prefix && !coded)
    out.push(
      finding(
        res,
        'errors.catalog-details-coding',
        `${what}: diagnostics names ${prefix} but details.coding does not carry it`,
        `details.coding with code ${prefix}`,
        issue.details ?? null,
      ),
    );
  if (coded && !prefix)
    out.push(
      finding(
        res,
        'errors.catalog-code-format',
        `${what}: catalog code ${coded} without the "${coded}: " diagnostics prefix`,
        `${coded}: <message>`,
        issue.diagnostics,
      ),
    );
  if (coded && prefix && coded !== prefix)
    out.push(finding(res, 'errors.prefix-matches-details-code', `${what}: diagnostics prefix ${prefix} differs from details.coding ${coded}`, coded, prefix));
  const code = coded ?? prefix;
  if (!code) return out;
  const system = issue.details?.coding?.find((c) => isObject(c) && c.code === code)?.system;
  if (coded && (typeof system !== 'string' || system === ''))
    out.push(finding(res, 'errors.catalog-details-coding', `${what}: details.coding for ${code} has no system`, 'a code system URI', system ?? null));
  const entry = catalogEntryOf(code);
  if (!entry) {
    out.push(finding(res, 'errors.catalog-code-format', `${what}: ${code} is in neither catalog`, 'an HPB- or SVC- code of the spec', code));
  } else {
    const statuses = [entry.status, ...(entry.alsoStatus ?? [])];
    if (!statuses.includes(res.status))
      out.push(
        finding(res, 'errors.catalog-code-format', `${what}: ${code} is a ${statuses.join('/')} in the catalog, sent with ${res.status}`, statuses, res.status),
      );
  }
  return out;
}

/** Records findings on the check (soft: the check goes on); returns how many there were. */
export function reportFindings(ctx: CheckContext, findings: readonly Finding[]): number {
  for (const f of findings) ctx.check(false, f.message, f);
  return findings.length;
}
