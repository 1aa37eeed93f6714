import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The longest files, longest first (seconds: the last fresh-clone `CI=true npm test` on the 2-core
 * machine measured mutation 440, shards 366 and 282, episodes 227, cli 139, traceable-writes 100;
 * since then, each alone on the shared machine: mutation 197 (232 s CPU, in-process modes), the
 * shards together 116 and 143 (158 s CPU), episodes 164 (16 s CPU: mostly waiting, so it goes early,
 * beside the CPU-bound files). Two workers run files in the order the sequencer gives; without a
 * results cache (CI's fresh `npm ci`) vitest orders by file size, which put the 3-line mutation
 * shards last. The rest keep vitest's order.
 */
const LONGEST_FIRST = [
  'test/mutation/mutation.test.ts',
  'test/scheduler/episodes.test.ts',
  'test/mutation/faults-2.test.ts',
  'test/mutation/faults-1.test.ts',
  'test/cli/cli.test.ts',
  'test/robustness/traceable-writes.test.ts',
];
const renamed = LONGEST_FIRST.filter((f) => !existsSync(new URL(f, import.meta.url)));
if (renamed.length) throw new Error(`vitest.config.ts LONGEST_FIRST names missing files: ${renamed.join(', ')}`);

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = LONGEST_FIRST.indexOf(relative(f.project.config.root, f.moduleId).replaceAll('\\', '/'));
      return i === -1 ? LONGEST_FIRST.length : i;
    };
    // Array sort is stable: the others stay in vitest's order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

// Project tests (test/). The conformance suites under suites/ are not vitest files:
// the product's own executor runs them (src/run/index.ts -> src/engine/executor.ts).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Files share a worker's module graph (src/, the FHIR validators, undici, jose load once per
    // worker, not once per file): measured on the 2-core machine, 2026-11-29, the whole run 494 s
    // against 563-602 s isolated (import 26 s against 94 s summed over files). Nothing under test/
    // needs a fresh module instance: no vi.mock; the environment variables and fake timers a file
    // sets are restored in its afterEach.
    isolate: false,
    // Four workers on two cores: the files that mostly wait (episodes: about 220 s wall, 16 s of CPU;
    // traceable-writes; the mutation modes' full-profile CLI runs) hold a worker without holding a
    // core. With three, the machine sat 2-60 % busy for about 150 s of a 606 s run (all three workers
    // on waiting files) and then ran the small files alone at the end; with four (measured alone,
    // 2026-11-29): 563 s, 181 % CPU against 159 %.
    maxWorkers: 4,
    // it.concurrent tests at a time per file (the mutation modes and the episodes' fault runs have their own pools).
    maxConcurrency: 2,
    sequence: { sequencer: LongestFirst },
  },
});
