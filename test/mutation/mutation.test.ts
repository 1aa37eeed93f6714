/**
 * Mutation tests: every planted fault is caught by a check naming a
 * requirement it violates, and the clean reference in every
 * alternative-conformant mode raises no false alarm. Each run is a child
 * process of the CLI; two run at a time (both cores).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FAULTS } from '../../src/reference/faults/index.js';
import { ALTERNATIVE_MODES, mapPool, mutationScore, runFault, runMode, type FaultRun } from '../../src/mutation/run.js';
import { loadRequirements } from '../../src/requirements/index.js';

const CONCURRENCY = 2;
const known = new Set(loadRequirements().map((r) => r.id));

describe('fault catalog', () => {
  it('names known requirement ids and unique faults', () => {
    for (const f of FAULTS) {
      expect(f.violates.length, f.name).toBeGreaterThan(0);
      for (const id of f.violates) expect(known.has(id), `${f.name} violates unknown requirement ${id}`).toBe(true);
    }
    expect(new Set(FAULTS.map((f) => f.name)).size).toBe(FAULTS.length);
  });

  it('targets every testable requirement, except the recorded gaps (which may only shrink)', () => {
    const gaps = new Set(JSON.parse(readFileSync(new URL('./uncovered-requirements.json', import.meta.url), 'utf8')) as string[]);
    const targeted = new Set(FAULTS.flatMap((f) => f.violates));
    const uncovered = loadRequirements().filter((r) => r.testable && !targeted.has(r.id)).map((r) => r.id);
    const newGaps = uncovered.filter((id) => !gaps.has(id));
    expect(newGaps, `testable requirements no fault targets: ${newGaps.join(', ')}`).toEqual([]);
    const closed = [...gaps].filter((id) => !uncovered.includes(id));
    expect(closed, `these gaps are now covered; remove them from uncovered-requirements.json: ${closed.join(', ')}`).toEqual([]);
  });
});

describe('mutation score', () => {
  it(
    'every fault fails a check that names a requirement it violates',
    async () => {
      const runs: FaultRun[] = await mapPool(FAULTS, CONCURRENCY, (f) => runFault(f));
      const score = mutationScore(runs);
      const lines = Object.entries(score.byArea).map(([a, s]) => `  ${a.padEnd(20)} ${s.detected}/${s.total}`);
      console.log(`mutation score ${score.detected}/${score.total}\n${lines.join('\n')}`);
      const missed = runs.filter((r) => !r.detected).map((r) => `${r.fault} (exit ${r.exitCode}; failing: ${r.checks.filter((c) => c.outcome === 'fail').map((c) => c.id).join(', ') || 'none'}; errors: ${r.checks.filter((c) => c.outcome === 'error').map((c) => `${c.id}: ${c.message}`).join(' | ') || 'none'}${r.checks.length === 0 ? `; stderr: ${r.stderr}` : ''})`);
      expect(missed, `undetected faults:\n${missed.join('\n')}`).toEqual([]);
    },
    30 * 60_000,
  );
});

describe('no false alarms', () => {
  it.concurrent.each(ALTERNATIVE_MODES.map((m) => [m.label, m] as const))(
    'the clean reference in mode %s gives zero fail and zero error',
    async (_label, spec) => {
      const r = await runMode(spec);
      expect(r.checks.length, r.stderr).toBeGreaterThan(0);
      expect([...r.failures, ...r.errors]).toEqual([]);
      expect(r.exitCode).toBe(0);
    },
    10 * 60_000,
  );
});
