/**
 * Measures the requests each check sends and writes the estimates the engine plans with
 * (suites/request-budget.json, read by src/engine/budget.ts): one `full` run against the
 * embedded reference, at the spec's per-key ceiling and issuance limit with short windows
 * and a one-minute token lifetime, so token re-issues are about as rare as at the spec's
 * five minutes and the run takes about two minutes. A check's estimate is the requests it
 * needs (token requests included), whether it sent them or another check's exchange answered
 * them, plus those of the episodes it started: a check alone in a run (the gate) sends them all.
 * Run: npm run budget   (or: node --import tsx scripts/request-budget.ts --out FILE)
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { BUDGET_ESTIMATES_PATH } from '../src/engine/budget.js';
import { runConformance } from '../src/run/index.js';
import type { ReferenceLimits } from '../src/reference/types.js';

const { values } = parseArgs({ options: { out: { type: 'string' } } });
const limits: Partial<ReferenceLimits> = {
  perKeyPerWindow: 60,
  perOrgPerWindow: 600,
  windowMs: 5000,
  tokenWindowMs: 5000,
  tokenIssuancePerWindow: 20,
  tokenLifetimeSec: 60,
};

const t0 = performance.now();
const run = await runConformance({ profile: 'full', progress: false, writeReports: false, reference: { limits } });
const budget = run.result.info.budget;
if (!budget) throw new Error(`the run kept no request budget (exit ${run.exitCode}; ${run.setupError ?? 'no setup error'})`);
const checks: Record<string, [number, number, number]> = {};
for (const r of [...run.results].sort((a, b) => a.id.localeCompare(b.id))) {
  const episode = budget.episodes?.[r.id];
  // What the check needs, whether sent or answered from another check's exchange: it plans them either way.
  checks[r.id] = [
    (r.stats?.requests ?? 0) + (r.stats?.shared ?? 0) + (episode?.requests ?? 0),
    (r.stats?.tokenRequests ?? 0) + (episode?.tokenRequests ?? 0),
    (r.stats?.mainKeyRequests ?? 0) + (r.stats?.sharedMainKey ?? 0) + (episode?.mainKeyRequests ?? 0),
  ];
}
const doc = {
  description:
    'Requests each check sent against the embedded reference ([requests, of which token requests, of which with the main client key]); the engine plans with them when a check declares no `requests`. Written by `npm run budget`.',
  limits,
  exitCode: run.exitCode,
  checks,
};
const out = values.out ?? BUDGET_ESTIMATES_PATH;
writeFileSync(out, `${JSON.stringify(doc, null, 1).replace(/\[\n\s+(\d+),\n\s+(\d+),\n\s+(\d+)\n\s+\]/g, '[$1, $2, $3]')}\n`);
console.log(
  `${Object.keys(checks).length} checks, ${budget.requests} requests (exit ${run.exitCode}) in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${out}`,
);
