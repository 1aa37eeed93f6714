import { describe, expect, it } from 'vitest';
import { catalogCodeOf, expectError, expectSearchset, bundleLink } from '../../src/service/expect.js';
import { CheckFailure } from '../../src/errors.js';
import type { HttpResponse } from '../../src/http/types.js';

const res = (status: number, json: unknown): HttpResponse =>
  ({ status, headers: {}, text: JSON.stringify(json), json, exchange: { id: 'x-1' } }) as unknown as HttpResponse;

const outcome = (code: string, catalog?: string) => ({
  resourceType: 'OperationOutcome',
  issue: [
    {
      severity: 'error',
      code,
      diagnostics: catalog ? `${catalog}: message` : 'plain text',
      ...(catalog ? { details: { coding: [{ system: 'urn:x', code: catalog }] } } : {}),
    },
  ],
});

function failureOf(fn: () => void): CheckFailure {
  try {
    fn();
  } catch (e) {
    if (e instanceof CheckFailure) return e;
    throw e;
  }
  throw new Error('expected a CheckFailure');
}

describe('expectError', () => {
  it('accepts a catalog error in the spec format', () => {
    expect(() => expectError(res(400, outcome('invalid', 'HPB-00101')), { status: [400, 422], code: 'HPB-00101', issueCode: 'invalid' })).not.toThrow();
  });

  it('names the wrong status with expected and actual', () => {
    const f = failureOf(() => expectError(res(500, outcome('exception')), { status: 404, code: 'HPB-00102', requirement: 'r.x' }));
    expect(f.details).toMatchObject({ expected: 404, actual: 500, requirement: 'r.x', exchange: 'x-1' });
  });

  it('fails a body that is not an OperationOutcome', () => {
    expect(failureOf(() => expectError(res(404, { oops: true }), { status: 404 })).message).toMatch(/not an OperationOutcome/);
  });

  it('fails a wrong catalog code and a missing diagnostics prefix', () => {
    expect(failureOf(() => expectError(res(403, outcome('forbidden', 'HPB-00124')), { status: 403, code: 'HPB-00104' })).message).toMatch(/HPB-00104/);
    const noPrefix = outcome('forbidden', 'HPB-00104');
    noPrefix.issue[0]!.diagnostics = 'Insufficient scope';
    expect(failureOf(() => expectError(res(403, noPrefix), { status: 403, code: 'HPB-00104' })).message).toMatch(/must start with "HPB-00104: "/);
  });

  it('fails a wrong issue code', () => {
    expect(
      failureOf(() => expectError(res(429, outcome('processing', 'HPB-00105')), { status: 429, code: 'HPB-00105', issueCode: 'throttled' })).message,
    ).toMatch(/throttled/);
  });
});

describe('response helpers', () => {
  it('reads the catalog code from details or the diagnostics prefix', () => {
    expect(catalogCodeOf(res(400, outcome('invalid', 'HPB-00101')))).toBe('HPB-00101');
    const prefixOnly = { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'login', diagnostics: 'SVC-00004: Unauthorized' }] };
    expect(catalogCodeOf(res(401, prefixOnly))).toBe('SVC-00004');
    expect(catalogCodeOf(res(400, outcome('invalid')))).toBeUndefined();
  });

  it('recognises a searchset and its links', () => {
    const b = expectSearchset(res(200, { resourceType: 'Bundle', type: 'searchset', link: [{ relation: 'self', url: 'u1' }] }));
    expect(bundleLink(b, 'self')).toBe('u1');
    expect(bundleLink(b, 'next')).toBeUndefined();
    expect(() => expectSearchset(res(200, { resourceType: 'Bundle', type: 'collection' }))).toThrow(CheckFailure);
  });
});
