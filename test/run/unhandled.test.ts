/**
 * A rejection nothing handles during a run is a bug of the suite (src/run/index.ts): the run goes
 * on, keeps its verdicts, and ends in error (exit 3), never with Node's crash (exit 1, which would
 * say a check failed).
 */
import { describe, expect, it } from 'vitest';
import { defineCheck } from '../../src/engine/check.js';
import { runConformance } from '../../src/run/index.js';

const base = { area: 'demo', level: 'MUST' as const, requirements: ['demo.rule'], title: 'a demo check' };

describe('an unhandled rejection during a run', () => {
  it('ends the run in error with what it was, and the other checks keep their verdicts', async () => {
    const leaky = defineCheck({
      ...base,
      id: 'demo.leaky',
      run: async () => {
        void Promise.reject(new Error('lost promise'));
        await new Promise((r) => setTimeout(r, 20));
      },
    });
    const after = defineCheck({ ...base, id: 'demo.after', run: async () => {} });
    const run = await runConformance({ checks: [leaky, after], profile: 'full', progress: false, writeReports: false });
    expect(run.results.map((r) => [r.id, r.outcome])).toEqual([
      ['demo.leaky', 'pass'],
      ['demo.after', 'pass'],
    ]);
    expect(run.setupError).toBe("internal error (a bug of the suite, not the target's): lost promise");
    expect(run.exitCode).toBe(3);
  }, 60_000);
});
