import { describe, expect, it } from 'vitest';
import checks from '../../suites/auth/checks.js';
import tokenLifetimeChecks from '../../suites/token-lifetime/checks.js';
import { faults } from '../../src/reference/faults/auth.js';
import { conforming, notFailed, pick, runChecks } from './target.js';

const ASSERTION_CHECKS = checks.filter((c) => c.id.startsWith('auth.assertion-') && c.level === 'MUST').map((c) => c.id);

/** Each fault and the checks it must fail. */
const CAUGHT_BY: Record<string, string[]> = {
  'assertion-signature-not-checked': ['auth.assertion-corrupted-signature', 'auth.assertion-foreign-key'],
  'assertion-alg-none-accepted': ['auth.assertion-alg-none'],
  'assertion-hs256-accepted': ['auth.assertion-hs256-public-key'],
  'assertion-unknown-kid-accepted': ['auth.assertion-unknown-kid'],
  'assertion-iss-not-checked': ['auth.assertion-wrong-iss', 'auth.assertion-missing-iss'],
  'assertion-sub-not-checked': ['auth.assertion-wrong-sub'],
  'aud-not-checked': ['auth.assertion-wrong-aud', 'auth.assertion-missing-aud'],
  'assertion-exp-not-checked': ['auth.assertion-expired'],
  'assertion-exp-not-required': ['auth.assertion-missing-exp'],
  'assertion-failure-wrong-code': ASSERTION_CHECKS,
  'token-errors-not-operation-outcome': checks.filter((c) => c.id.startsWith('auth.token-request-') && c.level === 'MUST').map((c) => c.id),
  'token-request-params-not-checked': [
    'auth.token-request-without-grant-type', 'auth.token-request-wrong-grant-type',
    'auth.token-request-without-assertion-type', 'auth.token-request-wrong-assertion-type',
  ],
  'token-request-json-accepted': ['auth.token-request-json-body'],
  'token-response-without-access-token': ['auth.token-issued-for-valid-request'],
  'bearer-signature-not-checked': ['auth.invalid-bearer-401'],
  'bearer-401-wrong-code': ['auth.missing-bearer-401', 'auth.invalid-bearer-401'],
  'expired-token-wrong-code': ['token-lifetime.expired-token-refused'],
  'new-token-refused-after-expiry': ['auth.new-token-after-expiry'],
  'production-origin-not-enforced': ['auth.production-key-browser-origin-403'],
  'sandbox-origin-refused': ['auth.sandbox-key-browser-origin-allowed'],
  'only-first-scope-granted': ['auth.token-grants-requested-scopes'],
  'key-set-unreachable-token-issued': ['auth.key-set-unreachable-refused'],
};

const ALL = [...checks, ...tokenLifetimeChecks];

describe('auth suite', () => {
  it.concurrent.each([
    ['default modes', {}],
    ['narrowed scopes, bare token response', { excessScope: 'narrow', tokenResponseExtras: false }],
    ['a production main key', { mainKeyKind: 'production' }],
  ] as const)('passes against the clean reference (%s)', async (_label, modes) => {
    const results = await runChecks(checks, { modes });
    expect(results.size).toBe(checks.length);
    expect(conforming(results)).toEqual([]);
  }, 120_000);

  it('has a proving expectation for every auth fault', () => {
    expect(faults.map((f) => f.name).filter((n) => !CAUGHT_BY[n])).toEqual([]);
  });

  it.concurrent.each(Object.entries(CAUGHT_BY))('fault %s fails %j', async (fault, ids) => {
    const results = await runChecks(pick(ALL, ids), { faults: [fault] });
    expect(notFailed(results, ids)).toEqual([]);
  }, 120_000);

  it('an assertion fault fails only the checks of the rule it breaks', async () => {
    const results = await runChecks(pick(checks, ASSERTION_CHECKS), { faults: ['assertion-alg-none-accepted'] });
    expect([...results.values()].filter((r) => r.outcome === 'fail').map((r) => r.id)).toEqual(['auth.assertion-alg-none']);
  });

  it('records the open points as observations, never as failures', async () => {
    const observations = checks.filter((c) => c.level === 'observation');
    const results = await runChecks(observations, { modes: { excessScope: 'narrow' } });
    expect([...results.values()].map((r) => r.outcome)).toEqual(observations.map(() => 'observation'));
    const excess = results.get('auth.token-request-excess-scope')!.observations.find((o) => o.key === 'token-request.excess-scope');
    expect(excess?.value).toMatchObject({ handling: 'narrowed', grantedScope: 'system/MedicationRequest.rs' });
    const replay = results.get('auth.assertion-jti-replay')!.observations[0]!.value as { first: { issued: boolean }; replay: { status: number } };
    expect(replay).toMatchObject({ first: { issued: true }, replay: { status: 401 } });
  });

  it('never puts a token or an assertion into evidence or observations', async () => {
    const results = await runChecks(pick(checks, ['auth.token-issued-for-valid-request', 'auth.invalid-bearer-401', 'auth.token-request-json-body']));
    const text = JSON.stringify([...results.values()]);
    expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/);
  });
});
