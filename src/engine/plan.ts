/**
 * The run's schedule, declared as data in this one place. Every runner (the CLI,
 * the embedded run, the mutation runner, the project tests) orders checks with
 * `planChecks`, so a fault run executes checks in exactly the order of a product run.
 *
 * A check's slot follows from its tags:
 * - `early`: before anything else spends the key's window (discovery, and the
 *   rate-limit header checks that read X-RateLimit-Remaining over consecutive requests);
 * - `paced`: everything else, paced per key;
 * - `exhausting` (`exhausts-key-limit`, `exhausts-issuance-limit`): drive a limit to 429;
 *   late, so nothing after them meets a throttled key or a full issuance window;
 * - `probe` (`expiry-probe`): use the token issued at the start of the run, once expired;
 * - `last`: read what the whole run saw (the run-wide invariants).
 * Within a slot, checks keep their suite folder's rank below, then catalog order.
 */
import type { CheckDefinition, CheckTag } from './check.js';

export type Slot = 'early' | 'paced' | 'exhausting' | 'probe' | 'last';

export const SCHEDULE = {
  slots: ['early', 'paced', 'exhausting', 'probe', 'last'] as readonly Slot[],
  /**
   * Suite folders in run order within a slot. A folder not listed runs after the listed
   * ones, in name order. Tenancy (the other organization's key) comes right after auth: the
   * key episodes on that key start beside the paced checks once the last check declaring it
   * has run (src/engine/executor.ts, gatherEarlyKeyUsers), so early in the run they end well
   * before the exhausting slot. Auth, whose checks use that key without declaring it (a
   * declared role makes a check skip without it), stays before them.
   */
  folders: [
    'discovery',
    'rate-limit',
    'auth',
    'tenancy',
    'scopes',
    'generated',
    'headers',
    'errors',
    'medication-request',
    'general',
    'encounter',
    'document-reference',
    'versioning',
    'media-type',
    'pagination',
    'issuance-limit',
    'token-lifetime',
    'invariants',
  ] as readonly string[],
} as const;

const SLOT_OF_TAG: ReadonlyArray<[CheckTag, Slot]> = [
  ['last', 'last'],
  ['expiry-probe', 'probe'],
  ['exhausts-key-limit', 'exhausting'],
  ['exhausts-issuance-limit', 'exhausting'],
  ['early', 'early'],
];

export function slotOf(check: Pick<CheckDefinition, 'tags'>): Slot {
  const tags = check.tags ?? [];
  for (const [tag, slot] of SLOT_OF_TAG) if (tags.includes(tag)) return slot;
  return 'paced';
}

/** Rank of a suite folder within a slot. */
export function folderRank(folder: string | undefined): number {
  const i = folder === undefined ? -1 : SCHEDULE.folders.indexOf(folder);
  return i === -1 ? SCHEDULE.folders.length : i;
}

/** A check as the catalog found it: its suite folder travels with it. */
export type CatalogCheck = CheckDefinition & { readonly folder?: string };

/**
 * The checks in run order (a stable sort: slot, folder rank, folder name, catalog order).
 * `arrange` may reorder the checks of a slot (the run path spreads the checks that only talk
 * to the token endpoint through the paced slot: src/engine/budget.ts, spreadTokenChecks).
 */
export function planChecks<T extends CatalogCheck>(checks: readonly T[], arrange?: (slot: Slot, checks: T[]) => T[]): T[] {
  // Each check's keys once, folder names compared once per pair of folders (not per comparison).
  const folders = [...new Set(checks.map((c) => c.folder ?? ''))].sort((a, b) => a.localeCompare(b));
  const sorted = checks
    .map((c, i) => ({ c, i, slot: SCHEDULE.slots.indexOf(slotOf(c)), rank: folderRank(c.folder), name: folders.indexOf(c.folder ?? '') }))
    .sort((a, b) => a.slot - b.slot || a.rank - b.rank || a.name - b.name || a.i - b.i)
    .map((x) => x.c);
  if (!arrange) return sorted;
  return SCHEDULE.slots.flatMap((slot) =>
    arrange(
      slot,
      sorted.filter((c) => slotOf(c) === slot),
    ),
  );
}
