import { afterAll, describe, expect, test } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { writeReports } from '../../src/report/index.js';
import { syntheticRun } from './synthetic-run.js';

const CHROMIUM = '/usr/bin/chromium';
const run = promisify(execFile);
const work = await mkdtemp(join(tmpdir(), 'report-chromium-'));
afterAll(() => rm(work, { recursive: true, force: true }));

function chromiumArgs(extra: string[], url: string): string[] {
  return [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    `--user-data-dir=${join(work, 'profile')}`, '--window-size=1400,1800', ...extra, url,
  ];
}

describe.skipIf(!existsSync(CHROMIUM))(`report.html in headless Chromium (skipped: no ${CHROMIUM})`, () => {
  test('renders the check list with its script, expands failures, takes a non-trivial screenshot', { timeout: 90_000 }, async () => {
    const result = syntheticRun(200);
    const { files } = await writeReports(result, { reportsRoot: join(work, 'reports') });
    const url = pathToFileURL(files.html).href;

    const png = join(work, 'shot.png');
    await run(CHROMIUM, chromiumArgs([`--screenshot=${png}`], url), { timeout: 60_000 });
    expect(existsSync(png)).toBe(true);
    expect(statSync(png).size).toBeGreaterThan(20_000);
    expect(readFileSync(png).subarray(1, 4).toString()).toBe('PNG');

    const { stdout: dom } = await run(CHROMIUM, chromiumArgs(['--dump-dom'], url), { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
    expect(dom).toContain('data-ready="true"');
    expect(dom.match(/<div class="check o-(pass|fail|error|skip|observation)"/g)).toHaveLength(200);
    expect(dom).toContain('Showing 200 of 200 checks');
    const problems = result.checks.filter((c) => c.outcome === 'fail' || c.outcome === 'error').length;
    expect(dom.match(/<div class="check-body">/g)).toHaveLength(problems);
    expect(dom).toContain('expected 404 with HPB-00102, got 500 x&lt;/script&gt;&lt;script&gt;alert(1)');
    expect(dom).not.toContain('<script>alert(1)');
  });
});
