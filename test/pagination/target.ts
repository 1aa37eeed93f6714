/** The suites' in-process runner, with the quick profile these tests were written for. */
import { runInProcess, type InProcessOptions } from '../../src/run/in-process.js';
import type { ChecksExport } from '../../src/engine/catalog.js';

export { describeResults } from '../../src/run/in-process.js';
export const runChecks = (checks: ChecksExport, opts: InProcessOptions = {}) => runInProcess(checks, { profile: 'quick', ...opts });
