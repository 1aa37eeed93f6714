/**
 * RunResult -> ReportDocument: canonical key order, checks sorted by area then
 * id, requirements by id, requirement verdicts re-derived from the checks with
 * rollupRequirement, summary counts, flattened observations, secrets scrubbed,
 * evidence stored once (exchanges by id, long bodies by hash: ./evidence.ts).
 */
import type { CheckResult, Exchange, LedgerEntry, Outcome, RequirementVerdict, RunInfo, RunResult } from '../engine/types.js';
import { internBodies, storeExchanges } from './evidence.js';
import { mapStrings } from './map-strings.js';
import { rollupRequirement } from './rollup.js';
import { scrubSecrets } from './scrub-secrets.js';
import { compactTimeline } from './timeline.js';
import { REPORT_FORMAT_VERSION } from './types.js';
import type { OutcomeCounts, ReportCheck, ReportDocument, ReportObservation, ReportSummary, RequirementOutcome } from './types.js';

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'variant' });
export const compareIds = (a: string, b: string): number => collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);

export function buildReport(result: RunResult): ReportDocument {
  const sorted = result.checks.map(canonicalCheck).sort((a, b) => compareIds(a.area, b.area) || compareIds(a.id, b.id));
  const { checks, exchanges } = storeExchanges(sorted);
  const requirements = deriveVerdicts(result.requirements, checks);
  const doc: ReportDocument = {
    formatVersion: REPORT_FORMAT_VERSION,
    run: canonicalRunInfo(result.info),
    summary: summarize(checks, requirements),
    checks,
    requirements,
    observations: flattenObservations(checks),
    ledger: result.ledger.map(canonicalLedgerEntry),
    divergences: [...result.divergences],
    exchanges,
    bodies: {},
    ...(result.timeline ? { timeline: compactTimeline(result.timeline, new Set(Object.keys(exchanges))) } : {}),
  };
  // Scrubbed while every body is still inline, so the body table is keyed by what it stores.
  return internBodies(mapStrings(doc, scrubSecrets));
}

export function emptyCounts(): OutcomeCounts {
  return { pass: 0, fail: 0, skip: 0, error: 0, observation: 0 };
}

function summarize(checks: ReportCheck[], requirements: RequirementVerdict[]): ReportSummary {
  const byOutcome = emptyCounts();
  const byArea: Record<string, OutcomeCounts> = {};
  for (const c of checks) {
    byOutcome[c.outcome]++;
    (byArea[c.area] ??= emptyCounts())[c.outcome]++;
  }
  const req: Record<RequirementOutcome, number> = { ...emptyCounts(), partial: 0, untested: 0 };
  for (const r of requirements) req[r.outcome]++;
  return { total: checks.length, byOutcome, byArea, requirements: req };
}

/** A requirement's checks are those it lists plus those that cite it; its verdict is their rollup. */
function deriveVerdicts(verdicts: RequirementVerdict[], checks: ReportCheck[]): RequirementVerdict[] {
  const outcomeById = new Map(checks.map((c) => [c.id, c.outcome]));
  const citing = new Map<string, string[]>();
  for (const c of checks) for (const r of c.requirements) (citing.get(r) ?? citing.set(r, []).get(r)!).push(c.id);
  return verdicts
    .map((v) => {
      const ids = [...new Set([...v.checks, ...(citing.get(v.id) ?? [])])].sort(compareIds);
      const outcomes = ids.map((id) => outcomeById.get(id)).filter((o): o is Outcome => o !== undefined);
      return canonicalVerdict({ ...v, checks: ids, outcome: rollupRequirement(outcomes) });
    })
    .sort((a, b) => compareIds(a.id, b.id));
}

function flattenObservations(checks: ReportCheck[]): ReportObservation[] {
  return checks.flatMap((c) => c.observations.map((o) => ({ check: c.id, key: o.key, value: o.value, ...(o.note === undefined ? {} : { note: o.note }) })));
}

/** Copies `keys` of `src` in that order, leaving out undefined values. */
function pick<T extends object, K extends keyof T>(src: T, keys: readonly K[]): Pick<T, K> {
  const out: Partial<Pick<T, K>> = {};
  for (const k of keys) if (src[k] !== undefined) out[k] = src[k];
  return out as Pick<T, K>;
}

function canonicalRunInfo(info: RunInfo): RunInfo {
  return {
    ...pick(info, ['runId', 'toolVersion', 'specSha256']),
    target: pick(info.target, ['baseUrl', 'embedded', 'openapiSha256', 'capabilitySha256']),
    ...pick(info, ['profile', 'config']),
    deviations: [...info.deviations],
    ...pick(info, ['startedAt', 'endedAt', 'interrupted', 'exitCode', 'setupError', 'pacing', 'budget']),
  };
}

function canonicalCheck(c: CheckResult): CheckResult {
  return {
    ...pick(c, ['id', 'title', 'area']),
    requirements: [...c.requirements],
    ...pick(c, ['level', 'outcome', 'message', 'expected', 'actual']),
    findings: c.findings.map((f) => pick(f, ['message', 'requirement', 'expected', 'actual', 'exchange'])),
    observations: c.observations.map((o) => pick(o, ['key', 'value', 'note'])),
    evidence: c.evidence.map(canonicalExchange),
    ...pick(c, ['curl', 'startedAt', 'durationMs', 'stats']),
  } as CheckResult;
}

function canonicalExchange(x: Exchange): Exchange {
  return {
    ...pick(x, ['id', 'startedAt', 'durationMs', 'client']),
    request: pick(x.request, ['method', 'url', 'headers', 'body', 'bodyTruncated']),
    ...(x.response ? { response: pick(x.response, ['status', 'headers', 'body', 'bodyBytes', 'bodyTruncated']) } : {}),
    ...pick(x, ['error', 'curl']),
  } as Exchange;
}

function canonicalVerdict(v: RequirementVerdict): RequirementVerdict {
  return pick(v, ['id', 'level', 'text', 'section', 'testable', 'reason', 'checks', 'outcome']);
}

function canonicalLedgerEntry(e: LedgerEntry): LedgerEntry {
  return pick(e, ['resourceType', 'id', 'url', 'createdBy', 'at']);
}
