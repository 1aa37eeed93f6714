/**
 * The fault catalog is well formed and targets every testable requirement, and
 * the clean reference in every alternative-conformant mode raises no false
 * alarm. A few modes are CLI runs (child processes: the arguments, the report
 * files, the exit code); the others run in-process, the same run path
 * (runConformance) without a process start-up each, and every mode's CLI
 * arguments are proven to give the mode it runs. Fault detection itself is in
 * faults-1/faults-2.test.ts.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FAULTS } from '../../src/reference/faults/index.js';
import { ALTERNATIVE_MODES, modeArgs, runMode, type ModeRun, type ModeSpec } from '../../src/mutation/run.js';
import { parseKeyValues } from '../../src/cli.js';
import { loadRequirements } from '../../src/requirements/index.js';
import { referenceCatalog } from '../../src/run/reference-model.js';

const known = new Set(loadRequirements().map((r) => r.id));

describe('fault catalog', () => {
  it('names known requirement ids and unique faults', () => {
    for (const f of FAULTS) {
      expect(f.violates.length, f.name).toBeGreaterThan(0);
      for (const id of f.violates) expect(known.has(id), `${f.name} violates unknown requirement ${id}`).toBe(true);
    }
    expect(new Set(FAULTS.map((f) => f.name)).size).toBe(FAULTS.length);
  });

  it('names only existing checks as the ones a fault must fail', async () => {
    const ids = new Set((await referenceCatalog()).map((c) => c.id));
    const unknown = FAULTS.flatMap((f) => (f.checks ?? []).filter((id) => !ids.has(id)).map((id) => `${f.name} -> ${id}`));
    expect(unknown).toEqual([]);
  });

  // Observations never fail, so only testable MUST/SHOULD requirements can be targeted.
  it('targets every testable MUST/SHOULD requirement, except the recorded gaps (which may only shrink)', () => {
    const gaps = new Set(JSON.parse(readFileSync(new URL('./uncovered-requirements.json', import.meta.url), 'utf8')) as string[]);
    const targeted = new Set(FAULTS.flatMap((f) => f.violates));
    const uncovered = loadRequirements()
      .filter((r) => r.testable && r.level !== 'observation' && !targeted.has(r.id))
      .map((r) => r.id);
    const newGaps = uncovered.filter((id) => !gaps.has(id));
    expect(newGaps, `testable requirements no fault targets: ${newGaps.join(', ')}`).toEqual([]);
    const closed = [...gaps].filter((id) => !uncovered.includes(id));
    expect(closed, `these gaps are now covered; remove them from uncovered-requirements.json: ${closed.join(', ')}`).toEqual([]);
  });
});

/**
 * Modes run through the CLI (child processes): every full-profile one (they mostly wait out windows and
 * token lifetimes, each on its own event loop, beside the in-process runs' CPU work), and quick ones
 * that give numbers and booleans as `--mode` and a `--limit`.
 */
const isQuick = (m: ModeSpec) => (m.profile ?? 'quick') === 'quick';
const VIA_CLI = new Set([
  ...ALTERNATIVE_MODES.filter((m) => !isQuick(m)).map((m) => m.label),
  'createStatus=202, updateStatus=202',
  'tokenResponseExtras=false',
  'documentMaxBytes=3 MiB',
]);

/** At most `concurrency` of the calls at a time, in call order. */
function limiter(concurrency: number) {
  let free = concurrency;
  const queue: Array<() => void> = [];
  return async <R>(fn: () => Promise<R>): Promise<R> => {
    if (free > 0) free--;
    else await new Promise<void>((r) => queue.push(r));
    try {
      return await fn();
    } finally {
      const next = queue.shift();
      if (next) next();
      else free++;
    }
  };
}

/**
 * Every run starts when the file loads; each test awaits its own (a run never rejects: a crash is
 * its stderr). The full-profile runs all start at once; the quick ones, CPU work, two at a time.
 */
const CLEAN_QUICK: ModeSpec = { label: 'clean quick', profile: 'quick' };
const quickSlot = limiter(2);
const runs = new Map<string, Promise<ModeRun>>();
for (const m of [...ALTERNATIVE_MODES.filter((x) => !isQuick(x)), CLEAN_QUICK, ...ALTERNATIVE_MODES.filter(isQuick)]) {
  const run = () => runMode(m, VIA_CLI.has(m.label) ? 'cli' : 'in-process');
  runs.set(m.label, isQuick(m) ? quickSlot(run) : run());
}

/** The checks the clean reference skips per profile (the profile's exclusions). */
async function skippedWhenClean(profile: string): Promise<Set<string>> {
  const clean = ALTERNATIVE_MODES.find((m) => m.label === 'clean' && (m.profile ?? 'quick') === profile) ?? CLEAN_QUICK;
  const r = await runs.get(clean.label)!;
  return new Set(r.checks.filter((c) => c.outcome === 'skip').map((c) => c.id));
}

describe('no false alarms', () => {
  it('every mode run in-process is given by its CLI arguments (`--mode key=value`, `--limit key=value`)', () => {
    for (const spec of ALTERNATIVE_MODES) {
      const args = modeArgs(spec);
      const flags = (name: string) => args.flatMap((a, i) => (args[i - 1] === name ? [a] : []));
      expect(parseKeyValues(flags('--mode'), '--mode'), spec.label).toEqual(spec.modes ?? {});
      expect(parseKeyValues(flags('--limit'), '--limit'), spec.label).toEqual(spec.limits ?? {});
    }
    expect([...VIA_CLI].filter((l) => !ALTERNATIVE_MODES.some((m) => m.label === l))).toEqual([]);
  });

  it.concurrent.each(ALTERNATIVE_MODES.map((m) => [m.label, m] as const))(
    'the clean reference in mode %s gives zero fail and zero error, and skips nothing more than the clean reference',
    async (_label, spec) => {
      const r = await runs.get(spec.label)!;
      expect(r.checks.length, r.stderr).toBeGreaterThan(0);
      expect([...r.failures, ...r.errors]).toEqual([]);
      expect(r.exitCode).toBe(0);
      // A mode is a conforming choice: it may not turn a check into a skip, except a timing rule
      // this run could not observe (a loaded machine), which says so with its figures.
      const base =
        spec.label === 'clean' ? new Set(r.checks.filter((c) => c.outcome === 'skip').map((c) => c.id)) : await skippedWhenClean(spec.profile ?? 'quick');
      const inconclusive = new Set(r.checks.filter((c) => c.outcome === 'skip' && (c.message ?? '').startsWith('inconclusive on this run')).map((c) => c.id));
      // A check that builds on an inconclusive one says so: "(see <that check>)".
      const followsInconclusive = (message: string) => [...inconclusive].some((id) => message.includes(`(see ${id})`));
      // A channel the mode does not publish (a type-level $upload has no instance to reach) says so: "not applicable: ...".
      const notApplicable = (message: string) => message.startsWith('not applicable: ');
      const extra = r.checks.filter(
        (c) => c.outcome === 'skip' && !base.has(c.id) && !inconclusive.has(c.id) && !followsInconclusive(c.message ?? '') && !notApplicable(c.message ?? ''),
      );
      expect(extra.map((c) => `${c.id}: ${c.message ?? ''}`)).toEqual([]);
    },
    10 * 60_000,
  );
});
