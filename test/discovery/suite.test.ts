import { describe, expect, it } from 'vitest';
import checks from '../../suites/discovery/checks.js';
import { faults } from '../../src/reference/faults/discovery.js';
import { runInProcess, nonConforming } from '../../src/run/in-process.js';

const DISCOVERY_FAULTS = faults.filter((f) => f.area === 'discovery');

describe('discovery suite', () => {
  it.concurrent.each([
    ['default modes', {}],
    ['token endpoint advertised with a trailing slash', { tokenEndpointForm: 'trailing-slash' }],
  ] as const)(
    'passes against the clean reference (%s)',
    async (_label, modes) => {
      const results = await runInProcess(checks, { modes });
      expect(nonConforming(results)).toEqual([]);
      const advertised = results.get('discovery.token-endpoint-advertised')!.observations.find((o) => o.key === 'token-endpoint.advertised');
      expect((advertised?.value as { form: string } | undefined)?.form).toBe(
        'tokenEndpointForm' in modes ? 'the base address /auth/token, spelt otherwise' : 'the base address /auth/token',
      );
    },
    60_000,
  );

  // That each planted fault fails the checks it names is the mutation shards' assertion
  // (test/mutation/faults-1.test.ts, faults-2.test.ts), not repeated here.
  it('every discovery fault names the checks it must fail, all of them discovery checks', () => {
    const ids = new Set(checks.map((c) => c.id));
    expect(DISCOVERY_FAULTS.filter((f) => !f.checks?.length || !f.checks.every((id) => ids.has(id))).map((f) => f.name)).toEqual([]);
  });
});
