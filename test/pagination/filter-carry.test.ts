/**
 * pagination.next-carries-filter.*'s date filter (suites/pagination/filter-carry.ts): the prefix is
 * the one whose loss the target's order would show (`le` when it lists records forward in time, `ge`
 * when backward), so a next link that drops date fails in either order, and a target that keeps it
 * passes in either.
 */
import { describe, expect, it } from 'vitest';
import { filterCarryChecks } from '../../suites/pagination/filter-carry.js';
import { describeResults, runChecks } from './target.js';

const DATED = filterCarryChecks.filter((c) => /\.(encounter|document-reference)$/.test(c.id));

function judgedDates(results: Awaited<ReturnType<typeof runChecks>>): string[] {
  return [...results.values()].flatMap((r) => {
    const surfaces = r.observations.find((o) => o.key === 'surfaces')?.value as { judged?: Record<string, unknown> } | undefined;
    return Object.keys(surfaces?.judged ?? {}).filter((k) => k.startsWith('date='));
  });
}

describe('the date filter across next links', () => {
  for (const [order, modes, prefix] of [
    ['forward', {}, 'le'],
    ['backward', { orderDirection: 'descending' as const }, 'ge'],
  ] as const) {
    it(`in a ${order} order: judged with ${prefix}, passed when kept, failed when a next link drops it`, async () => {
      const clean = await runChecks(DATED, { modes });
      expect(
        [...clean.values()].map((r) => r.outcome),
        describeResults(clean).join('\n'),
      ).toEqual(['pass', 'pass']);
      const dates = judgedDates(clean);
      expect(dates).toHaveLength(2);
      for (const d of dates) expect(d).toMatch(new RegExp(`^date=${prefix}\\d{4}-\\d{2}-\\d{2}$`));

      const dropped = await runChecks(DATED, { modes, faults: ['pagination-next-drops-date'] });
      for (const r of dropped.values()) {
        expect(r.outcome, describeResults(dropped).join('\n')).toBe('fail');
        expect(r.message).toMatch(new RegExp(`date=${prefix}\\S+: page \\d+ holds \\d+ records that do not match it`));
      }
    }, 60_000);
  }
});
