/** The suites' in-process runner (full profile). */
export { runInProcess as runChecks, describeResults, type InProcessOptions as TargetOptions } from '../../src/run/in-process.js';
