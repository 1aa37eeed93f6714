/**
 * The quick run's reference reached in-process (src/http/in-process.ts, the CLI's default for quick)
 * gives every check the verdict it gets over the reference's HTTP socket: the transport saves time,
 * never changes what is judged.
 */
import { describe, expect, it } from 'vitest';
import { describeResults, runInProcess } from '../../src/run/in-process.js';

describe('the transport to the embedded reference', () => {
  it('in-process and http give a quick run the same outcome on every check', async () => {
    const overHttp = await runInProcess('all', { profile: 'quick', transport: 'http' });
    const inProcess = await runInProcess('all', { profile: 'quick', transport: 'in-process' });
    const outcomes = (m: typeof overHttp) => new Map([...m.values()].map((r) => [r.id, r.outcome]));
    expect(inProcess.size).toBeGreaterThan(300);
    expect(outcomes(inProcess), describeResults(inProcess).join('\n')).toEqual(outcomes(overHttp));
    expect([...inProcess.values()].filter((r) => r.outcome === 'fail' || r.outcome === 'error').map((r) => r.id)).toEqual([]);
  }, 120_000);
});
