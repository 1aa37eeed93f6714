/**
 * How the CLI, the globalSetup and the reporter (all in the main process, but
 * loaded by different module loaders) share one run's state: a single object on
 * globalThis. Workers receive the JSON-safe part through vitest's provide/inject.
 */
import type { ReferenceOptions } from '../reference/types.js';
import type { OperationModel } from '../discovery/index.js';
import type { CheckResult, Profile } from '../engine/types.js';
import type { RunSpec } from '../engine/runtime.js';
import type { PacingFigures, RunStats } from '../engine/schedule.js';

export interface RunOptions {
  /** Target config file; absent = the embedded reference. */
  configPath?: string;
  profile?: Profile;
  /** Root directory for reports (default `reports`). */
  reportsRoot?: string;
  /** Only checks whose id or title matches this pattern. */
  only?: string;
  /** Only checks that name one of these requirement ids (mutation runs). */
  requirements?: string[];
  redactPhi?: boolean;
  /** Options for the embedded reference (faults, modes, limits). */
  reference?: ReferenceOptions;
  /** Live progress on stderr (default true when stderr is a TTY or CI). */
  progress?: boolean;
  /** Write the report files (default true). */
  writeReports?: boolean;
}

export interface RunState {
  options: RunOptions;
  runId: string;
  startedAt: string;
  spec?: RunSpec;
  model?: OperationModel;
  redactedConfig?: unknown;
  deviations: string[];
  baseUrl?: string;
  embedded: boolean;
  /** A fatal problem before any check could run (unreachable target, bad config). */
  setupError?: string;
  results: CheckResult[];
  interrupted: boolean;
  reportDir?: string;
  exitCode?: number;
  /** The run's cumulative traffic as of its last check. */
  runStats?: RunStats;
  /** Pacing figures of a certification run (wall time, lower bound, ratio). */
  pacing?: PacingFigures;
}

const KEY = Symbol.for('fhir-conformance.run');

export function setRunState(state: RunState): void {
  (globalThis as Record<symbol, unknown>)[KEY] = state;
}

export function getRunState(): RunState | undefined {
  return (globalThis as Record<symbol, unknown>)[KEY] as RunState | undefined;
}

export const PROVIDE_KEY = 'fhirConformanceRun';

declare module 'vitest' {
  export interface ProvidedContext {
    fhirConformanceRun: RunSpec;
  }
  interface TaskMeta {
    conformance?: CheckResult;
    checkId?: string;
    /** The run's cumulative traffic after this check. */
    runStats?: RunStats;
  }
}
