/**
 * The token endpoint is where the target publishes it (smart-configuration's token_endpoint), not only at
 * the spec's `/auth/token`: the run-wide rules judge its answers as the token endpoint's wherever it is.
 */
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../../src/run/in-process.js';

const RULE = 'invariants.rate-limit-headers-present';

describe('the token endpoint where smart-configuration puts it', () => {
  it.each(['canonical', 'trailing-slash'] as const)(
    'tokenEndpointForm=%s: token answers without X-RateLimit-* fail the run-wide rule (rate-limit-headers-missing-token-endpoint)',
    async (tokenEndpointForm) => {
      const results = await runInProcess('all', {
        profile: 'quick',
        only: /^invariants\./,
        faults: ['rate-limit-headers-missing-token-endpoint'],
        modes: { tokenEndpointForm },
      });
      const rule = results.get(RULE)!;
      expect(rule.outcome).toBe('fail');
      expect(rule.findings.some((f) => f.message.includes('X-RateLimit') || f.message.includes('x-ratelimit'))).toBe(true);
    },
    120_000,
  );

  it('tokenEndpointForm=trailing-slash, no fault: the rule passes', async () => {
    const results = await runInProcess('all', { profile: 'quick', only: /^invariants\./, modes: { tokenEndpointForm: 'trailing-slash' } });
    expect(results.get(RULE)!.outcome).toBe('pass');
  }, 120_000);
});
