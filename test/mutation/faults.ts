/** One shard of the mutation test (two shards run in parallel, one per core). */
import { expect, it } from 'vitest';
import { FAULTS } from '../../src/reference/faults/index.js';
import { mutationScore, runFault, shard, type FaultRun } from '../../src/mutation/run.js';

export function faultShard(i: number, n: number): void {
  it(
    `every fault of shard ${i + 1}/${n} fails a check that names a requirement it violates`,
    async () => {
      const runs: FaultRun[] = [];
      for (const f of shard(FAULTS, i, n)) runs.push(await runFault(f));
      const score = mutationScore(runs);
      const lines = Object.entries(score.byArea).map(([a, s]) => `  ${a.padEnd(20)} ${s.detected}/${s.total}`);
      console.log(`mutation score, shard ${i + 1}/${n}: ${score.detected}/${score.total}\n${lines.join('\n')}`);
      const missed = runs
        .filter((r) => !r.detected)
        .map((r) => {
          const failing = r.checks.filter((c) => c.outcome === 'fail').map((c) => c.id).join(', ') || 'none';
          const errors = r.checks.filter((c) => c.outcome === 'error').map((c) => `${c.id}: ${c.message}`).join(' | ') || 'none';
          const missedChecks = r.missedChecks.length ? `; named checks that did not fail: ${r.missedChecks.join(', ')}` : '';
          return `${r.fault} (checks run: ${r.checks.length}; failing: ${failing}${missedChecks}; errors: ${errors}${r.stderr ? `; ${r.stderr}` : ''})`;
        });
      expect(missed, `undetected faults:\n${missed.join('\n')}`).toEqual([]);
    },
    20 * 60_000,
  );
}
