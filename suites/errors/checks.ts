/**
 * Errors (spec: Errors > Format 1-5, the public and generic catalogs;
 * Conventions "Failures are an OperationOutcome"). Read-only errors (401, 403,
 * 404 on R4 and R5, 400) and invalid writes (HPB-00101) are provoked once per
 * run and shared by the checks.
 */
import { randomUUID } from 'node:crypto';
import { type CheckContext, type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import { catalogCodeOf, catalogFindings, type ErrorSample, expectError, firstIssue, formatFindings, reportFindings } from '../../src/service/index.js';
import { invalidWriteSamples, readOnlySamples, summary } from './support.js';

const area = 'errors';

function attach(ctx: CheckContext, samples: ErrorSample[]): void {
  for (const s of samples) ctx.attach(s.res.exchange);
}

/** Records the catalog code and status of one probe; when it carries `code`, the status must be the catalog's. */
function probeGenericCode(ctx: CheckContext, sample: ErrorSample, code: string, status: number, requirement: string): void {
  const { res } = sample;
  const seen = catalogCodeOf(res);
  ctx.observe(`errors.${sample.kind}`, summary(sample));
  const statusRule = seen === code;
  if (statusRule)
    ctx.check(res.status === status, `${code} sent with ${res.status}; the catalog gives ${status}`, {
      requirement,
      expected: status,
      actual: res.status,
      exchange: res.exchange.id,
    });
  // The catalog status of `code` is reported once, above, under its own requirement.
  reportFindings(
    ctx,
    catalogFindings(sample).filter((f) => !(statusRule && f.requirement === 'errors.catalog-code-format' && f.actual === res.status)),
  );
}

export const checks: CheckDefinition[] = [
  defineCheck({
    id: 'errors.operation-outcome-format',
    title: 'errors are OperationOutcomes whose issues hold severity, a FHIR issue type and diagnostics',
    area,
    level: 'MUST',
    requirements: [
      'errors.operation-outcome-shape',
      'errors.status-and-issue-code-present',
      'errors.issue-code-fhir-issue-type',
      'errors.details-coding-shape',
    ],
    quote: 'Every error is an `OperationOutcome` with `issue` entries holding `severity`, `code` (a FHIR issue type) and `diagnostics`.',
    fixtures: ['medicationRequest', 'encounter'],
    async run(ctx: CheckContext) {
      const samples = await readOnlySamples(ctx);
      attach(ctx, samples);
      for (const s of samples) {
        if (reportFindings(ctx, formatFindings(s)) > 0) continue;
        const issues = ctx.validate(s.release, s.res.json);
        ctx.check(
          issues.length === 0,
          `${s.kind} (${s.res.status}): the OperationOutcome is not valid FHIR ${s.release}: ${issues
            .slice(0, 2)
            .map((i) => `${i.path}: ${i.message}`)
            .join('; ')}`,
          {
            requirement: 'errors.operation-outcome-shape',
            expected: `valid against the HL7 FHIR ${s.release} schema`,
            actual: issues.slice(0, 5),
            exchange: s.res.exchange.id,
          },
        );
      }
    },
  }),
  defineCheck({
    id: 'errors.catalog-code-format',
    title: 'a catalog error carries details.coding and a "<CODE>: " diagnostics prefix with the same code and the catalog\'s status',
    area,
    level: 'MUST',
    requirements: ['errors.catalog-details-coding', 'errors.catalog-code-format', 'errors.prefix-matches-details-code', 'errors.prefix-only-with-catalog-code'],
    quote:
      'Errors with a catalog code also carry `details.coding` (`system` + `code`) and a `diagnostics` text of the form `<CODE>: <message>`, so the code is the part before the first `: `.',
    fixtures: ['medicationRequest', 'encounter'],
    async run(ctx: CheckContext) {
      const samples = await readOnlySamples(ctx);
      attach(ctx, samples);
      for (const s of samples) reportFindings(ctx, catalogFindings(s));
      ctx.observe(
        'errors.catalog-codes-seen',
        samples.map((s) => `${s.kind}: ${catalogCodeOf(s.res) ?? 'none'}`),
      );
    },
  }),
  defineCheck({
    id: 'errors.plain-text-diagnostics',
    title: 'records which error responses carry no catalog code, and the issue code paired with each catalog code',
    area,
    level: 'observation',
    requirements: ['errors.plain-text-handlers', 'errors.issue-codes-not-shown'],
    quote: 'some handlers write plain-text `diagnostics` without them',
    fixtures: ['medicationRequest', 'encounter'],
    async run(ctx: CheckContext) {
      const samples = await readOnlySamples(ctx);
      attach(ctx, samples);
      ctx.observe(
        'errors.without-catalog-code',
        samples.filter((s) => !catalogCodeOf(s.res)).map((s) => `${s.kind} (${s.res.status})`),
      );
      ctx.observe(
        'errors.issue-code-per-catalog-code',
        Object.fromEntries(
          samples.filter((s) => catalogCodeOf(s.res)).map((s) => [`${catalogCodeOf(s.res)} (${s.res.status})`, firstIssue(s.res)?.code ?? null]),
        ),
      );
    },
  }),
  defineCheck({
    id: 'errors.invalid-body-hpb-00101',
    title: 'malformed JSON, a wrong resourceType, missing required fields and a wrong JSON type give HPB-00101 (400 invalid, or 422), never 5xx',
    area,
    level: 'MUST',
    requirements: ['catalog.hpb-00101', 'errors.invalid-issue-code'],
    quote:
      'Validation error. Body must match the FHIR R4 schema; `resourceType` and required fields present. Also used with 422 (unprocessable entity) in endpoint tables.',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx: CheckContext) {
      for (const s of await invalidWriteSamples(ctx)) {
        ctx.attach(s.res.exchange);
        // Malformed JSON is also a plain bad request: the generic SVC-00003 is accepted for it (see errors.malformed-json-code).
        const codes = s.kind === 'malformed-json' ? ['HPB-00101', 'SVC-00003'] : ['HPB-00101'];
        try {
          expectError(s.res, { status: [400, 422], code: codes, requirement: 'catalog.hpb-00101' });
        } catch (e) {
          ctx.check(false, `${s.kind}: ${(e as Error).message}`, {
            requirement: 'catalog.hpb-00101',
            expected: `${codes.join(' or ')} with 400 or 422`,
            actual: summary(s),
            exchange: s.res.exchange.id,
          });
          continue;
        }
        const issueCode = firstIssue(s.res)?.code;
        if (s.res.status === 400 && catalogCodeOf(s.res) === 'HPB-00101')
          ctx.check(issueCode === 'invalid', `${s.kind}: 400 HPB-00101 with issue code ${String(issueCode)}, not invalid`, {
            requirement: 'errors.invalid-issue-code',
            expected: 'invalid',
            actual: issueCode,
            exchange: s.res.exchange.id,
          });
      }
    },
  }),
  defineCheck({
    id: 'errors.validation-status-recorded',
    title: 'records the status (400 or 422) and issue code used with HPB-00101 for each kind of invalid body',
    area,
    level: 'observation',
    requirements: ['errors.validation-status-chosen', 'errors.issue-codes-not-shown'],
    quote: 'Also used with 422 (unprocessable entity) in endpoint tables.',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx: CheckContext) {
      const samples = await invalidWriteSamples(ctx);
      attach(ctx, samples);
      for (const s of samples) ctx.observe(`errors.invalid-body.${s.kind}`, summary(s));
    },
  }),
  defineCheck({
    id: 'errors.malformed-json-code',
    title: 'records the code of a malformed JSON body; SVC-00003, when used, comes with 400',
    area,
    level: 'MUST',
    requirements: ['catalog.svc-00003'],
    quote: 'SVC-00003 | 400 | Bad request',
    tags: ['writes'],
    fixtures: ['patient'],
    async run(ctx: CheckContext) {
      const sample = (await invalidWriteSamples(ctx)).find((s) => s.kind === 'malformed-json')!;
      ctx.attach(sample.res.exchange);
      probeGenericCode(ctx, sample, 'SVC-00003', 400, 'catalog.svc-00003');
    },
  }),
  defineCheck({
    id: 'errors.unknown-path-code',
    title: 'records the code of an unknown path; SVC-00002, when used, comes with 404',
    area,
    level: 'MUST',
    requirements: ['catalog.svc-00002'],
    quote: 'SVC-00002 | 404 | Resource not found',
    async run(ctx: CheckContext) {
      const url = `/fhir/R4/NoSuchResourceType/${randomUUID()}`;
      const res = await ctx.fhir({ scopes: ['system/MedicationRequest.rs'], url, retry: 'none' });
      probeGenericCode(ctx, { kind: 'unknown-path', release: 'R4', res }, 'SVC-00002', 404, 'catalog.svc-00002');
    },
  }),
];

export default checks;
