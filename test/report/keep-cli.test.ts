import { describe, expect, test } from 'vitest';
import { readdirSync, readlinkSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RUN_DIR_NAME } from '../../src/report/index.js';
import { runCli, tempDir } from '../cli/cli.js';

describe('run --keep N', () => {
  test('keeps the N newest run directories, leaves other directories alone, latest on the newest', async () => {
    const dir = await tempDir('keep');
    await mkdir(join(dir, 'archive'));
    await writeFile(join(dir, 'archive', 'report.json'), '{}');
    const args = ['run', '--profile', 'quick', '--only', '^headers\\.', '--report-dir', dir, '--quiet', '--keep', '2'];
    for (let i = 0; i < 3; i++) {
      const run = await runCli(args, { timeoutMs: 90_000 });
      expect(run.code, run.stderr.slice(-1500)).toBe(0);
    }
    const runs = readdirSync(dir)
      .filter((n) => RUN_DIR_NAME.test(n))
      .sort();
    expect(runs).toHaveLength(2);
    expect(readlinkSync(join(dir, 'latest'))).toBe(runs[1]);
    expect(readdirSync(dir).sort()).toEqual(['archive', 'latest', ...runs].sort());
  }, 300_000);

  test('a --keep that is not a whole number is a usage error', async () => {
    const run = await runCli(['run', '--keep', 'ten'], { timeoutMs: 30_000 });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--keep takes a whole number');
  });
});
