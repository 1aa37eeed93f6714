/** The suites' in-process runner (full profile). */
export { runInProcess as runChecks, describeResults, type InProcessOptions as TargetOptions } from '../../src/engine/in-process.js';
