/**
 * Fixture preflight: before the run, which fixtures and client roles the
 * config lacks, and which checks will skip because of them.
 */
import type { CheckDefinition } from './check.js';
import type { ResolvedConfig } from '../config/index.js';

export interface Preflight {
  missingFixtures: Array<{ key: string; checks: string[] }>;
  missingRoles: Array<{ role: string; checks: string[] }>;
}

export function preflight(checks: readonly CheckDefinition[], config: Pick<ResolvedConfig, 'fixtures' | 'clients'>): Preflight {
  const fixtures = new Map<string, string[]>();
  const roles = new Map<string, string[]>();
  for (const c of checks) {
    for (const k of c.fixtures ?? []) if (!config.fixtures[k]) fixtures.set(k, [...(fixtures.get(k) ?? []), c.id]);
    for (const r of c.clients ?? []) if (!config.clients.some((x) => x.role === r)) roles.set(r, [...(roles.get(r) ?? []), c.id]);
  }
  const list = <T extends string>(m: Map<string, string[]>, name: T) =>
    [...m].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => ({ [name]: k, checks: v })) as Array<Record<T, string> & { checks: string[] }>;
  return { missingFixtures: list(fixtures, 'key'), missingRoles: list(roles, 'role') };
}

export function renderPreflight(p: Preflight): string[] {
  const lines: string[] = [];
  const few = (ids: string[]) => (ids.length <= 3 ? ids.join(', ') : `${ids.slice(0, 3).join(', ')} and ${ids.length - 3} more`);
  for (const f of p.missingFixtures) lines.push(`fixture "${f.key}" not in the config: ${f.checks.length} check(s) will skip (${few(f.checks)})`);
  for (const r of p.missingRoles) lines.push(`no client with role "${r.role}": ${r.checks.length} check(s) will skip (${few(r.checks)})`);
  return lines;
}
