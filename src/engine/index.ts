/**
 * The engine's public surface: what a suite needs to declare and run its checks,
 * and what a runner or reporter needs of a run. The run path (src/run) uses the
 * modules themselves; everything else imports from here.
 */
export {
  coveringTokens,
  defineCheck,
  excludedBy,
  SURFACE_DIMENSIONS,
  type CheckContext,
  type CheckDefinition,
  type CheckSurfaces,
  type CheckTag,
  type SurfaceDimension,
} from './check.js';
export { collectChecks, materialize, type ChecksExport } from './catalog.js';
export { RunEvents, type EventOf, type PlannedCheck, type RunEvent, type RunEventType, type Subscriber } from './events.js';
export { executePlan, DEFAULT_CHECK_TIMEOUT_MS } from './executor.js';
export { SCHEDULE, planChecks, slotOf, type CatalogCheck, type Slot } from './plan.js';
export {
  EXPIRY_PROBE_KEY,
  JWKS_CONTROL_KEY,
  PROBE_EXPIRY_SLACK_MS,
  Runtime,
  expiryProbe,
  PROBE_EXPIRED_AFTER_MS,
  renewExpiredProbe,
  type ExpiryProbe,
  type RunSpec,
  type ServiceBinding,
} from './runtime.js';
export { episode, planned, pacingFigures, renderPacing, type PacingFigures, type RunStats } from './schedule.js';
export {
  OUTCOMES,
  PROFILES,
  type CheckResult,
  type Exchange,
  type Finding,
  type InvariantTally,
  type KeyRequest,
  type LedgerEntry,
  type Level,
  type Observation,
  type Outcome,
  type Profile,
  type RequirementVerdict,
  type RunInfo,
  type RunResult,
} from './types.js';
