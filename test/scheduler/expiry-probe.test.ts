/**
 * The token-expiry probe against a reference with short windows: its token is
 * issued before any check runs, used once shortly before it expires and once
 * after, by the checks scheduled last. Asserts the order of events (timestamps
 * relative to the probe's issue), never how long anything took.
 */
import { describe, expect, it } from 'vitest';
import { runInProcess, describeResults } from '../../src/run/in-process.js';
import tokenLifetime from '../../suites/token-lifetime/checks.js';
import authChecks from '../../suites/auth/checks.js';
import { TEST_LIMITS } from '../auth/target.js';

describe('expiry probe', () => {
  it('is issued at the start and used before and after its expiry, by every check that needs an expired token', async () => {
    const afterExpiry = authChecks.filter((c) => c.tags?.includes('expiry-probe'));
    expect(afterExpiry.map((c) => c.id)).toEqual(['auth.new-token-after-expiry']);
    const results = await runInProcess([...tokenLifetime, ...afterExpiry], { limits: TEST_LIMITS, profile: 'full' });
    expect(describeResults(results).filter((l) => !/: pass\b/.test(l))).toEqual([]);

    const lifetimeMs = TEST_LIMITS.tokenLifetimeSec! * 1000;
    const before = results.get('token-lifetime.valid-before-expiry')!;
    const expired = results.get('token-lifetime.expired-token-refused')!;
    const observedMs = expired.observations.find((o) => o.key === 'token-lifetime.expired-after-ms')!.value as number;
    // The refused request went out after the lifetime, counted from the probe's issue.
    expect(observedMs).toBeGreaterThan(lifetimeMs);
    const issuedAt = Date.parse(expired.evidence[0]!.startedAt) - observedMs;
    // The probe token was issued before the first check started...
    expect(issuedAt).toBeLessThanOrEqual(Date.parse(before.startedAt));
    // ...and used once before it expired (by the runtime's timer), once after.
    const beforeUse = Date.parse(before.evidence[0]!.startedAt);
    expect(beforeUse).toBeLessThan(issuedAt + lifetimeMs);
    expect(beforeUse).toBeGreaterThan(issuedAt);
    // The auth check reused that token instead of waiting out a lifetime of its own: one fresh token request, after the expiry.
    const auth = results.get('auth.new-token-after-expiry')!;
    const tokenRequests = auth.evidence.filter((x) => x.request.url.endsWith('/auth/token'));
    expect(tokenRequests).toHaveLength(1);
    expect(Date.parse(tokenRequests[0]!.startedAt)).toBeGreaterThan(issuedAt + lifetimeMs);
  }, 60_000);
});
