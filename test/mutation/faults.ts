/** One shard of the mutation test (two shards run in parallel, one per core). */
import { expect, it } from 'vitest';
import { FAULTS } from '../../src/reference/faults/index.js';
import { WINDOW_AREAS, mapPool, mutationScore, runFault, shard, type FaultRun } from '../../src/mutation/run.js';

/**
 * Faults of the window areas mostly wait (rate windows, Retry-After), each on its own reference
 * with its own windows: all of a shard's run at once beside the others (all 38 at once: 73 s wall,
 * 19 s CPU, none missed, at load 1.6).
 */
const WINDOW_CONCURRENCY = Number.POSITIVE_INFINITY;
/**
 * The others are mostly a fraction of a second of CPU each, but some wait: a token lifetime, or the
 * spec's 5xx back-off (1 + 2 + 4 s) on every request a 500/503 fault answers (empty-encounter-search-500
 * about 30 s): a few at a time, so the waits overlap.
 */
const OTHER_CONCURRENCY = 6;

export function faultShard(i: number, n: number): void {
  it(
    `every fault of shard ${i + 1}/${n} fails a check that names a requirement it violates`,
    async () => {
      const faults = shard(FAULTS, i, n);
      const waiting = faults.filter((f) => WINDOW_AREAS.has(f.area));
      const others = faults.filter((f) => !WINDOW_AREAS.has(f.area));
      const [waited, ran] = await Promise.all([
        mapPool(waiting, WINDOW_CONCURRENCY, (f) => runFault(f)),
        mapPool(others, OTHER_CONCURRENCY, (f) => runFault(f)),
      ]);
      // A fault missed while the shard ran beside other runs (a timing check that could not judge on a
      // loaded machine skips, never fails) gets one more run on its own at the end, when the load is lower.
      const firstRuns = [...waited, ...ran];
      const secs = (ms: number) => `${Math.round(ms / 1000)} s`;
      const runs: FaultRun[] = [];
      const rerun: string[] = [];
      for (const r of firstRuns) {
        if (r.detected) runs.push(r);
        else {
          const again = await runFault(faults.find((f) => f.name === r.fault)!);
          rerun.push(`${r.fault} (${secs(r.durationMs)}, then alone ${secs(again.durationMs)}: ${again.detected ? 'detected' : 'missed'})`);
          runs.push(again);
        }
      }
      const score = mutationScore(runs);
      const lines = Object.entries(score.byArea).map(([a, s]) => `  ${a.padEnd(20)} ${s.detected}/${s.total}`);
      // Which faults needed the run alone, or more than one run at first (what makes a shard long on a loaded machine).
      const alone = rerun.length ? `\n  run again alone: ${rerun.join('; ')}` : '';
      const retried = firstRuns
        .filter((r) => (r.attempts?.length ?? 1) > 1)
        .map((r) => `${r.fault} (${r.attempts!.map((a) => `${secs(a.ms)}: ${a.outcomes.slice(0, 160)}`).join(' | ')})`);
      const again = retried.length ? `\n  more than one run: ${retried.join('; ')}` : '';
      const slowest = [...firstRuns].sort((a, b) => b.durationMs - a.durationMs).slice(0, 5);
      const longest = `\n  longest: ${slowest.map((r) => `${r.fault} ${secs(r.durationMs)}`).join(', ')}`;
      console.log(`mutation score, shard ${i + 1}/${n}: ${score.detected}/${score.total}\n${lines.join('\n')}${alone}${again}${longest}`);
      const missed = runs
        .filter((r) => !r.detected)
        .map((r) => {
          const failing =
            r.checks
              .filter((c) => c.outcome === 'fail')
              .map((c) => c.id)
              .join(', ') || 'none';
          const errors =
            r.checks
              .filter((c) => c.outcome === 'error')
              .map((c) => `${c.id}: ${c.message}`)
              .join(' | ') || 'none';
          const missedChecks = r.missedChecks.length ? `; named checks that did not fail: ${r.missedChecks.join(', ')}` : '';
          return `${r.fault} (checks run: ${r.checks.length}; failing: ${failing}${missedChecks}; errors: ${errors}${r.stderr ? `; ${r.stderr}` : ''})`;
        });
      expect(missed, `undetected faults:\n${missed.join('\n')}`).toEqual([]);
    },
    // A hang guard, not a timed test: a shard took 4-5 min beside the mutation modes in a fresh-clone run on 2 cores (9-15 min before the redaction fix).
    30 * 60_000,
  );
}
