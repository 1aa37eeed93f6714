import { defineConfig } from 'vitest/config';

// Project tests (test/). The conformance suites under suites/ are not vitest files:
// the product's own executor runs them (src/run/index.ts -> src/engine/executor.ts).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Both cores (the default leaves one idle on a 2-core machine).
    maxWorkers: 2,
    // Mutation runs spawn CLI processes: two at a time, one per core.
    maxConcurrency: 2,
  },
});
