/**
 * Which checks each alternative-conformant mode skips beyond the clean reference in the
 * same profile, with the reasons: `node --import tsx scripts/mode-skips.ts`.
 * A mode may only add skips a target could not cause by breaking the rule.
 */
import { ALTERNATIVE_MODES, mapPool, runMode } from '../src/mutation/run.js';

const baseline = new Map<string, Set<string>>();
for (const profile of ['quick', 'full'] as const) {
  const r = await runMode({ label: `clean ${profile}`, profile });
  baseline.set(profile, new Set(r.checks.filter((c) => c.outcome === 'skip').map((c) => c.id)));
}
const runs = await mapPool(ALTERNATIVE_MODES, 2, async (spec) => ({ spec, run: await runMode(spec) }));
for (const { spec, run } of runs) {
  const base = baseline.get(spec.profile ?? 'quick')!;
  const extra = run.checks.filter((c) => c.outcome === 'skip' && !base.has(c.id));
  const bad = run.failures.length + run.errors.length;
  console.log(`${spec.label}: ${extra.length} extra skip(s)${bad ? `, ${bad} fail/error` : ''}`);
  for (const c of extra) console.log(`  ${c.id}: ${(c.message ?? '').slice(0, 240)}`);
}
