/**
 * Runs the conformance suites programmatically with vitest and returns the
 * exit code (0 pass, 1 fail, 3 errors only). Used by the CLI and by tests.
 */
import { resolve } from 'node:path';
import { createVitest, type Vitest } from 'vitest/node';
import { buildRunResult } from '../engine/result.js';
import { writeReports } from '../report/index.js';
import { PROJECT_ROOT } from '../paths.js';
import { ConformanceError, describeError } from '../errors.js';
import { resolveLimits, resolveModes } from '../reference/types.js';
import { resolveFaults } from '../reference/faults/index.js';
import { ConformanceReporter } from './reporter.js';
import { ConformanceSequencer } from './sequencer.js';
import { newRunState } from './global-setup.js';
import { getRunState, setRunState, type RunOptions, type RunState } from './handoff.js';

export interface RunOutcome {
  exitCode: number;
  state: RunState;
}

export async function runConformance(options: RunOptions, out: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<RunOutcome> {
  checkReferenceOptions(options);
  const state = newRunState(options);
  setRunState(state);
  const reporter = new ConformanceReporter(options.progress === false ? () => {} : out);
  const savedExitCode = process.exitCode;
  let vitest: Vitest | undefined;
  let hardStop: NodeJS.Timeout | undefined;

  // Ctrl-C / SIGTERM: cancel, and if the run does not wind down within the
  // grace period, write a partial report marked as interrupted and exit.
  const onSignal = (signal: NodeJS.Signals) => {
    if (state.interrupted) return;
    state.interrupted = true;
    out(`${signal}: stopping; a partial report is written`);
    void vitest?.cancelCurrentRun('keyboard-input');
    hardStop = setTimeout(() => {
      void writePartialReport(state).finally(() => process.exit(state.exitCode ?? 3));
    }, INTERRUPT_GRACE_MS);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const before = { SIGINT: process.listeners('SIGINT'), SIGTERM: process.listeners('SIGTERM') };
    vitest = await createVitest('test', vitestOptions(options, reporter), { logLevel: 'silent', clearScreen: false });
    // vitest's logger exits the process on a signal; the run's own handler writes the partial report instead.
    for (const sig of ['SIGINT', 'SIGTERM'] as const)
      for (const l of process.listeners(sig)) if (!before[sig].includes(l)) process.removeListener(sig, l as () => void);
    await vitest.start();
    await vitest.close();
  } catch (e) {
    state.setupError ??= describeError(e);
  } finally {
    clearTimeout(hardStop);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    process.exitCode = savedExitCode;
  }
  const final = getRunState() ?? state;
  if (!final.reportDir && options.writeReports !== false) await writePartialReport(final);
  return { exitCode: final.exitCode ?? (final.setupError ? 3 : 0), state: final };
}

const INTERRUPT_GRACE_MS = 1500;

function vitestOptions(options: RunOptions, reporter: ConformanceReporter) {
  return {
    config: false as const,
    root: PROJECT_ROOT,
    dir: resolve(PROJECT_ROOT, 'suites'),
    include: ['**/*.suite.ts'],
    globalSetup: [resolve(PROJECT_ROOT, 'src/vitest/global-setup.ts')],
    reporters: [reporter],
    sequence: { sequencer: ConformanceSequencer as never, shuffle: false },
    pool: 'threads' as const,
    isolate: false,
    fileParallelism: false,
    maxWorkers: 1,
    testNamePattern: options.only,
    watch: false,
    passWithNoTests: true,
    testTimeout: 600_000,
    hookTimeout: 120_000,
    teardownTimeout: 10_000,
  };
}

/** Writes the report from whatever results exist (interrupts, runs that never reached the reporter). */
async function writePartialReport(state: RunState): Promise<void> {
  if (state.reportDir) return;
  const result = buildRunResult(state);
  state.exitCode = result.info.exitCode;
  const { dir } = await writeReports(result, { reportsRoot: state.options.reportsRoot ?? 'reports', runDirName: state.runId, redactPhi: state.options.redactPhi });
  state.reportDir = dir;
}

/** Bad --fault/--mode/--limit values are usage errors, found before anything starts. */
function checkReferenceOptions(options: RunOptions): void {
  try {
    resolveModes(options.reference?.modes);
    resolveLimits(options.reference?.limits);
    resolveFaults(options.reference?.faults ?? []);
  } catch (e) {
    throw new ConformanceError('ERR_USAGE', describeError(e));
  }
}
