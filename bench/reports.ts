/**
 * Time to write all four report formats (report.json, junit.xml, report.html,
 * summary.md) for a synthetic run of 1,000 checks with evidence. Target: < 1 s.
 * Run: node --import tsx bench/reports.ts
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeReports } from '../src/report/index.js';
import { syntheticRun } from '../test/report/synthetic-run.js';

const CHECKS = 1000;
const ROUNDS = 5;

const root = await mkdtemp(join(tmpdir(), 'bench-reports-'));
try {
  const result = syntheticRun(CHECKS);
  const times: number[] = [];
  let files: Record<string, string> = {};
  for (let i = 0; i < ROUNDS; i++) {
    const start = performance.now();
    ({ files } = await writeReports(result, { reportsRoot: root, runDirName: `round-${i}` }));
    times.push(performance.now() - start);
  }
  const sorted = [...times].sort((a, b) => a - b);
  const sizes = await Promise.all(Object.entries(files).map(async ([k, f]) => `${k} ${((await stat(f)).size / 1024).toFixed(0)} KiB`));
  console.log(
    `writeReports, ${CHECKS} checks, ${ROUNDS} rounds: first ${times[0]!.toFixed(0)} ms, median ${sorted[Math.floor(ROUNDS / 2)]!.toFixed(0)} ms, best ${sorted[0]!.toFixed(0)} ms (target < 1000 ms)`,
  );
  console.log(`sizes: ${sizes.join(', ')}`);
} finally {
  await rm(root, { recursive: true, force: true });
}
