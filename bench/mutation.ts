/**
 * bench:mutation — runs every fault of the catalog against the suite and
 * prints the mutation score per area, the wall time and the slowest faults.
 */
import { FAULTS } from '../src/reference/faults/index.js';
import { mapPool, mutationScore, runFault } from '../src/mutation/run.js';

const t0 = Date.now();
const runs = await mapPool(FAULTS, 2, (f) => runFault(f));
const wallS = (Date.now() - t0) / 1000;
const score = mutationScore(runs);

console.log(`mutation score: ${score.detected}/${score.total} (${((100 * score.detected) / Math.max(1, score.total)).toFixed(1)}%)`);
for (const [area, s] of Object.entries(score.byArea).sort()) console.log(`  ${area.padEnd(22)} ${s.detected}/${s.total}`);
const missed = runs.filter((r) => !r.detected);
if (missed.length) console.log(`undetected: ${missed.map((r) => r.fault).join(', ')}`);
console.log(`wall time: ${wallS.toFixed(1)} s for ${runs.length} faults (2 at a time)`);
console.log('slowest faults:');
for (const r of [...runs].sort((a, b) => b.durationMs - a.durationMs).slice(0, 8))
  console.log(`  ${(r.durationMs / 1000).toFixed(1).padStart(6)} s  ${r.fault}`);
console.log(JSON.stringify({ detected: score.detected, faults: score.total, wall_s: Number(wallS.toFixed(1)) }));
