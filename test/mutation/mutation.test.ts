/**
 * The fault catalog is well formed and targets every testable requirement, and
 * the clean reference in every alternative-conformant mode raises no false
 * alarm (each mode is a CLI run, two at a time). Fault detection itself is in
 * faults-1/faults-2.test.ts.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FAULTS } from '../../src/reference/faults/index.js';
import { ALTERNATIVE_MODES, runMode } from '../../src/mutation/run.js';
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

/** The checks the clean reference skips per profile (the profile's exclusions), run once. */
const cleanSkips = new Map<string, Promise<Set<string>>>();
function skippedWhenClean(profile: string): Promise<Set<string>> {
  let p = cleanSkips.get(profile);
  if (!p) {
    const spec = ALTERNATIVE_MODES.find((m) => m.label === 'clean' && (m.profile ?? 'quick') === profile) ?? {
      label: `clean ${profile}`,
      profile: profile as 'quick',
    };
    p = runMode(spec).then((r) => new Set(r.checks.filter((c) => c.outcome === 'skip').map((c) => c.id)));
    cleanSkips.set(profile, p);
  }
  return p;
}

describe('no false alarms', () => {
  it.concurrent.each(ALTERNATIVE_MODES.map((m) => [m.label, m] as const))(
    'the clean reference in mode %s gives zero fail and zero error, and skips nothing more than the clean reference',
    async (_label, spec) => {
      const r = await runMode(spec);
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
