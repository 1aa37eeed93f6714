import { describe, expect, it } from 'vitest';
import checks from '../../suites/auth/checks.js';
import { faults } from '../../src/reference/faults/auth.js';
import { conforming, notFailed, pick, runChecks } from './target.js';

const ASSERTION_CHECKS = checks.filter((c) => c.id.startsWith('auth.assertion-') && c.level === 'MUST').map((c) => c.id);

/**
 * The faults run here, with the checks each must fail (what the fault declares, `checks`): only those
 * naming a check that waits out a token lifetime, judged here under TEST_LIMITS' 3 s tokens (the mutation
 * shards plant them under the embedded 10 s). That every other auth fault fails the checks it names is the
 * mutation shards' assertion (test/mutation/faults-1.test.ts, faults-2.test.ts), not repeated here.
 */
const waits = new Set(checks.filter((c) => c.tags?.includes('waits')).map((c) => c.id));
const CAUGHT_BY: Record<string, string[]> = Object.fromEntries(
  faults.filter((f) => f.checks?.some((id) => waits.has(id))).map((f) => [f.name, f.checks ?? []]),
);

describe('auth suite', () => {
  it.concurrent.each([
    ['default modes', {}],
    ['narrowed scopes, bare token response', { excessScope: 'narrow', tokenResponseExtras: false }],
    ['a production main key', { mainKeyKind: 'production' }],
    ['a lenient token endpoint (grant_type and client_assertion_type ignored, JSON read)', { tokenRequestParsing: 'lenient' }],
    ['access tokens with only registered claims', { accessTokenClaims: 'minimal' }],
    ['opaque access tokens (a JWS over a handle, no claim set)', { accessTokenFormat: 'opaque' }],
    ['the resource parameter ignored (no token for one release only)', { resourceIndicator: 'ignored' }],
  ] as const)(
    'passes against the clean reference (%s)',
    async (_label, modes) => {
      const results = await runChecks(checks, { modes });
      expect(results.size).toBe(checks.length);
      expect(conforming(results)).toEqual([]);
    },
    120_000,
  );

  it('every auth fault names the checks it must fail', () => {
    expect(faults.filter((f) => !f.checks?.length).map((f) => f.name)).toEqual([]);
  });

  it.concurrent.each(Object.entries(CAUGHT_BY))(
    'fault %s fails %j',
    async (fault, ids) => {
      // Every named check, whatever its area (a fault may name a generated check).
      const results = await runChecks('all', { faults: [fault], ids, requirements: [] });
      expect(notFailed(results, ids)).toEqual([]);
    },
    120_000,
  );

  it('each forgery fault fails its own forgery check and no other but the ones it names', async () => {
    const forgeries = checks.filter((c) => c.id.startsWith('auth.forged-'));
    const results = await runChecks(forgeries, { faults: ['bearer-alg-none-accepted'] });
    expect([...results.values()].filter((r) => r.outcome === 'fail').map((r) => r.id)).toEqual([
      'auth.forged-alg-none',
      'auth.forged-tokens-on-writes',
      'auth.forged-tokens-on-updates',
      'auth.forged-tokens-on-upload',
    ]);
    const answers = results.get('auth.forged-alg-none')!.observations.find((o) => o.key === 'forged-token.answers')!.value as Record<
      string,
      { status: number }
    >;
    // One R4 and one R5 operation, each past authentication with the forged token: the R4 MedicationRequest read
    // its copied grant covers (404 for a random id), the R5 DocumentReference read it does not (403).
    expect(answers).toEqual({ 'alg none R4': { status: 404, code: 'HPB-00102' }, 'alg none R5': { status: 403, code: 'HPB-00104' } });
  });

  it('a route that reads only the claims of a token on updates fails the updates check alone: reads and creates verify it', async () => {
    const forgeries = checks.filter((c) => c.id.startsWith('auth.forged-'));
    const results = await runChecks(forgeries, { faults: ['bearer-not-verified-on-updates'] });
    expect([...results.values()].filter((r) => r.outcome === 'fail').map((r) => r.id)).toEqual(['auth.forged-tokens-on-updates']);
    expect(results.get('auth.forged-tokens-on-updates')!.message).toMatch(/PUT \/fhir\/R4\/\S+ \(R4 \w+\) answered \d+, not 401/);
  });

  it('a route that reads only the claims of a token on $upload fails the upload check alone: reads, creates and updates verify it', async () => {
    const forgeries = checks.filter((c) => c.id.startsWith('auth.forged-'));
    const results = await runChecks(forgeries, { faults: ['bearer-not-verified-on-upload'] });
    expect([...results.values()].filter((r) => r.outcome === 'fail').map((r) => r.id)).toEqual(['auth.forged-tokens-on-upload']);
    expect(results.get('auth.forged-tokens-on-upload')!.message).toMatch(
      /\$upload \(.+\) answered 2\d\d, not 401: the forged token was accepted for an upload/,
    );
    // Clean, every forged upload is refused, and the answers are kept.
    const clean = await runChecks(pick(checks, ['auth.forged-tokens-on-upload']));
    expect(clean.get('auth.forged-tokens-on-upload')!.outcome).toBe('pass');
    const answers = clean.get('auth.forged-tokens-on-upload')!.observations.find((o) => o.key === 'forged-token.upload-answers')!.value as Record<
      string,
      { status: number }
    >;
    expect(Object.values(answers).map((a) => a.status)).toEqual(Array(Object.keys(answers).length).fill(401));
    expect(Object.keys(answers).length).toBeGreaterThanOrEqual(7);
  });

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
    const forgeries = checks.filter((c) => c.id.startsWith('auth.forged-')).map((c) => c.id);
    const confusions = ['auth.token-client-id-parameter-ignored', 'auth.token-scope-outside-grant-not-granted', 'auth.assertion-other-client-identity'];
    const results = await runChecks(
      pick(checks, ['auth.token-issued-for-valid-request', 'auth.invalid-bearer-401', 'auth.token-request-json-body', ...forgeries, ...confusions]),
      { faults: ['bearer-client-key-accepted', 'token-client-id-from-form'] },
    );
    // Accepted forgeries and confused tokens are where a secret could leak into a finding.
    expect([...results.values()].filter((r) => r.outcome === 'fail').map((r) => r.id)).toEqual(
      expect.arrayContaining(['auth.forged-client-key-signed', 'auth.token-client-id-parameter-ignored']),
    );
    const text = JSON.stringify([...results.values()]);
    expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/);
  });
});
