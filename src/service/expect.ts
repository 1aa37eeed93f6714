/**
 * Assertions shared by the suites. Each throws CheckFailure (outcome `fail`)
 * with expected/actual and the requirement, or records a soft finding.
 */
import { CheckFailure } from '../errors.js';
import type { HttpResponse } from '../http/types.js';
import { firstIssue, isObject } from './errors.js';

export { catalogCodeOf, firstIssue, isObject, type OperationOutcomeIssue } from './errors.js';

export function asArray<T>(v: T | readonly T[]): readonly T[] {
  return Array.isArray(v) ? (v as readonly T[]) : [v as T];
}

export function expectStatus(res: HttpResponse, expected: number | readonly number[], requirement?: string, what = 'status'): void {
  const allowed = asArray(expected);
  if (!allowed.includes(res.status)) {
    throw new CheckFailure(`${what}: expected ${allowed.join(' or ')}, got ${res.status}${describeOutcome(res)}`, {
      requirement,
      expected: allowed.length === 1 ? allowed[0] : allowed,
      actual: res.status,
      exchange: res.exchange.id,
    });
  }
}

function describeOutcome(res: HttpResponse): string {
  const issue = firstIssue(res);
  if (!issue) return '';
  const d = typeof issue.diagnostics === 'string' ? issue.diagnostics.slice(0, 120) : '';
  return ` (${String(issue.code ?? '?')}${d ? `: ${d}` : ''})`;
}

export interface ExpectedError {
  status: number | readonly number[];
  /** Catalog code(s) accepted; omit when the spec names none. */
  code?: string | readonly string[];
  /** FHIR issue type, where the spec names one. */
  issueCode?: string;
  requirement?: string;
}

/**
 * An error in the spec's format (Errors, Format 1-3): an OperationOutcome whose
 * issue[0] has severity, code and diagnostics; a catalog error also carries
 * details.coding with the code and a `<CODE>: ` diagnostics prefix.
 */
export function expectError(res: HttpResponse, e: ExpectedError): void {
  // The status message names the catalog code the spec requires with it ("expected 404 HPB-00102, got 500").
  expectStatus(res, e.status, e.requirement, e.code === undefined ? 'status' : `status (with ${asArray(e.code).join(' or ')})`);
  const fail = (message: string, expected: unknown, actual: unknown) => {
    throw new CheckFailure(message, { requirement: e.requirement, expected, actual, exchange: res.exchange.id });
  };
  const issue = firstIssue(res);
  if (!issue) fail('error body is not an OperationOutcome with an issue', 'OperationOutcome with issue[0]', res.text.slice(0, 200));
  if (typeof issue!.code !== 'string' || issue!.code === '') fail('issue[0].code is missing', 'a FHIR issue type', issue!.code);
  if (typeof issue!.severity !== 'string') fail('issue[0].severity is missing', 'error', issue!.severity);
  if (typeof issue!.diagnostics !== 'string') fail('issue[0].diagnostics is missing', 'a text', issue!.diagnostics);
  if (e.issueCode && issue!.code !== e.issueCode) fail(`issue[0].code: expected ${e.issueCode}, got ${String(issue!.code)}`, e.issueCode, issue!.code);
  if (e.code) {
    const allowed = asArray(e.code);
    const codings = (issue!.details?.coding ?? []).map((c) => c.code);
    const coded = codings.find((c) => typeof c === 'string' && allowed.includes(c));
    if (!coded) fail(`details.coding: expected code ${allowed.join(' or ')}, got ${codings.length ? codings.join(', ') : 'none'}`, allowed, codings);
    const diag = issue!.diagnostics as string;
    if (!diag.startsWith(`${coded as string}: `))
      fail(`diagnostics must start with "${coded as string}: "`, `${coded as string}: <message>`, diag.slice(0, 120));
    const system = issue!.details?.coding?.find((c) => c.code === coded)?.system;
    if (typeof system !== 'string' || system === '') fail('details.coding.system is missing', 'a code system URI', system);
  }
}

/** The response is a searchset Bundle (Pagination rule 1). */
export function expectSearchset(res: HttpResponse, requirement?: string): Record<string, unknown> {
  expectStatus(res, 200, requirement);
  const b = res.json;
  if (!isObject(b) || b.resourceType !== 'Bundle' || b.type !== 'searchset') {
    throw new CheckFailure('response is not a Bundle of type searchset', {
      requirement,
      expected: { resourceType: 'Bundle', type: 'searchset' },
      actual: isObject(b) ? { resourceType: b.resourceType, type: b.type } : res.text.slice(0, 120),
      exchange: res.exchange.id,
    });
  }
  return b;
}

export function bundleLink(bundle: Record<string, unknown>, relation: string): string | undefined {
  const links = Array.isArray(bundle.link) ? bundle.link : [];
  const l = links.find((x) => isObject(x) && x.relation === relation) as { url?: unknown } | undefined;
  return typeof l?.url === 'string' ? l.url : undefined;
}

export function bundleResources(bundle: Record<string, unknown>): Record<string, unknown>[] {
  const entries = Array.isArray(bundle.entry) ? bundle.entry : [];
  return entries.map((e) => (isObject(e) && isObject(e.resource) ? e.resource : isObject(e) ? e : {})) as Record<string, unknown>[];
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
