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

  it.concurrent.each(DISCOVERY_FAULTS.map((f) => [f.name, f.checks ?? []] as const))(
    'fault %s fails %j',
    async (fault, ids) => {
      expect(ids.length).toBeGreaterThan(0);
      const results = await runInProcess(
        checks.filter((c) => ids.includes(c.id)),
        { faults: [fault] },
      );
      expect(
        ids.filter((id) => results.get(id)?.outcome !== 'fail').map((id) => `${id}: ${results.get(id)?.outcome} ${results.get(id)?.message ?? ''}`),
      ).toEqual([]);
    },
    60_000,
  );
});
