import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Exchange } from '../../src/engine/types.js';
import { INVARIANT_REQUIREMENTS as R, INVARIANTS, runInvariants, type InvariantContext } from '../../src/service/invariants.js';

const NOW = 1_700_000_000_000;
const NOW_S = NOW / 1000;
const fhir: InvariantContext = { isFhir: true, authenticated: true, windowSec: 60, now: NOW };

function outcome(code: string, diagnostics: string, catalog?: string) {
  return JSON.stringify({
    resourceType: 'OperationOutcome',
    issue: [{ severity: 'error', code, diagnostics, ...(catalog ? { details: { coding: [{ system: 'urn:catalog', code: catalog }] } } : {}) }],
  });
}

function exchange(status: number, headers: Record<string, string> = {}, body?: string): Exchange {
  return {
    id: 'x-000007',
    startedAt: new Date(NOW).toISOString(),
    durationMs: 3,
    request: { method: 'GET', url: 'http://t/fhir/R4/Encounter/1', headers: {} },
    response: {
      status,
      headers: {
        'content-type': 'application/fhir+json',
        'x-correlation-id': 'c-1',
        'x-ratelimit-limit': '60',
        'x-ratelimit-remaining': '10',
        'x-ratelimit-reset': String(NOW_S + 30),
        ...headers,
      },
      body,
      bodyBytes: body?.length ?? 0,
    },
    curl: 'curl',
  };
}

const requirementsOf = (ex: Exchange, ctx = fhir) => runInvariants(ex, ctx).map((f) => f.requirement);

describe('invariants', () => {
  it('every invariant has an id, a title and requirements from the table', () => {
    const known = new Set<string>(Object.values(R));
    expect(new Set(INVARIANTS.map((i) => i.id)).size).toBe(INVARIANTS.length);
    for (const inv of INVARIANTS) {
      expect(inv.title).not.toBe('');
      for (const r of inv.requirements) expect(known.has(r)).toBe(true);
    }
  });

  it('names requirements that exist in the requirements catalog', () => {
    const catalog = JSON.parse(readFileSync(new URL('../../suites/requirements.json', import.meta.url), 'utf8')) as { requirements: Array<{ id: string }> };
    const ids = new Set(catalog.requirements.map((r) => r.id));
    expect(Object.values(R).filter((id) => !ids.has(id))).toEqual([]);
  });

  it('finds nothing on conforming exchanges', () => {
    expect(runInvariants(exchange(200, {}, '{"resourceType":"Encounter"}'), fhir)).toEqual([]);
    expect(runInvariants(exchange(404, {}, outcome('not-found', 'HPB-00102: Resource not found', 'HPB-00102')), fhir)).toEqual([]);
    expect(runInvariants(exchange(401, {}, outcome('login', 'Unauthorized')), fhir)).toEqual([]);
    expect(runInvariants(exchange(429, { 'retry-after': '12' }, outcome('throttled', 'HPB-00105: Rate limit exceeded', 'HPB-00105')), fhir)).toEqual([]);
    expect(runInvariants(exchange(429, { 'retry-after': '12' }, outcome('throttled', 'HPB-00121: cap', 'HPB-00121')), fhir)).toEqual([]);
  });

  it('flags missing correlation and rate-limit headers', () => {
    const ex = exchange(200, {}, '{}');
    delete ex.response!.headers['x-correlation-id'];
    delete ex.response!.headers['x-ratelimit-reset'];
    const findings = runInvariants(ex, fhir);
    expect(findings.map((f) => f.requirement)).toEqual([R.correlationId, R.rateLimitHeaders]);
    expect(findings[1]).toMatchObject({ message: 'response lacks x-ratelimit-reset', exchange: 'x-000007' });
    // Rate-limit headers are required on authenticated and token-endpoint responses only.
    expect(requirementsOf(ex, { ...fhir, authenticated: false })).toEqual([R.correlationId]);
    expect(requirementsOf(ex, { ...fhir, authenticated: false, isFhir: false, isTokenEndpoint: true })).toEqual([R.correlationId, R.rateLimitHeaders]);
  });

  it('checks rate-limit arithmetic and catches a Reset in milliseconds', () => {
    expect(requirementsOf(exchange(200, { 'x-ratelimit-remaining': '61' }, '{}'))).toEqual([R.rateLimitArithmetic]);
    expect(requirementsOf(exchange(200, { 'x-ratelimit-limit': '6.5' }, '{}'))).toEqual([R.limitHeader]);
    expect(requirementsOf(exchange(200, { 'x-ratelimit-limit': '0', 'x-ratelimit-remaining': '0' }, '{}'))).toEqual([R.limitHeader]);
    const ms = runInvariants(exchange(200, { 'x-ratelimit-reset': String(NOW + 30_000) }, '{}'), fhir);
    expect(ms).toHaveLength(1);
    expect(ms[0].message).toContain('milliseconds instead of seconds?');
    expect(ms[0].actual).toBe(NOW + 30_000);
    expect(ms[0].requirement).toBe(R.resetHeader);
    expect(requirementsOf(exchange(200, { 'x-ratelimit-reset': String(NOW_S - 60) }, '{}'))).toEqual([R.resetHeader]);
    expect(requirementsOf(exchange(200, { 'x-ratelimit-reset': String(NOW_S + 110) }, '{}'))).toEqual([]);
  });

  it('judges the reset against when the exchange happened, not when it is judged (a client busy elsewhere judges late)', () => {
    const late = { isFhir: true, authenticated: true, windowSec: 60 }; // no injected clock: the exchange's own times
    // Sent at NOW (long ago by the wall clock): a reset 30 s after it is within the window, one 60 s before it is not.
    expect(requirementsOf(exchange(200, {}, '{}'), late)).toEqual([]);
    expect(requirementsOf(exchange(200, { 'x-ratelimit-reset': String(NOW_S - 60) }, '{}'), late)).toEqual([R.resetHeader]);
    expect(requirementsOf(exchange(200, { 'x-ratelimit-reset': String(NOW_S + 110) }, '{}'), late)).toEqual([]);
    expect(requirementsOf(exchange(200, { 'x-ratelimit-reset': String(NOW_S + 200) }, '{}'), late)).toEqual([R.resetHeader]);
  });

  it('judges the reset against the whole exchange, from its send: an answer read seconds after the target wrote it is not late', () => {
    // Sent at NOW, answer read 20 s later (a starved client): the target may have set the reset at NOW.
    const readLate: InvariantContext = { ...fhir, now: NOW + 20_000 };
    expect(requirementsOf(exchange(200, { 'x-ratelimit-reset': String(NOW_S + 2) }, '{}'), readLate)).toEqual([]);
    // A reset before the send is still wrong.
    expect(requirementsOf(exchange(200, { 'x-ratelimit-reset': String(NOW_S - 30) }, '{}'), readLate)).toEqual([R.resetHeader]);
  });

  it("lets a 429's reset lie beyond the window (early retries extend it), but not in milliseconds", () => {
    const body = outcome('throttled', 'HPB-00105: Rate limit exceeded', 'HPB-00105');
    const throttled = (reset: number) => requirementsOf(exchange(429, { 'retry-after': '5', 'x-ratelimit-reset': String(reset) }, body));
    expect(throttled(NOW_S + 1800)).toEqual([]);
    expect(throttled(NOW + 30_000)).toEqual([R.resetHeader]);
    expect(requirementsOf(exchange(200, { 'x-ratelimit-reset': String(NOW_S + 1800) }, '{}'))).toEqual([R.resetHeader]);
  });

  it("judges X-RateLimit-Limit against the sending key's declared ceiling on served answers and on errors of published operations only", () => {
    const keyed = { ...fhir, keyLimit: 60 };
    const judged = (ex: Exchange, ctx: InvariantContext) => runInvariants(ex, ctx).filter((f) => f.requirement === R.keyLimit).length;
    const wrong = { 'x-ratelimit-limit': '120', 'x-ratelimit-remaining': '100' };
    expect(judged(exchange(200, wrong), keyed)).toBe(1);
    expect(judged(exchange(200), keyed)).toBe(0);
    // An error: judged where the target publishes the operation (it authenticates first), not on a path it does not serve.
    expect(judged(exchange(404, wrong), { ...keyed, publishedOperation: true })).toBe(1);
    expect(judged(exchange(404, wrong), { ...keyed, publishedOperation: false })).toBe(0);
    expect(judged(exchange(404, wrong), keyed)).toBe(0);
    // Not the key's window: a 401, a 429 (perhaps the organization's), the token endpoint, a request without a named key or a bearer.
    expect(judged(exchange(401, wrong), { ...keyed, publishedOperation: true })).toBe(0);
    expect(judged(exchange(429, { ...wrong, 'retry-after': '5' }), { ...keyed, publishedOperation: true })).toBe(0);
    expect(judged(exchange(200, wrong), { ...keyed, isTokenEndpoint: true })).toBe(0);
    expect(judged(exchange(200, wrong), fhir)).toBe(0);
    expect(judged(exchange(200, wrong), { ...keyed, authenticated: false })).toBe(0);
  });

  it('requires Retry-After in seconds on 429', () => {
    const body = outcome('throttled', 'HPB-00105: Rate limit exceeded', 'HPB-00105');
    expect(requirementsOf(exchange(429, {}, body))).toEqual([R.retryAfter]);
    expect(requirementsOf(exchange(429, { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }, body))).toEqual([R.retryAfter]);
  });

  it('requires application/fhir+json from FHIR endpoints only', () => {
    const ex = exchange(200, { 'content-type': 'application/json' }, '{}');
    expect(requirementsOf(ex)).toEqual([R.fhirMediaType]);
    expect(requirementsOf(ex, { ...fhir, isFhir: false })).toEqual([]);
    expect(requirementsOf(exchange(200, { 'content-type': 'application/fhir+json; charset=utf-8' }, '{}'))).toEqual([]);
  });

  it('requires OperationOutcome errors from FHIR and token endpoints', () => {
    const html = exchange(500, { 'content-type': 'text/html' }, '<h1>oops</h1>');
    expect(requirementsOf(html)).toEqual([R.fhirMediaType, R.operationOutcome]);
    expect(requirementsOf(html, { ...fhir, isFhir: false })).toEqual([]);
    expect(
      requirementsOf(exchange(400, { 'content-type': 'application/json' }, '{"error":"invalid_client"}'), { ...fhir, isFhir: false, isTokenEndpoint: true }),
    ).toEqual([R.operationOutcome]);
    const noDiagnostics = runInvariants(
      exchange(400, {}, JSON.stringify({ resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'invalid' }] })),
      fhir,
    );
    expect(noDiagnostics.map((f) => f.message)).toEqual(['issue[0] lacks diagnostics']);
  });

  it('checks catalog code format and the diagnostics prefix', () => {
    expect(requirementsOf(exchange(404, {}, outcome('not-found', 'Resource not found', 'HPB-00102')))).toEqual([R.diagnosticsPrefix]);
    expect(requirementsOf(exchange(404, {}, outcome('not-found', 'HPB-102: nope', 'HPB-102')))).toEqual([R.catalogCode]);
  });

  it('requires throttled and HPB-00105 on 429', () => {
    const f = runInvariants(exchange(429, { 'retry-after': '1' }, outcome('exception', 'SVC-00001: busy', 'SVC-00001')), fhir);
    expect(f.map((x) => x.message)).toEqual(['429 issue[0].code is not throttled', '429 does not carry catalog code HPB-00105']);
  });

  it('skips exchanges without a response', () => {
    const ex = exchange(200);
    delete ex.response;
    expect(runInvariants(ex, fhir)).toEqual([]);
  });
});
