/** The report model: what report.json holds and every renderer consumes. */
import type { CheckResult, Exchange, LedgerEntry, Outcome, RequirementVerdict, RunInfo } from '../engine/types.js';
import type { ReportTimeline } from './timeline.js';

/**
 * Major.minor; readers accept any report with the same major version, and
 * readReport also reads 1.x (evidence inline in every check) into this model.
 */
export const REPORT_FORMAT_VERSION = '2.1';

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

/** A request or response body in a report: inline (`body`) when short, else `bodyRef` into `ReportDocument.bodies`. */
interface BodyRef {
  /** sha256 (hex, of the UTF-8 text) of the body stored in `bodies`. */
  bodyRef?: string;
}

/**
 * An exchange as a report stores it (src/report/evidence.ts): once per run, its
 * long bodies in the run's body table, its curl left out when curlOf() rebuilds
 * exactly that command from the request.
 */
export interface ReportExchange extends Omit<Exchange, 'request' | 'response' | 'curl'> {
  request: Exchange['request'] & BodyRef;
  response?: NonNullable<Exchange['response']> & BodyRef;
  curl?: string;
}

/**
 * A check as a report stores it: `evidence` lists exchange ids, in order, of
 * `ReportDocument.exchanges`; `curlExchange` names the exchange whose curl is
 * the check's (instead of `curl`; checkCurl() resolves either).
 */
export interface ReportCheck extends Omit<CheckResult, 'evidence' | 'created' | 'stats'> {
  evidence: string[];
  curlExchange?: string;
}

export interface ReportDocument {
  formatVersion: string;
  run: RunInfo;
  /** true when the document went through maskPhi (--redact-phi). */
  phiMasked?: boolean;
  summary: ReportSummary;
  checks: ReportCheck[];
  requirements: RequirementVerdict[];
  observations: ReportObservation[];
  ledger: LedgerEntry[];
  divergences: string[];
  /** Every exchange cited as evidence, once, by id (in the order the checks first cite them). */
  exchanges: Record<string, ReportExchange>;
  /** Bodies of at least BODY_REF_MIN characters, once each, by the sha256 of their text. */
  bodies: Record<string, string>;
  /** 2.1: the run's requests, waits and tokens over time (report.html draws it). */
  timeline?: ReportTimeline;
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
