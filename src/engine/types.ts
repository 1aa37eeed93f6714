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

export type Profile = 'quick' | 'full' | 'certification' | 'read-only' | 'gate';
export const PROFILES: readonly Profile[] = ['quick', 'full', 'certification', 'read-only', 'gate'];

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
  /**
   * Requests this check sent, those answered with another check's exchange (`shared`), the
   * requests it planned (its budget) and 429s it did not provoke on purpose.
   */
  stats?: {
    requests: number;
    tokenRequests?: number;
    mainKeyRequests?: number;
    shared?: number;
    sharedMainKey?: number;
    planned?: number;
    unplanned429: number;
  };
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
  /** The run's requests against its plan: per area, shared exchanges, requests per covered requirement (src/engine/budget.ts). */
  budget?: RequestBudget;
}

/** The requests of one area's checks. */
export interface AreaRequests {
  checks: number;
  /** Requests the area's checks planned (declared or estimated) before the run. */
  planned: number;
  /** Requests sent by the area's checks and the episodes they started. */
  requests: number;
  /** Requests answered with an exchange another check had made (sent once, counted once, under the check that sent it). */
  shared: number;
}

/** A requirement the run did not judge, and why (the `gate` profile lists what it leaves to `full`). */
export interface LeftToFull {
  requirement: string;
  reason: string;
}

export interface RequestBudget {
  profile: Profile;
  /** Requests the checks that ran planned. */
  planned: number;
  /** Every HTTP request the run sent: discovery, preflight, checks, episodes, token requests (every attempt). */
  requests: number;
  /** Of which to the token endpoint. */
  tokenRequests: number;
  /** Requests answered from the run's shared exchanges instead of being sent. */
  shared: number;
  byArea: Record<string, AreaRequests>;
  /** Requests no check sent: discovery and the preflight. */
  setup: number;
  /** Requirements with a verdict (not untested, not skip). */
  coveredRequirements: number;
  /** requests / coveredRequirements. */
  requestsPerRequirement: number;
  /** Client roles whose keys carried the paced requests, and why (one key unless the config declares the organization's ceiling). */
  keys: { roles: string[]; reason: string };
  /** Requests sent by the detached episodes a check started (the exhaustion episodes), by that check's id. */
  episodes?: Record<string, { requests: number; tokenRequests: number; mainKeyRequests: number }>;
  /** `gate`: the MUST requirements it does not judge, each with why. */
  leftToFull?: LeftToFull[];
}

/** A lane of the run timeline: a client role's key, the token endpoint (limited per source address), or requests without a key. */
export interface TimelineLane {
  name: string;
  kind: 'key' | 'token-endpoint' | 'none';
  /** The declared ceiling per window: the key's requests, or the token requests of the source address. */
  ceiling?: number;
  /** The declared window, seconds. */
  windowSec?: number;
}

/** How the suite waited: a 429's Retry-After (or the hold it sets on the key), client-side pacing, a 5xx back-off, a check's own wait. */
export type TimelineWaitKind = 'retry-after' | 'pacing' | 'backoff' | 'check';

/**
 * The run's traffic over time, for the report's timeline (src/engine/timeline-collector.ts).
 * Times are whole ms from `startedAt`; lanes are indexes into `lanes`. Times, lanes, statuses
 * and exchange ids only: no token, no URL, no body.
 */
export interface RunTimeline {
  version: 1;
  startedAt: string;
  /** Every request of the run's HTTP client: [sent, duration ms, lane, status (0: no answer), exchange id]. */
  requests: Array<[number, number, number, number, string]>;
  /** Answers that asked to wait (429 or 503 with Retry-After): [answered, lane, ms asked, exchange id]. */
  retryAfter: Array<[number, number, number, string]>;
  /** Waits of the suite: [started, lane (-1: none), ms, kind]. */
  waits: Array<[number, number, number, TimelineWaitKind]>;
  /** Tokens issued: [request sent, lane of the client's key, expiry, exchange id]. */
  tokens: Array<[number, number, number, string]>;
  lanes: TimelineLane[];
  /** The declared token lifetime, seconds. */
  tokenLifetimeSec: number;
  /** The stretch each timing check rests on: its evidence's first send to its last answer, on its evidence's lanes. */
  checks: Record<string, { from: number; to: number; lanes: number[] }>;
}

export interface RunResult {
  info: RunInfo;
  checks: CheckResult[];
  requirements: RequirementVerdict[];
  ledger: LedgerEntry[];
  /** Divergences found between the target's OpenAPI document and CapabilityStatement, and between the spec's stated R5 surface and what the target publishes. */
  divergences: string[];
  /** The run's requests, waits and tokens over time (absent when no check ran). */
  timeline?: RunTimeline;
}
