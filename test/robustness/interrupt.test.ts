/**
 * Interrupts: SIGINT and SIGTERM sent to the CLI's own node process (no
 * wrapper) end a run within 2 s and leave a partial report marked interrupted.
 */
import { describe, expect, test } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPORT_FILES, readLatestReport, runCli, tempDir } from '../cli/cli.js';

/** The run is under way once progress names its first area. */
const CHECKS_RUNNING = /^▸ /m;

describe('interrupts', () => {
  test.each(['SIGINT', 'SIGTERM'] as const)(
    '%s ends the run within 2 s with a partial report',
    async (signal) => {
      const dir = await tempDir('interrupt');
      let signalledAt = 0;
      const run = await runCli(['run', '--profile', 'quick', '--report-dir', dir], {
        timeoutMs: 60_000,
        onSpawn: (child) => {
          let seen = '';
          child.stderr!.on('data', (s: string) => {
            seen += s;
            if (!signalledAt && CHECKS_RUNNING.test(seen)) {
              signalledAt = Date.now();
              child.kill(signal);
            }
          });
        },
      });
      const exitedAt = Date.now();
      expect(signalledAt, run.stderr).toBeGreaterThan(0);
      expect(run.timedOut).toBe(false);
      expect(exitedAt - signalledAt).toBeLessThanOrEqual(2000);
      expect([1, 3]).toContain(run.code);
      expect(run.stderr).toContain(`${signal}: stopping; a partial report is written`);

      for (const f of REPORT_FILES) expect(existsSync(join(dir, 'latest', f)), f).toBe(true);
      const report = await readLatestReport(dir);
      expect(report.run.interrupted).toBe(true);
      expect(report.run.exitCode).toBe(run.code);
      // Partial: the checks that finished are there, and not the whole suite.
      expect(report.checks.length).toBeGreaterThan(0);
      expect(report.checks.length).toBeLessThan(300);
    },
    90_000,
  );
});
