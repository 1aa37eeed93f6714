/**
 * A check is data: an id, the requirements it verifies, the spec sentence it
 * quotes, and a `run` function. Suites register checks; the engine runs them.
 */
import type { Level, Profile } from './types.js';
import type { CheckContext } from './context.js';

/**
 * - `writes`: sends POST/PUT to FHIR endpoints (excluded by the read-only profile).
 * - `waits`: must wait out a token lifetime or a rate window (excluded by quick).
 * - `exhausts-key-limit` / `exhausts-issuance-limit`: drives a limit to 429; scheduled last.
 * - `expiry-probe`: uses the token issued at the start of the run; scheduled at the very end.
 * - `early`: runs before anything else spends the key's window; `last`: reads what the whole run saw.
 * The schedule (src/engine/plan.ts) derives each check's slot from these tags.
 */
export type CheckTag = 'writes' | 'waits' | 'exhausts-key-limit' | 'exhausts-issuance-limit' | 'expiry-probe' | 'early' | 'last';

export interface CheckDefinition {
  /** Stable id `<area>.<slug>`, e.g. `pagination.next-absent-on-last-page`. */
  id: string;
  title: string;
  area: string;
  /** Requirement ids from suites/requirements.json this check verifies. */
  requirements: string[];
  /** MUST/SHOULD checks pass or fail; observation checks record and never fail. */
  level: Level;
  /** The spec sentence the check verifies, verbatim. */
  quote?: string;
  tags?: CheckTag[];
  /** Fixture keys the check needs; missing ones make it skip with a reason. */
  fixtures?: string[];
  /** Client roles the check needs besides `main`. */
  clients?: string[];
  /** Overall time budget, ms (default 120 s; waiting checks get more). */
  timeoutMs?: number;
  /**
   * Rate windows this check must wait out at least (e.g. 1.5 for a sliding-window
   * scenario); the run's lower bound in the pacing figures counts the largest that ran.
   */
  waitWindows?: number;
  run(ctx: CheckContext): Promise<void>;
}

export function defineCheck(def: CheckDefinition): CheckDefinition {
  if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(def.id)) throw new Error(`check id "${def.id}" must look like area.slug`);
  if (def.requirements.length === 0) throw new Error(`check ${def.id} declares no requirement`);
  return def;
}

/** Why a profile excludes a check, or undefined when it runs. */
export function excludedBy(profile: Profile, check: Pick<CheckDefinition, 'tags'>): string | undefined {
  const tags = check.tags ?? [];
  if (profile === 'read-only' && tags.includes('writes')) return 'the read-only profile sends no POST or PUT to FHIR endpoints';
  if (profile === 'read-only' && (tags.includes('exhausts-key-limit') || tags.includes('exhausts-issuance-limit')))
    return 'the read-only profile does not exhaust rate limits';
  if (profile === 'quick' && tags.includes('waits')) return 'the quick profile skips checks that wait out a token lifetime or a rate window';
  return undefined;
}
