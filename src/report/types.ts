/** The report model: what report.json holds and every renderer consumes. */
import type { CheckResult, LedgerEntry, Outcome, RequirementVerdict, RunInfo } from '../engine/types.js';

/** Major.minor; readers accept any report with the same major version. */
export const REPORT_FORMAT_VERSION = '1.1';

export type OutcomeCounts = Record<Outcome, number>;
/** `partial`: some checks passed, others skipped (1.1). */
export type RequirementOutcome = Outcome | 'partial' | 'untested';

export interface ReportSummary {
  total: number;
  byOutcome: OutcomeCounts;
  byArea: Record<string, OutcomeCounts>;
  requirements: Record<RequirementOutcome, number>;
}

export interface ReportObservation {
  check: string;
  key: string;
  value: unknown;
  note?: string;
}

export interface ReportDocument {
  formatVersion: string;
  run: RunInfo;
  /** true when the document went through maskPhi (--redact-phi). */
  phiMasked?: boolean;
  summary: ReportSummary;
  checks: CheckResult[];
  requirements: RequirementVerdict[];
  observations: ReportObservation[];
  ledger: LedgerEntry[];
  divergences: string[];
}

/** One check (or requirement) whose presence or outcome differs between two reports. */
export interface DiffItem {
  id: string;
  before?: RequirementOutcome;
  after?: RequirementOutcome;
  title?: string;
  /** For a regression: what got worse, e.g. `no longer runs (skip)`. */
  why?: string;
}

export interface ReportDiff {
  regressed: DiffItem[];
  fixed: DiffItem[];
  added: DiffItem[];
  removed: DiffItem[];
  changed: DiffItem[];
  requirements: { regressed: DiffItem[]; fixed: DiffItem[]; added: DiffItem[]; removed: DiffItem[] };
}
