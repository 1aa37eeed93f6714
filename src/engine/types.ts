/**
 * The result model shared by the engine, the run path and the
 * reporters. Reporters only consume these types; checks never print.
 */
import type { PacingFigures } from './schedule.js';
import type { Exchange } from '../http/types.js';

export type { Exchange } from '../http/types.js';

export type Outcome = 'pass' | 'fail' | 'skip' | 'error' | 'observation';
export const OUTCOMES: readonly Outcome[] = ['pass', 'fail', 'skip', 'error', 'observation'];

/** MUST/SHOULD: the spec states the rule. observation: the spec leaves it open. */
export type Level = 'MUST' | 'SHOULD' | 'observation';

export type Profile = 'quick' | 'full' | 'certification' | 'read-only';
export const PROFILES: readonly Profile[] = ['quick', 'full', 'certification', 'read-only'];

/** A recorded fact about a point the spec leaves open. Never a failure. */
export interface Observation {
  /** Stable key, e.g. `create.success-status`. */
  key: string;
  value: unknown;
  note?: string;
}

/** A typed failure: what the spec requires vs what the target did. */
export interface Finding {
  message: string;
  requirement?: string;
  expected?: unknown;
  actual?: unknown;
  /** Exchange id the finding is about. */
  exchange?: string;
}

/** Run-wide tally of one generic invariant: the first violating exchanges and how many broke it. */
export interface InvariantTally {
  violations: Array<{ finding: Finding; exchange: Exchange }>;
  violationCount: number;
}

/** One completed request made with a client role's token: client clock, ms. */
export interface KeyRequest {
  sentAt: number;
  receivedAt: number;
  /** Absent when no response came (a network failure; it may still have reached the target). */
  status?: number;
}

export interface CheckResult {
  id: string;
  title: string;
  area: string;
  requirements: string[];
  level: Level;
  outcome: Outcome;
  /** One readable line: why it failed, skipped or errored, or what was observed. */
  message?: string;
  expected?: unknown;
  actual?: unknown;
  findings: Finding[];
  observations: Observation[];
  evidence: Exchange[];
  /** curl for the exchange most relevant to the verdict ($TOKEN for the token). */
  curl?: string;
  startedAt: string;
  durationMs: number;
  /** Resources this check created on the target (the run's ledger is their union). */
  created?: LedgerEntry[];
  /** Requests this check sent, and 429s it did not provoke on purpose. */
  stats?: { requests: number; unplanned429: number };
}

export interface RequirementVerdict {
  id: string;
  level: Level;
  text: string;
  section: string;
  testable: boolean;
  reason?: string;
  checks: string[];
  /** `partial`: some checks passed and others skipped (src/report/rollup.ts). */
  outcome: Outcome | 'partial' | 'untested';
}

/** Entry of the ledger of resources the run created on the target. */
export interface LedgerEntry {
  resourceType: string;
  id: string;
  url: string;
  createdBy: string;
  at: string;
}

export interface RunInfo {
  runId: string;
  toolVersion: string;
  specSha256: string;
  target: {
    baseUrl: string;
    embedded: boolean;
    openapiSha256?: string;
    capabilitySha256?: string;
  };
  profile: Profile;
  /** The effective config with secrets replaced by `[redacted]`. */
  config: unknown;
  /** Deviations from spec defaults declared by the config (token lifetime, windows, ceilings). */
  deviations: string[];
  startedAt: string;
  endedAt: string;
  interrupted: boolean;
  exitCode?: number;
  /** What kept the run from working at all (an unreachable target, a refused client), in one paragraph. */
  setupError?: string;
  /** Certification runs: wall time against the run's lower bound at the limits in force (src/engine/schedule.ts). */
  pacing?: PacingFigures;
}

export interface RunResult {
  info: RunInfo;
  checks: CheckResult[];
  requirements: RequirementVerdict[];
  ledger: LedgerEntry[];
  /** Divergences found between the target's OpenAPI document and CapabilityStatement, and between the spec's stated R5 surface and what the target publishes. */
  divergences: string[];
}
