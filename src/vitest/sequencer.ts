/**
 * Orders suite files for the scheduler: discovery first; checks that exhaust a
 * limit late, so they stall nothing else; the token-expiry probe (issued at the
 * start of the run) and the run-wide invariants last.
 */
import type { TestSpecification } from 'vitest/node';

export const AREA_ORDER = [
  'discovery',
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

export function areaOfFile(moduleId: string): string {
  const m = /[\\/]suites[\\/]([^\\/]+)[\\/]/.exec(moduleId);
  return m?.[1] ?? '';
}

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
