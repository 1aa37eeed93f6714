/**
 * Runs the conformance suites programmatically with vitest and returns the
 * exit code (0 pass, 1 fail, 3 errors only). Used by the CLI and by tests.
 */
import { resolve } from 'node:path';
import { startVitest } from 'vitest/node';
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

export async function runConformance(options: RunOptions, out?: (line: string) => void): Promise<RunOutcome> {
  checkReferenceOptions(options);
  const state = newRunState(options);
  setRunState(state);
  const reporter = new ConformanceReporter(out);
  const onSignal = () => {
    state.interrupted = true;
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const savedExitCode = process.exitCode;
  try {
    const vitest = await startVitest(
      'test',
      [],
      {
        config: false,
        root: PROJECT_ROOT,
        dir: resolve(PROJECT_ROOT, 'suites'),
        include: ['**/*.suite.ts'],
        globalSetup: [resolve(PROJECT_ROOT, 'src/vitest/global-setup.ts')],
        reporters: [reporter],
        sequence: { sequencer: ConformanceSequencer as never, shuffle: false },
        pool: 'threads',
        isolate: false,
        fileParallelism: false,
        maxWorkers: 1,
        testNamePattern: options.only,
        watch: false,
        passWithNoTests: true,
        testTimeout: 600_000,
        hookTimeout: 120_000,
        teardownTimeout: 10_000,
      },
      { logLevel: 'silent', clearScreen: false },
    );
    await vitest.close();
  } catch (e) {
    state.setupError ??= describeError(e);
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    process.exitCode = savedExitCode;
  }
  const final = getRunState() ?? state;
  return { exitCode: final.exitCode ?? (final.setupError ? 3 : 0), state: final };
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
