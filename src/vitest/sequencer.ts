/**
 * Orders suite files for the scheduler (vitest runs them one after another):
 * - discovery first, then the rate-limit header checks while `main` still has room
 *   in its window (they read X-RateLimit-Remaining over consecutive requests);
 * - the areas whose requests are paced per key;
 * - late, the checks that exhaust a limit: the rate-limit suite starts its episodes
 *   together (key excess, sliding window, token issuance), so their waits overlap
 *   and each window's recovery is waited out once;
 * - the checks that use the token-expiry probe (issued at the start of the run, used
 *   once expired, token-lifetime and auth/expiry.suite.ts) and the run-wide invariants last.
 */
import type { TestSpecification } from 'vitest/node';

export const AREA_ORDER = [
  'discovery',
  'rate-limit:headers',
  'auth',
  'scopes',
  'generated',
  'headers',
  'errors',
  'tenancy',
  'medication-request',
  'encounter',
  'document-reference',
  'versioning',
  'pagination',
  // late: they drive limits to 429 or wait out windows
  'rate-limit',
  'issuance-limit',
  'token-lifetime',
  'invariants',
] as const;

/** Suite files scheduled apart from the rest of their area, as `<area>/<file>`: their slot in AREA_ORDER. */
const FILE_SLOTS: Record<string, string> = {
  'rate-limit/headers.suite.ts': 'rate-limit:headers',
  'auth/expiry.suite.ts': 'token-lifetime',
};

export function areaOfFile(moduleId: string): string {
  const m = /[\\/]suites[\\/]([^\\/]+)[\\/]([^\\/]+)$/.exec(moduleId);
  if (!m) return '';
  return FILE_SLOTS[`${m[1]}/${m[2]}`] ?? m[1]!;
}

/** Rank of an area (or file slot); an unknown area runs with the paced ones, before the late areas. */
export function areaRank(area: string): number {
  const i = (AREA_ORDER as readonly string[]).indexOf(area);
  return i === -1 ? AREA_ORDER.indexOf('pagination') : i;
}

export class ConformanceSequencer {
  async shard(files: TestSpecification[]): Promise<TestSpecification[]> {
    return files;
  }

  async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return [...files].sort(
      (a, b) => areaRank(areaOfFile(a.moduleId)) - areaRank(areaOfFile(b.moduleId)) || a.moduleId.localeCompare(b.moduleId),
    );
  }
}
