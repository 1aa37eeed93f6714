/**
 * Helpers of the errors suite: error responses provoked once per run and
 * shared by the checks (read-only ones, and invalid writes), and the rules of
 * the spec's error format (Errors > Format 1-4) as functions returning findings.
 */
import { randomUUID } from 'node:crypto';
import type { CheckContext } from '../../src/engine/context.js';
import { firstIssue, isObject, type OperationOutcomeIssue } from '../../src/service/expect.js';
import type { Finding } from '../../src/engine/types.js';
import type { HttpResponse } from '../../src/http/types.js';
import { CATALOG_CODE_PATTERN, GENERIC_CATALOG, PUBLIC_CATALOG } from '../../src/service/catalog.js';

/** FHIR IssueType codes (http://hl7.org/fhir/issue-type), R4 4.0.1. */
const ISSUE_TYPES_R4 = [
  'invalid', 'structure', 'required', 'value', 'invariant', 'security', 'login', 'unknown', 'expired', 'forbidden', 'suppressed',
  'processing', 'not-supported', 'duplicate', 'multiple-matches', 'not-found', 'deleted', 'too-long', 'code-invalid', 'extension',
  'too-costly', 'business-rule', 'conflict', 'transient', 'lock-error', 'no-store', 'exception', 'timeout', 'incomplete', 'throttled',
  'informational',
];
/** R5 5.0.0 adds `limited-filter` and `success`. */
export const ISSUE_TYPES: Record<'R4' | 'R5', ReadonlySet<string>> = {
  R4: new Set(ISSUE_TYPES_R4),
  R5: new Set([...ISSUE_TYPES_R4, 'limited-filter', 'success']),
};
/** FHIR IssueSeverity codes (both releases). */
export const ISSUE_SEVERITIES: ReadonlySet<string> = new Set(['fatal', 'error', 'warning', 'information']);

const CATALOG = new Map([...PUBLIC_CATALOG, ...GENERIC_CATALOG].map((e) => [e.code, e]));

export const RUN_TAG_SYSTEM = 'https://fhir-conformance.dev/run';

export interface ErrorSample {
  /** What was sent, e.g. `unknown-id`. */
  kind: string;
  release: 'R4' | 'R5';
  res: HttpResponse;
}

/** The catalog code of an issue's diagnostics prefix (`<CODE>: `), if any. */
export function diagnosticsPrefix(issue: OperationOutcomeIssue): string | undefined {
  if (typeof issue.diagnostics !== 'string') return undefined;
  const i = issue.diagnostics.indexOf(': ');
  const head = i > 0 ? issue.diagnostics.slice(0, i) : '';
  return CATALOG_CODE_PATTERN.test(head) ? head : undefined;
}

/** The codes of issue[0].details.coding. */
export function detailCodes(issue: OperationOutcomeIssue): unknown[] {
  return Array.isArray(issue.details?.coding) ? issue.details.coding.map((c) => (isObject(c) ? c.code : undefined)) : [];
}

/** The catalog code an error carries (details.coding, else the diagnostics prefix), if any. */
export function catalogCode(res: HttpResponse): string | undefined {
  const issue = firstIssue(res);
  if (!issue) return undefined;
  const coded = detailCodes(issue).find((c): c is string => typeof c === 'string' && CATALOG_CODE_PATTERN.test(c));
  return coded ?? diagnosticsPrefix(issue);
}

const finding = (res: HttpResponse, requirement: string, message: string, expected: unknown, actual: unknown): Finding =>
  ({ message, requirement, expected, actual, exchange: res.exchange.id });

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
    return [finding(res, 'errors.operation-outcome-shape', `${what}: the body is not an OperationOutcome with issues`, 'OperationOutcome with issue[]', res.text.slice(0, 160))];
  }
  const out: Finding[] = [];
  body.issue.forEach((raw, i) => {
    const issue = (isObject(raw) ? raw : {}) as OperationOutcomeIssue;
    const missing = (['severity', 'code', 'diagnostics'] as const).filter((k) => typeof issue[k] !== 'string' || issue[k] === '');
    if (missing.length) out.push(finding(res, i === 0 && missing.includes('code') ? 'errors.status-and-issue-code-present' : 'errors.operation-outcome-shape', `${what}: issue[${i}] lacks ${missing.join(', ')}`, 'severity, code, diagnostics', raw));
    if (typeof issue.severity === 'string' && !ISSUE_SEVERITIES.has(issue.severity))
      out.push(finding(res, 'errors.operation-outcome-shape', `${what}: issue[${i}].severity ${issue.severity} is not a FHIR issue severity`, [...ISSUE_SEVERITIES], issue.severity));
    if (typeof issue.code === 'string' && !ISSUE_TYPES[release].has(issue.code))
      out.push(finding(res, 'errors.issue-code-fhir-issue-type', `${what}: issue[${i}].code ${issue.code} is not a FHIR ${release} issue type`, 'http://hl7.org/fhir/issue-type', issue.code));
    if (issue.details !== undefined) {
      const coding = issue.details.coding;
      const wellFormed = Array.isArray(coding) && coding.length > 0
        && coding.every((c) => isObject(c) && typeof c.system === 'string' && c.system !== '' && typeof c.code === 'string' && c.code !== '');
      if (!wellFormed) out.push(finding(res, 'errors.details-coding-shape', `${what}: issue[${i}].details.coding is not a list of codings with system and code`, '[{ system, code }]', issue.details));
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
    out.push(finding(res, 'errors.prefix-only-with-catalog-code', `${what}: details present without a catalog code`, 'no details without a catalog code', issue.details));
  if (prefix && !coded)
    out.push(finding(res, 'errors.catalog-details-coding', `${what}: diagnostics names ${prefix} but details.coding does not carry it`, `details.coding with code ${prefix}`, issue.details ?? null));
  if (coded && !prefix)
    out.push(finding(res, 'errors.catalog-code-format', `${what}: catalog code ${coded} without the "${coded}: " diagnostics prefix`, `${coded}: <message>`, issue.diagnostics));
  if (coded && prefix && coded !== prefix)
    out.push(finding(res, 'errors.prefix-matches-details-code', `${what}: diagnostics prefix ${prefix} differs from details.coding ${coded}`, coded, prefix));
  const code = coded ?? prefix;
  if (!code) return out;
  const system = issue.details?.coding?.find((c) => isObject(c) && c.code === code)?.system;
  if (coded && (typeof system !== 'string' || system === ''))
    out.push(finding(res, 'errors.catalog-details-coding', `${what}: details.coding for ${code} has no system`, 'a code system URI', system ?? null));
  const entry = CATALOG.get(code);
  if (!entry) {
    out.push(finding(res, 'errors.catalog-code-format', `${what}: ${code} is in neither catalog`, 'an HPB- or SVC- code of the spec', code));
  } else {
    const statuses = [entry.status, ...(entry.alsoStatus ?? [])];
    if (!statuses.includes(res.status))
      out.push(finding(res, 'errors.catalog-code-format', `${what}: ${code} is a ${statuses.join('/')} in the catalog, sent with ${res.status}`, statuses, res.status));
  }
  return out;
}

/** Records the findings on the context; returns how many there were. */
export function report(ctx: CheckContext, findings: Finding[]): number {
  for (const f of findings) ctx.check(false, f.message, f);
  return findings.length;
}

/** One line per sample for observations: status, catalog code and issue code. */
export function summary(s: ErrorSample): { kind: string; status: number; code: string | null; issueCode: unknown } {
  return { kind: s.kind, status: s.res.status, code: catalogCode(s.res) ?? null, issueCode: firstIssue(s.res)?.code ?? null };
}

type Interaction = 'read' | 'search-type' | 'create';
const SPEC_PATHS: Record<string, string> = {
  'R4 MedicationRequest read': '/fhir/R4/MedicationRequest/{id}',
  'R4 MedicationRequest search-type': '/fhir/R4/MedicationRequest',
  'R4 MedicationRequest create': '/fhir/R4/MedicationRequest',
  'R4 Encounter read': '/fhir/R4/Encounter/{id}',
  'R5 DocumentReference read': '/fhir/R5/DocumentReference/{id}',
};

/** The path the target publishes for an operation, else the spec's own path for it (Endpoints). */
export function pathOf(ctx: CheckContext, release: 'R4' | 'R5', resource: string, interaction: Interaction): string {
  return ctx.findOperation(resource, interaction, release)?.path ?? SPEC_PATHS[`${release} ${resource} ${interaction}`]!;
}

function memo<T>(ctx: CheckContext, key: string, make: () => Promise<T>): Promise<T> {
  let p = ctx.shared.get(key) as Promise<T> | undefined;
  if (!p) ctx.shared.set(key, (p = make()));
  return p;
}

/** Errors every target can be asked for without writing: 401, 403, 404 (R4 and R5), 400. */
export function readOnlySamples(ctx: CheckContext): Promise<ErrorSample[]> {
  return memo(ctx, 'errors.read-only-samples', async () => {
    const mrRead = pathOf(ctx, 'R4', 'MedicationRequest', 'read');
    const mrSearch = pathOf(ctx, 'R4', 'MedicationRequest', 'search-type');
    const encRead = pathOf(ctx, 'R4', 'Encounter', 'read');
    const docRead = pathOf(ctx, 'R5', 'DocumentReference', 'read');
    const mrScope = ['system/MedicationRequest.rs'];
    const accept = { accept: 'application/fhir+json' };
    const fixtureRead = ctx.path(mrRead, { id: ctx.fixture('medicationRequest') });
    const samples: ErrorSample[] = [];
    const add = (kind: string, release: 'R4' | 'R5', res: HttpResponse) => samples.push({ kind, release, res });
    add('no-token', 'R4', await ctx.request({ url: fixtureRead, headers: accept }));
    add('invalid-token', 'R4', await ctx.request({ url: fixtureRead, headers: { ...accept, authorization: 'Bearer not-a-token' } }));
    add('insufficient-scope', 'R4', await ctx.fhir({ scopes: mrScope, url: ctx.path(encRead, { id: ctx.fixture('encounter') }) }));
    add('unknown-id', 'R4', await ctx.fhir({ scopes: mrScope, url: ctx.path(mrRead, { id: randomUUID() }) }));
    add('unknown-id-r5', 'R5', await ctx.fhir({ scopes: ['system/DocumentReference.rs'], url: ctx.path(docRead, { id: randomUUID() }) }));
    add('search-without-patient-or-encounter', 'R4', await ctx.fhir({ scopes: mrScope, url: `${mrSearch}?_count=1` }));
    return samples;
  });
}

/** A MedicationRequest create body of this run for the fixture patient. */
export function medicationRequestBody(ctx: CheckContext): Record<string, unknown> {
  return {
    resourceType: 'MedicationRequest',
    meta: { tag: [{ system: RUN_TAG_SYSTEM, code: ctx.runId }] },
    status: 'active',
    intent: 'order',
    medicationCodeableConcept: { coding: [{ system: 'http://www.nlm.nih.gov/research/umls/rxnorm', code: '197361', display: 'Amlodipine 5 MG Oral Tablet' }], text: 'Amlodipine 5 mg' },
    subject: { reference: `Patient/${ctx.fixture('patient')}` },
  };
}

/** Invalid MedicationRequest creates, one per kind of invalid body the catalog names (HPB-00101). */
export function invalidWriteSamples(ctx: CheckContext): Promise<ErrorSample[]> {
  return memo(ctx, 'errors.invalid-write-samples', async () => {
    const create = pathOf(ctx, 'R4', 'MedicationRequest', 'create');
    const valid = medicationRequestBody(ctx);
    const { subject: _subject, medicationCodeableConcept: _medication, ...withoutRequired } = valid;
    const bodies: Array<[string, string | Record<string, unknown>]> = [
      ['malformed-json', `${JSON.stringify(valid).slice(0, -1)},`],
      ['wrong-resource-type', { ...valid, resourceType: 'Encounter' }],
      ['missing-required-fields', withoutRequired],
      ['wrong-json-type', { ...valid, subject: `Patient/${ctx.fixture('patient')}` }],
    ];
    const samples: ErrorSample[] = [];
    for (const [kind, body] of bodies) {
      const res = await ctx.fhir({
        scopes: ['system/MedicationRequest.c'],
        method: 'POST',
        url: create,
        headers: { 'content-type': 'application/fhir+json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
        retry: 'none',
      });
      const id = isObject(res.json) && typeof res.json.id === 'string' ? res.json.id : undefined;
      if (res.status < 300 && id) ctx.created('MedicationRequest', id);
      samples.push({ kind, release: 'R4', res });
    }
    return samples;
  });
}
