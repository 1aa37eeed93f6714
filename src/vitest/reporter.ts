/**
 * The vitest reporter of a conformance run: collects each check's result from
 * the test's meta, shows live progress on stderr, and writes the reports at
 * the end. It only consumes results.
 */
import type { Reporter, TestCase, TestModule } from 'vitest/node';
import type { SerializedError, UserConsoleLog } from 'vitest';
import { writeReports } from '../report/index.js';
import { buildRunResult } from '../engine/result.js';
import { OUTCOMES, type CheckResult, type Outcome } from '../engine/types.js';
import { redactString } from '../redact.js';
import { getRunState } from './handoff.js';
import { WAIT_MARKER } from './progress.js';
import { pacingFigures, renderPacing, type PacingFigures, type RunStats } from '../engine/schedule.js';

export class ConformanceReporter implements Reporter {
  private counts: Record<Outcome, number> = { pass: 0, fail: 0, skip: 0, error: 0, observation: 0 };
  private area = '';

  constructor(private readonly out: (line: string) => void = (l) => process.stderr.write(`${l}\n`)) {}

  onUserConsoleLog(log: UserConsoleLog): void {
    // Only the engine's wait notices travel this way; checks never print.
    if (log.content.startsWith(WAIT_MARKER)) this.out(`  … ${redactString(log.content.slice(WAIT_MARKER.length).trim())}`);
  }

  onTestCaseResult(tc: TestCase): void {
    const state = getRunState();
    const stats = tc.meta().runStats;
    if (state && stats) state.runStats = stats;
    const result = resultOf(tc);
    if (!result || !state) return;
    state.results.push(result);
    this.counts[result.outcome]++;
    if (state.options.progress === false) return;
    if (result.area !== this.area) {
      this.area = result.area;
      this.out(`▸ ${result.area}`);
    }
    if (result.outcome === 'fail' || result.outcome === 'error') {
      this.out(`  ${result.outcome.toUpperCase()} ${result.id}: ${redactString(result.message ?? '')}`.slice(0, 300));
    }
  }

  async onTestRunEnd(modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<SerializedError>): Promise<void> {
    const state = getRunState();
    if (!state) return;
    // A suite file that failed to load is an error of ours, reported as such.
    for (const m of modules) {
      const e = m.errors();
      if (e.length) state.results.push(moduleError(m.moduleId, e.map((x) => x.message).join('; ')));
    }
    if (errors.length && !state.setupError) state.setupError = errors.map((e) => e.message).join('; ').slice(0, 500);
    if (state.spec?.profile === 'certification' && state.runStats) state.pacing = certificationPacing(state.runStats, state.startedAt, state.results);
    const result = buildRunResult(state);
    state.exitCode = result.info.exitCode;
    if (state.options.writeReports !== false) {
      const { dir } = await writeReports(result, {
        reportsRoot: state.options.reportsRoot ?? 'reports',
        runDirName: state.runId,
        redactPhi: state.options.redactPhi,
      });
      state.reportDir = dir;
    }
    if (state.options.progress !== false) {
      const line = OUTCOMES.map((o) => `${o} ${this.counts[o]}`).join(' · ');
      this.out(`\n${result.checks.length} checks: ${line}`);
      if (state.pacing) this.out(renderPacing(state.pacing));
      if (state.setupError) this.out(`setup: ${redactString(state.setupError)}`);
      if (state.reportDir) this.out(`reports: ${state.reportDir}`);
    }
  }
}

/** Wall time from the run's start against its lower bound; the waits required by the exhaustion checks that ran. */
function certificationPacing(stats: RunStats, startedAt: string, results: CheckResult[]): PacingFigures {
  const ran = (id: string) => results.some((r) => r.id === id && r.outcome !== 'skip');
  return pacingFigures(stats, Date.now() - Date.parse(startedAt), {
    sliding: ran('rate-limit.capacity-returns-as-requests-leave-window'),
    excess: ran('rate-limit.excess-gives-429'),
    issuance: ran('issuance-limit.window-recovers'),
  });
}

function resultOf(tc: TestCase): CheckResult | undefined {
  const meta = tc.meta();
  if (meta.conformance) return meta.conformance;
  const r = tc.result();
  if (r.state === 'skipped' || r.state === 'pending') return undefined; // not selected (--only)
  // The test died before the engine produced a result: an error of ours or a timeout.
  const id = meta.checkId ?? tc.name.split(' — ')[0] ?? tc.name;
  return {
    id,
    title: tc.name.split(' — ')[1] ?? tc.name,
    area: id.split('.')[0] ?? 'unknown',
    requirements: [],
    level: 'MUST',
    outcome: 'error',
    message: r.errors?.map((e) => e.message).join('; ').slice(0, 300) || 'the check ended without a result',
    findings: [],
    observations: [],
    evidence: [],
    startedAt: new Date().toISOString(),
    durationMs: Math.round(tc.diagnostic()?.duration ?? 0),
  };
}

function moduleError(moduleId: string, message: string): CheckResult {
  const area = moduleId.split('/suites/')[1]?.split('/')[0] ?? 'suite';
  return {
    id: `${area}.suite-load`,
    title: `suite file ${moduleId.split('/suites/')[1] ?? moduleId} loads`,
    area,
    requirements: [],
    level: 'MUST',
    outcome: 'error',
    message: message.slice(0, 300),
    findings: [],
    observations: [],
    evidence: [],
    startedAt: new Date().toISOString(),
    durationMs: 0,
  };
}
