/**
 * The CLI end to end, as a user runs it (child processes of bin/fhir-conformance.js):
 * exit codes 0/1/2/3, report re-rendering, diff, requirements, faults, serve.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { FAULTS } from '../../src/reference/faults/index.js';
import { CLI, readLatestReport, runCli, tempDir, writeTargetConfig, type CliRun } from './cli.js';
import { refusedUrl } from '../robustness/hostile.js';

const FAULT = 'no-correlation-id';

describe('fhir-conformance CLI', () => {
  let cleanDir: string;
  let clean: CliRun;
  let faultyDir: string;
  let faulty: CliRun;
  let work: string;
  beforeAll(async () => {
    [cleanDir, faultyDir, work] = await Promise.all([tempDir('cli-clean'), tempDir('cli-faulty'), tempDir('cli-work')]);
    const violates = FAULTS.find((f) => f.name === FAULT)!.violates;
    [clean, faulty] = await Promise.all([
      runCli(['run', '--profile', 'quick', '--report-dir', cleanDir], { timeoutMs: 150_000 }),
      runCli(['run', '--profile', 'quick', '--fault', FAULT, '--requirements', violates.join(','), '--report-dir', faultyDir, '--quiet'], { timeoutMs: 150_000 }),
    ]);
  }, 180_000);

  describe('exit codes', () => {
    test('0: a clean quick run against the embedded reference', async () => {
      expect(clean.code, clean.stderr.slice(-2000)).toBe(0);
      const report = await readLatestReport(cleanDir);
      expect(report.run.exitCode).toBe(0);
      expect(report.summary.byOutcome.pass).toBeGreaterThan(100);
      expect(report.summary.byOutcome.fail + report.summary.byOutcome.error).toBe(0);
      expect(clean.stderr).toMatch(/\d+ checks: pass \d+/);
    });

    test(`1: a run against the reference with --fault ${FAULT}`, async () => {
      expect(faulty.code, faulty.stderr.slice(-2000)).toBe(1);
      const report = await readLatestReport(faultyDir);
      expect(report.checks.some((c) => c.outcome === 'fail')).toBe(true);
    });

    test('2: a bad config, naming the field and the fix', async () => {
      const config = await writeTargetConfig(work, { baseUrl: 'http://127.0.0.1:9', requestMs: 1000, runMs: 5000 });
      const doc = JSON.parse(await readFile(config, 'utf8')) as { clients: Array<Record<string, unknown>> };
      doc.clients[1]!.alg = 'HS256';
      await writeFile(config, JSON.stringify(doc));
      const run = await runCli(['run', '--config', config, '--report-dir', work], { timeoutMs: 30_000 });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('clients[1].alg');
      expect(run.stderr).toMatch(/fix: .*RS384.*ES384|fix: .*ES384.*RS384/);
    });

    test('2: an unknown flag', async () => {
      const run = await runCli(['run', '--no-such-flag'], { timeoutMs: 30_000 });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/no-such-flag/);
    });

    test('3: an unreachable target', async () => {
      const dir = await tempDir('cli-unreachable');
      const config = await writeTargetConfig(dir, { baseUrl: await refusedUrl(), requestMs: 1000, runMs: 10_000 });
      const run = await runCli(['run', '--config', config, '--profile', 'quick', '--only', '^discovery\\.', '--report-dir', dir, '--quiet'], { timeoutMs: 60_000 });
      expect(run.code).toBe(3);
      const report = await readLatestReport(dir);
      expect(report.checks.every((c) => c.outcome === 'error' && /connection refused/.test(c.message ?? ''))).toBe(true);
    }, 70_000);
  });

  test('report re-renders report.json as html, junit and md', async () => {
    const json = join(cleanDir, 'latest', 'report.json');
    const { runId } = (await readLatestReport(cleanDir)).run;
    const html = await runCli(['report', json, '--format', 'html', '--out', join(work, 'r.html')], { timeoutMs: 30_000 });
    const junit = await runCli(['report', json, '--format', 'junit'], { timeoutMs: 30_000 });
    const md = await runCli(['report', json, '--format', 'md'], { timeoutMs: 30_000 });
    for (const r of [html, junit, md]) expect(r.code, r.stderr).toBe(0);
    const page = await readFile(join(work, 'r.html'), 'utf8');
    expect(page).toMatch(/^<!DOCTYPE html>/i);
    expect(page).toContain(runId);
    const xml = new XMLParser({ ignoreAttributes: false }).parse(junit.stdout) as { testsuites?: unknown };
    expect(xml.testsuites).toBeDefined();
    expect(junit.stdout).toContain('<testcase');
    // The same summary as the run wrote, but for where the full report lives.
    const withoutLink = (text: string) => text.replace(/^Full report: .*$/m, '');
    expect(withoutLink(md.stdout)).toBe(withoutLink(await readFile(join(cleanDir, 'latest', 'summary.md'), 'utf8')));
    const bad = await runCli(['report', json, '--format', 'pdf'], { timeoutMs: 30_000 });
    expect(bad.code).toBe(2);
  }, 60_000);

  test('diff lists the regression of a faulty run (exit 1) and none against itself (exit 0)', async () => {
    const before = join(cleanDir, 'latest', 'report.json');
    const after = join(faultyDir, 'latest', 'report.json');
    const regressed = (await readLatestReport(faultyDir)).checks.filter((c) => c.outcome === 'fail').map((c) => c.id);
    const d = await runCli(['diff', before, after], { timeoutMs: 30_000 });
    expect(d.code).toBe(1);
    for (const id of regressed) expect(d.stdout).toContain(id);
    const same = await runCli(['diff', before, before], { timeoutMs: 30_000 });
    expect(same.code).toBe(0);
    for (const id of regressed) expect(same.stdout).not.toContain(id);
  }, 60_000);

  test('requirements prints the coverage matrix', async () => {
    const r = await runCli(['requirements'], { timeoutMs: 30_000 });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Requirement coverage: \d+ requirements, \d+ testable, \d+ covered, 0 uncovered/);
    for (const area of ['discovery', 'auth', 'pagination', 'tenancy']) expect(r.stdout).toMatch(new RegExp(`^${area}\\s+\\d+`, 'm'));
  });

  test('faults lists the catalog', async () => {
    const r = await runCli(['faults'], { timeoutMs: 30_000 });
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith(`${FAULTS.length} faults`)).toBe(true);
    for (const f of FAULTS) expect(r.stdout).toContain(f.name);
    const json = await runCli(['faults', '--json'], { timeoutMs: 30_000 });
    expect((JSON.parse(json.stdout) as unknown[]).length).toBe(FAULTS.length);
  });

  describe('serve', () => {
    let serve: ReturnType<typeof spawn> | undefined;
    afterAll(() => {
      if (serve?.exitCode === null) serve.kill('SIGKILL');
    });

    test('prints a target config that run --config accepts', async () => {
      serve = spawn(process.execPath, [CLI, 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      serve.stdout!.setEncoding('utf8');
      await new Promise<void>((ready, fail) => {
        const timer = setTimeout(() => fail(new Error(`serve printed no config: ${out}`)), 30_000);
        serve!.stdout!.on('data', (s: string) => {
          out += s;
          if (/\nTry:\n/.test(out)) {
            clearTimeout(timer);
            ready();
          }
        });
      });
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
      expect(url).toBeDefined();
      const printed = out.slice(out.indexOf('{'), out.lastIndexOf('}') + 1);
      const config = { ...(JSON.parse(printed) as object), timeouts: { requestMs: 5000, runMs: 60_000 } };
      expect(config).toMatchObject({ baseUrl: url });
      const dir = await tempDir('cli-serve');
      const path = join(dir, 'target.json');
      await writeFile(path, JSON.stringify(config));
      const run = await runCli(['run', '--config', path, '--profile', 'quick', '--only', '^(discovery|tenancy)\\.', '--report-dir', dir, '--quiet'], { timeoutMs: 90_000 });
      expect(run.code, run.stderr.slice(-1500)).toBe(0);
      expect((await readLatestReport(dir)).summary.byOutcome.pass).toBeGreaterThan(5);

      serve.kill('SIGTERM');
      const [code] = (await once(serve, 'exit')) as [number | null];
      expect(code).toBe(0);
    }, 120_000);
  });
});
