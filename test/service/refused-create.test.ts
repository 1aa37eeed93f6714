import { describe, expect, it } from 'vitest';
import type { CheckContext } from '../../src/engine/context.js';
import { CheckFailure, SkipSignal } from '../../src/errors.js';
import type { HttpResponse } from '../../src/http/types.js';
import { refusedCreate } from '../../src/service/resources.js';

const ctx = {
  fail: (message: string, details = {}) => {
    throw new CheckFailure(message, details);
  },
  skip: (reason: string) => {
    throw new SkipSignal(reason);
  },
} as unknown as CheckContext;

function answer(status: number, code?: string): HttpResponse {
  const json = code
    ? { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'processing', details: { coding: [{ code }] }, diagnostics: `${code}: x` }] }
    : undefined;
  return {
    status,
    headers: {},
    text: json ? JSON.stringify(json) : '',
    json,
    bodyTruncated: false,
    exchange: { id: 'x-7', startedAt: '', durationMs: 1, request: { method: 'POST', url: 'http://t/fhir/R4/MedicationRequest', headers: {} }, curl: '' },
  };
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('refusedCreate: a valid create the target did not answer with a 2xx', () => {
  it('skips on a 4xx, pointing to the check that judges the create', () => {
    const e = thrown(() => refusedCreate(ctx, answer(422, 'HPB-00140'), 'MedicationRequest', 'a valid R4 MedicationRequest create'));
    expect(e).toBeInstanceOf(SkipSignal);
    expect((e as SkipSignal).reason).toBe(
      'a valid R4 MedicationRequest create answered 422 HPB-00140: a refused valid create is judged by medication-request.create-round-trip, ' +
        'so this check has nothing to work on (see medication-request.create-round-trip)',
    );
    const doc = thrown(() => refusedCreate(ctx, answer(400), 'DocumentReference', 'a valid R5 DocumentReference create'));
    expect((doc as SkipSignal).reason).toMatch(/answered 400: .*\(see document-reference\.create\)$/);
  });

  it('fails on a 5xx against the create rule (the outcome policy judges the target health)', () => {
    const e = thrown(() => refusedCreate(ctx, answer(500), 'Encounter', 'a valid R4 Encounter create'));
    expect(e).toBeInstanceOf(CheckFailure);
    expect((e as CheckFailure).message).toBe('a valid R4 Encounter create answered 500');
    expect((e as CheckFailure).details).toEqual({ requirement: 'encounter.create-returns-resource', expected: '2xx', actual: 500, exchange: 'x-7' });
  });

  it('fails on any refusal of a resource no check owns the create of', () => {
    expect(thrown(() => refusedCreate(ctx, answer(409), 'Patient', 'a valid R4 Patient create'))).toBeInstanceOf(CheckFailure);
  });
});
