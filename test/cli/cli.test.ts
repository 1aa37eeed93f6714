/**
 * The CLI end to end, as a user runs it (child processes of bin/fhir-conformance.js):
 * exact exit codes and messages for each case (0/1/2/3), the verdict line that
 * follows the exit code, help and version, report re-rendering, diff, requirements,
 * faults, serve.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { TOOL_VERSION } from '../../src/version.js';
import { XMLParser } from 'fast-xml-parser';
import { FAULTS } from '../../src/reference/faults/index.js';
import { CLI, readLatestReport, runCli, tempDir, writeTargetConfig, type CliRun } from './cli.js';
import { refusedUrl } from '../robustness/hostile.js';
import { SIGNING_ALGS } from '../../src/auth/algorithms.js';

const FAULT = 'no-correlation-id';
/** Nothing internal reaches a user: no error class names, no stack frames. */
const INTERNAL = /TypeError|ReferenceError|ConformanceError|CommanderError|^\s+at /m;

/** The last line of stderr: the verdict. */
const lastLine = (text: string) => text.trimEnd().split('\n').at(-1);

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
      runCli(['run', '--profile', 'quick', '--fault', FAULT, '--requirements', violates.join(','), '--report-dir', faultyDir, '--quiet'], {
        timeoutMs: 150_000,
      }),
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
      // Plain progress (not a terminal): area lines with the checks done so far.
      expect(clean.stderr).toMatch(/^▸ discovery {2}\(\d+\/\d+ checks done · pass \d+ · fail 0 · error 0 · skip \d+/m);
      expect(lastLine(clean.stderr)).toMatch(/^✅ Conformant for this run: \d+ passed, \d+ skipped, \d+ observations of \d+ checks \(exit 0\)$/);
      expect(await readFile(join(cleanDir, 'latest', 'summary.md'), 'utf8')).toMatch(/^## ✅ FHIR conformance: .* · exit 0\n/);
      // A quick run reaches its reference in-process (README "Speed"), and its report says so.
      expect((report.run.config as { transport?: string }).transport).toBe('in-process');
    });

    test('the quick run report.json and report.html each stay under 3 KB per request of the run (evidence stored once, passing bodies cut)', async () => {
      // About 2 KB a request (1.57 MB for 780 requests at 7275f0c): an exchange serialized per citing check would double it.
      const report = await readLatestReport(cleanDir);
      for (const file of ['report.json', 'report.html']) {
        const bytes = (await stat(join(cleanDir, 'latest', file))).size;
        expect(bytes, `${file}: ${bytes} bytes for ${report.run.budget!.requests} requests`).toBeLessThan(3_000 * report.run.budget!.requests);
      }
      // With the run timeline in both: every request of the run on it, the chart library in the page.
      expect(report.timeline!.requests.sent.length).toBe(report.run.budget!.requests - report.run.budget!.setup);
      expect(await readFile(join(cleanDir, 'latest', 'report.html'), 'utf8')).toMatch(/<script type="application\/json" id="timeline-data">\{"version":1,/);
    });

    test(`1: a run against the reference with --fault ${FAULT}`, async () => {
      expect(faulty.code, faulty.stderr.slice(-2000)).toBe(1);
      const report = await readLatestReport(faultyDir);
      const failed = report.checks.filter((c) => c.outcome === 'fail').length;
      expect(failed).toBeGreaterThan(0);
      // --quiet: no progress, only where the reports are and the verdict.
      expect(faulty.stderr).toBe(
        `reports: ${join(faultyDir, report.run.runId)}\n❌ Not conformant: ${failed} of ${report.checks.length} checks failed (exit 1)\n`,
      );
      expect(await readFile(join(faultyDir, 'latest', 'summary.md'), 'utf8')).toMatch(/^## ❌ FHIR conformance: .* · exit 1\n/);
      // A planted fault goes over HTTP, as the fault catalog's proofs do.
      expect((report.run.config as { transport?: string }).transport).toBeUndefined();
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

    // Usage errors: exit 2, the message and what to do, nothing run and no report written.
    const usage: Array<{ name: string; args: string[]; stderr: string | RegExp }> = [
      {
        name: 'an unknown flag, with a suggestion',
        args: ['run', '--profle', 'quick'],
        stderr: "error: unknown option '--profle'\n(Did you mean --profile?)\n(add --help for usage and examples)\n",
      },
      {
        name: 'an unknown command, with a suggestion',
        args: ['rnu'],
        stderr: "error: unknown command 'rnu'\n(Did you mean run?)\n(add --help for usage and examples)\n",
      },
      {
        name: 'a profile that does not exist',
        args: ['run', '--profile', 'quik'],
        stderr:
          "error: option '-p, --profile <profile>' argument 'quik' is invalid. Allowed choices are quick, full, certification, read-only, gate.\n(add --help for usage and examples)\n",
      },
      {
        name: 'an invalid --only pattern',
        args: ['run', '--only', '(['],
        stderr:
          'error: --only is not a valid regular expression: Invalid regular expression: /([/: Unterminated character class\n  field: only\n  fix: pass a JavaScript regular expression over check ids and titles, e.g. --only "^pagination\\."\n',
      },
      {
        name: 'an --only filter that matches nothing, with the nearest check id',
        args: ['run', '--profile', 'quick', '--only', '^discovry\\.metadata'],
        stderr:
          /^error: nothing to run: --only "\^discovry\\\.metadata" matches no check id or title \(did you mean "discovery\.metadata-without-auth"\?\)\n {2}field: only\n {2}fix: /,
      },
      {
        name: 'a filter whose checks the profile leaves out (it would judge nothing and look green)',
        args: ['run', '--profile', 'quick', '--only', '^token-lifetime\\.'],
        stderr:
          /^error: nothing to run: the \d+ selected checks are not run by the quick profile \(the quick profile skips checks that wait out a token lifetime or a rate window\): token-lifetime\.[\s\S]*\n {2}field: profile\n {2}fix: --profile full runs every check/,
      },
      {
        name: 'a known requirement id that no check verifies',
        args: ['run', '--profile', 'quick', '--requirements', 'audit.retention-7-years'],
        stderr: /^error: nothing to run: requirement audit\.retention-7-years has no check/,
      },
      {
        name: 'an unknown requirement id, with the nearest one',
        args: ['run', '--profile', 'quick', '--requirements', 'auth.client-credential'],
        stderr:
          'error: unknown requirement id: "auth.client-credential" (did you mean "auth.client-credentials"?)\n  field: requirements\n  fix: use ids from suites/requirements.json (list them with `fhir-conformance requirements`)\n',
      },
      {
        name: '--fault with --config',
        args: ['run', '--config', 'fixtures/example-target.json', '--fault', FAULT],
        stderr:
          'error: --fault, --mode and --limit apply to the embedded reference\n  fix: drop --config to use them, or drop them to run against your target\n',
      },
      {
        name: '--transport in-process with --config',
        args: ['run', '--config', 'fixtures/example-target.json', '--transport', 'in-process'],
        stderr:
          'error: --transport in-process applies to the embedded reference: a target of --config is reached over the network\n  fix: drop --transport, or drop --config to run against the embedded reference\n',
      },
      {
        name: 'report: a report file that does not exist',
        args: ['report', 'no/such/report.json'],
        stderr:
          'error: cannot read report no/such/report.json: file not found\n  fix: pass the path of a report.json written by `fhir-conformance run` (e.g. reports/latest/report.json)\n',
      },
      {
        name: 'diff: a report file that does not exist',
        args: ['diff', 'no/such/a.json', 'no/such/b.json'],
        stderr: /^error: cannot read report no\/such\/a\.json: file not found\n/,
      },
      { name: 'report: a missing argument', args: ['report'], stderr: "error: missing required argument 'report.json'\n(add --help for usage and examples)\n" },
      {
        name: 'init without --base-url',
        args: ['init'],
        stderr: "error: required option '--base-url <url>' not specified\n(add --help for usage and examples)\n",
      },
    ];
    test.each(usage)(
      '2: $name',
      async ({ args, stderr }) => {
        const dir = await tempDir('cli-usage');
        const run = await runCli([...args, ...(args[0] === 'run' ? ['--report-dir', dir] : [])], { timeoutMs: 60_000 });
        expect(run.code, run.stderr).toBe(2);
        if (typeof stderr === 'string') expect(run.stderr).toBe(stderr);
        else expect(run.stderr).toMatch(stderr);
        expect(run.stderr).not.toMatch(INTERNAL);
        expect(existsSync(join(dir, 'latest'))).toBe(false);
      },
      70_000,
    );

    test('2: serve on a port that is in use', async () => {
      const busy = createServer().listen(0, '127.0.0.1');
      await once(busy, 'listening');
      const { port } = busy.address() as { port: number };
      try {
        const run = await runCli(['serve', '--port', String(port)], { timeoutMs: 30_000 });
        expect(run.code).toBe(2);
        expect(run.stderr).toBe(
          `error: port ${port} on 127.0.0.1 is already in use (another \`serve\`?)\n  field: port\n  fix: stop the other server, or pick another port with --port N (--port 0 picks a free one)\n`,
        );
      } finally {
        busy.close();
      }
    });

    test('3: an unreachable target stops in the preflight, with what to fix', async () => {
      const dir = await tempDir('cli-unreachable');
      const config = await writeTargetConfig(dir, { baseUrl: await refusedUrl(), requestMs: 1000, runMs: 10_000 });
      const run = await runCli(['run', '--config', config, '--profile', 'quick', '--only', '^discovery\\.', '--report-dir', dir, '--quiet'], {
        timeoutMs: 60_000,
      });
      expect(run.code).toBe(3);
      const report = await readLatestReport(dir);
      expect(report.checks).toEqual([]);
      expect(report.run.setupError).toMatch(/^Cannot run: the target is unreachable: connection refused by 127\.0\.0\.1:\d+\./);
      // --quiet still says why, where the report is and the verdict.
      expect(run.stderr).toBe(`\n${report.run.setupError}\n\nreports: ${join(dir, report.run.runId)}\n⛔ Not run: the target could not be used (exit 3)\n`);
    }, 70_000);
  });

  describe('help and version', () => {
    test('--version prints the version', async () => {
      const r = await runCli(['--version'], { timeoutMs: 30_000 });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${TOOL_VERSION}\n`);
    });

    test.each(['run', 'serve', 'report', 'diff', 'init', 'faults', 'requirements'])('%s --help: usage with options (and examples), exit 0', async (command) => {
      const r = await runCli([command, '--help'], { timeoutMs: 30_000 });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^Usage: fhir-conformance ${command} `));
      expect(r.stdout).toMatch(new RegExp(`\nExamples:\n {2}\\$ fhir-conformance ${command}`));
      const help = await runCli(['help', command], { timeoutMs: 30_000 });
      expect(help.stdout).toBe(r.stdout);
    });

    test('no command: the overview on stderr, exit 2', async () => {
      const r = await runCli([], { timeoutMs: 30_000 });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^Usage: fhir-conformance \[options\] \[command\]/);
      expect(r.stderr).toContain('Exit codes: 0 no check failed');
    });
  });

  test('report re-renders report.json as html (to a file), junit and md (--stdout)', async () => {
    const json = join(cleanDir, 'latest', 'report.json');
    const { runId } = (await readLatestReport(cleanDir)).run;
    const html = await runCli(['report', json, '--format', 'html', '--out', join(work, 'r.html')], { timeoutMs: 30_000 });
    const junit = await runCli(['report', json, '--format', 'junit', '--stdout'], { timeoutMs: 30_000 });
    const md = await runCli(['report', json, '--format', 'md', '--stdout'], { timeoutMs: 30_000 });
    for (const r of [html, junit, md]) expect(r.code, r.stderr).toBe(0);
    expect(html.stdout).toBe(`wrote ${join(work, 'r.html')}\n`);
    const page = await readFile(join(work, 'r.html'), 'utf8');
    expect(page).toMatch(/^<!DOCTYPE html>/i);
    expect(page).toContain(runId);
    // By default, to a file next to the report.json (never megabytes of HTML on a terminal).
    const copy = join(work, 'copy');
    await mkdir(copy, { recursive: true });
    await copyFile(json, join(copy, 'report.json'));
    const byDefault = await runCli(['report', join(copy, 'report.json')], { timeoutMs: 30_000 });
    expect(byDefault.code, byDefault.stderr).toBe(0);
    expect(byDefault.stdout).toBe(`wrote ${join(copy, 'report.html')}\n`);
    expect(await readFile(join(copy, 'report.html'), 'utf8')).toContain(runId);
    const json2 = await runCli(['report', join(copy, 'report.json'), '--format', 'json'], { timeoutMs: 30_000 });
    expect(json2.code).toBe(2);
    expect(json2.stderr).toBe('error: --format json would overwrite the report.json it reads\n  fix: pass --out FILE or --stdout\n');
    const xml = new XMLParser({ ignoreAttributes: false }).parse(junit.stdout) as { testsuites?: unknown };
    expect(xml.testsuites).toBeDefined();
    expect(junit.stdout).toContain('<testcase');
    // The same summary as the run wrote, but for where the full report lives.
    const withoutLink = (text: string) => text.replace(/^Full report: .*$/m, '');
    expect(withoutLink(md.stdout)).toBe(withoutLink(await readFile(join(cleanDir, 'latest', 'summary.md'), 'utf8')));
    const bad = await runCli(['report', json, '--format', 'pdf'], { timeoutMs: 30_000 });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      "error: option '-f, --format <format>' argument 'pdf' is invalid. Allowed choices are html, junit, md, json.\n(add --help for usage and examples)\n",
    );
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

  test('every help example names requirement ids and faults that exist', async () => {
    const requirements = JSON.parse(await readFile('suites/requirements.json', 'utf8')) as { requirements?: Array<{ id: string }> } | Array<{ id: string }>;
    const ids = new Set((Array.isArray(requirements) ? requirements : requirements.requirements!).map((r) => r.id));
    const faults = new Set(FAULTS.map((f) => f.name));
    for (const command of ['run', 'serve', 'init', 'report', 'diff', 'faults', 'requirements']) {
      const help = (await runCli([command, '--help'], { timeoutMs: 30_000 })).stdout;
      for (const m of help.matchAll(/--requirements ([A-Za-z][^\s]+)/g))
        for (const id of m[1]!.split(',')) expect(ids.has(id), `${command} --help names requirement ${id}`).toBe(true);
      for (const m of help.matchAll(/--fault ([A-Za-z][A-Za-z0-9-]+)/g)) expect(faults.has(m[1]!), `${command} --help names fault ${m[1]}`).toBe(true);
    }
  }, 120_000);

  test('faults lists the catalog, with the checks each fault must fail', async () => {
    const r = await runCli(['faults'], { timeoutMs: 30_000 });
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith(`${FAULTS.length} faults`)).toBe(true);
    for (const f of FAULTS) expect(r.stdout).toContain(f.name);
    expect(r.stdout).toContain(`must fail: ${FAULTS[0]!.checks!.join(', ')}`);
    const json = await runCli(['faults', '--json'], { timeoutMs: 30_000 });
    const listed = JSON.parse(json.stdout) as Array<{ name: string; checks: string[] }>;
    expect(listed.length).toBe(FAULTS.length);
    expect(listed.map((f) => f.checks)).toEqual(FAULTS.map((f) => f.checks ?? []));
    // A fault planted under chosen modes says so, in both listings.
    expect((listed as Array<{ name: string; modes?: object }>).find((f) => f.name === 'tenancy-upload-foreign-patient')?.modes).toEqual({
      uploadContract: 'type-query-raw',
    });
    expect(r.stdout).toContain('planted under: uploadContract=type-query-raw');
  });

  describe('serve', () => {
    const started: Array<ReturnType<typeof spawn>> = [];
    afterAll(() => {
      for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
    });

    /** `serve ...args` in a child process, once it printed its config; stopped with SIGTERM (exit 0). */
    async function startServe(args: string[], cwd = process.cwd()) {
      const child = spawn(process.execPath, [CLI, 'serve', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      started.push(child);
      let out = '';
      child.stdout!.setEncoding('utf8');
      await new Promise<void>((ready, fail) => {
        const timer = setTimeout(() => fail(new Error(`serve printed no config: ${out}`)), 30_000);
        child.once('exit', (code) => fail(new Error(`serve exited ${code}: ${out}`)));
        child.stdout!.on('data', (s: string) => {
          out += s;
          if (/\nTry:\n/.test(out)) {
            clearTimeout(timer);
            ready();
          }
        });
      });
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
      expect(url).toBeDefined();
      const printed = JSON.parse(out.slice(out.indexOf('{'), out.lastIndexOf('}') + 1)) as Record<string, unknown>;
      const stop = async () => {
        child.kill('SIGTERM');
        const [code] = (await once(child, 'exit')) as [number | null];
        expect(code).toBe(0);
      };
      return { url: url!, out, printed, stop };
    }

    test('prints a target config that run --config accepts', async () => {
      const serve = await startServe(['--port', '0']);
      const config = { ...serve.printed, timeouts: { requestMs: 5000, runMs: 60_000 } };
      expect(config).toMatchObject({ baseUrl: serve.url });
      // The spec's limits by default: nothing to declare.
      expect(config).not.toHaveProperty('limits');
      const dir = await tempDir('cli-serve');
      const path = join(dir, 'target.json');
      await writeFile(path, JSON.stringify(config));
      const run = await runCli(['run', '--config', path, '--profile', 'quick', '--only', '^(discovery|tenancy)\\.', '--report-dir', dir, '--quiet'], {
        timeoutMs: 90_000,
      });
      expect(run.code, run.stderr.slice(-1500)).toBe(0);
      expect((await readLatestReport(dir)).summary.byOutcome.pass).toBeGreaterThan(5);
      await serve.stop();
    }, 120_000);

    test("the README's example config (fixtures/example-target.json) works against serve as written, but for the port", async () => {
      const serve = await startServe(['--port', '0']);
      const example = JSON.parse(await readFile('fixtures/example-target.json', 'utf8')) as {
        baseUrl: string;
        tokenUrl: string;
        clients: Array<{ privateKey: { file: string } }>;
      };
      // Only the port differs from the README's `serve` (4780 may be taken here); key files resolve from fixtures/.
      const port = new URL(serve.url).port;
      const moved = (u: string) => u.replace(':4780', `:${port}`);
      const config = {
        ...example,
        baseUrl: moved(example.baseUrl),
        tokenUrl: moved(example.tokenUrl),
        clients: example.clients.map((c) => ({ ...c, privateKey: { file: join(process.cwd(), 'fixtures', c.privateKey.file) } })),
      };
      const dir = await tempDir('cli-example');
      await writeFile(join(dir, 'target.json'), JSON.stringify(config));
      const run = await runCli(
        ['run', '--config', join(dir, 'target.json'), '--profile', 'quick', '--only', '^(discovery|tenancy|errors)\\.', '--report-dir', dir, '--quiet'],
        { timeoutMs: 90_000 },
      );
      expect(run.code, run.stderr.slice(-1500)).toBe(0);
      const report = await readLatestReport(dir);
      expect(report.summary.byOutcome.pass).toBeGreaterThan(5);
      expect(report.summary.byOutcome.fail ?? 0).toBe(0);
      await serve.stop();
    }, 120_000);

    test('the onboarding path: init -> serve --client -> fill in the client id and fixtures -> run --config: exit 0', async () => {
      const dir = await tempDir('cli-onboarding');
      // The local reference a vendor starts first; init reads its smart-configuration.
      const first = await startServe(['--port', '0'], dir);
      const port = new URL(first.url).port;
      const init = await runCli(['init', '--base-url', first.url, '--out', join(dir, 'conformance')], { timeoutMs: 30_000 });
      expect(init.code, init.stderr).toBe(0);
      expect(init.stdout).toContain(`wrote ${join(dir, 'conformance', 'keys', 'main.public.jwks.json')}`);
      expect(init.stdout).toContain('serve --client YOUR-ID=');
      await first.stop();

      // init's config as it is: the placeholder client id stops the run at once, exit 2.
      const configPath = join(dir, 'conformance', 'target.json');
      const early = await runCli(['run', '--config', configPath, '--report-dir', join(dir, 'reports'), '--quiet'], { timeoutMs: 30_000 });
      expect(early.code, early.stderr).toBe(2);
      expect(early.stderr).toMatch(/^\nCannot run: clients\[0\] \(role "main"\) still has the client id "REPLACE-WITH-CLIENT-ID"/);
      expect(lastLine(early.stderr)).toBe('⛔ Not run: a set-up problem to fix first (exit 2)');

      // Register init's public key with the reference (same port), short windows, the matching config written out.
      const served = join(dir, 'served.json');
      const serve = await startServe(
        ['--port', port, '--limits', 'short', '--client', 'vendor-main=conformance/keys/main.public.jwks.json', '--config-out', served],
        dir,
      );
      expect(serve.out).toContain('Registered client "vendor-main": 1 public key(s)');
      const ready = JSON.parse(await readFile(served, 'utf8')) as { fixtures: Record<string, string>; limits: Record<string, number> };
      expect(ready).toEqual(serve.printed);
      expect(ready.limits).toEqual({ tokenLifetimeSec: 10, windowSec: 5, tokenIssuancePerMinute: 100 });

      // Fill in what init listed as missing: the client id, the fixture ids (and the short limits).
      const config = JSON.parse(await readFile(configPath, 'utf8')) as { clients: Array<{ clientId: string }>; fixtures: object; limits?: object };
      config.clients[0]!.clientId = 'vendor-main';
      config.fixtures = ready.fixtures;
      config.limits = ready.limits;
      await writeFile(configPath, JSON.stringify(config, null, 2));
      const run = await runCli(['run', '--config', configPath, '--profile', 'quick', '--report-dir', join(dir, 'reports')], { timeoutMs: 240_000 });
      expect(run.code, run.stderr.slice(-2500)).toBe(0);
      expect(run.stderr).toMatch(/^preflight: tokens issued for 1 of 1 client\(s\) \(main\)$/m);
      const report = await readLatestReport(join(dir, 'reports'));
      expect(report.summary.byOutcome.pass).toBeGreaterThan(100);
      expect(report.summary.byOutcome.fail + report.summary.byOutcome.error).toBe(0);
      // The roles init's config lacks are skips with their reason, not failures.
      expect(report.checks.some((c) => c.outcome === 'skip' && /no client with role "?second-org"?/.test(c.message ?? ''))).toBe(true);
      await serve.stop();
    }, 300_000);

    test('init --alg X for each of the ten algorithms -> serve --client with each key -> run --config with each key passes (EdDSA: the auth and discovery areas; the others: the negative token matrix)', async () => {
      const dir = await tempDir('cli-algs');
      const first = await startServe(['--port', '0'], dir);
      const port = new URL(first.url).port;
      const KTY: Record<string, string> = { R: 'RSA', P: 'RSA', E: 'EC', Ed: 'OKP' };
      for (const alg of SIGNING_ALGS) {
        const init = await runCli(['init', '--base-url', first.url, '--alg', alg, '--out', join(dir, alg)], { timeoutMs: 30_000 });
        expect(init.code, init.stderr).toBe(0);
        expect(init.stdout).toContain(`(private key, ${alg}: --alg; keep it out of version control)`);
        const jwks = JSON.parse(await readFile(join(dir, alg, 'keys', 'main.public.jwks.json'), 'utf8')) as { keys: Array<{ kty: string; alg: string }> };
        expect([jwks.keys[0]!.alg, jwks.keys[0]!.kty]).toEqual([alg, KTY[alg === 'EdDSA' ? 'Ed' : alg[0]!]]);
      }
      const refused = await runCli(['init', '--base-url', first.url, '--alg', 'HS256', '--out', join(dir, 'hs')], { timeoutMs: 30_000 });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('error: --alg "HS256" is not a signing algorithm the suite supports\n  field: alg\n  fix: use one of RS256, RS384');
      await first.stop();

      const served = join(dir, 'served.json');
      const serve = await startServe(
        [
          '--port',
          port,
          '--limits',
          'short',
          '--config-out',
          served,
          ...SIGNING_ALGS.flatMap((alg) => ['--client', `vendor-${alg}=${alg}/keys/main.public.jwks.json`]),
        ],
        dir,
      );
      for (const alg of SIGNING_ALGS) expect(serve.out).toContain(`Registered client "vendor-${alg}": 1 public key(s)`);
      const ready = JSON.parse(await readFile(served, 'utf8')) as { fixtures: Record<string, string>; limits: Record<string, number> };
      // EdDSA runs the auth and discovery areas; every other algorithm its preflight and the negative token matrix.
      for (const alg of SIGNING_ALGS) {
        const configPath = join(dir, alg, 'target.json');
        const config = JSON.parse(await readFile(configPath, 'utf8')) as { clients: Array<{ clientId: string }>; fixtures: object; limits?: object };
        config.clients[0]!.clientId = `vendor-${alg}`;
        config.fixtures = ready.fixtures;
        config.limits = ready.limits;
        await writeFile(configPath, JSON.stringify(config, null, 2));
        const reports = join(dir, alg, 'reports');
        const only = alg === 'EdDSA' ? '^(auth|discovery)\\.' : '^auth\\.assertion-(alg-none|hs256-public-key|foreign-key|unknown-kid|corrupted-signature)$';
        const run = await runCli(['run', '--config', configPath, '--profile', 'quick', '--only', only, '--report-dir', reports], {
          timeoutMs: 120_000,
        });
        expect(run.code, run.stderr.slice(-2500)).toBe(0);
        expect(run.stderr).toMatch(new RegExp(`^preflight: signing algorithms: main ${alg}$`, 'm'));
        const report = await readLatestReport(reports);
        expect(report.summary.byOutcome.fail + report.summary.byOutcome.error).toBe(0);
        // The negative matrix ran in the client's algorithm and passed.
        for (const slug of ['alg-none', 'hs256-public-key', 'foreign-key', 'unknown-kid', 'corrupted-signature'])
          expect([slug, report.checks.find((c) => c.id === `auth.assertion-${slug}`)?.outcome]).toEqual([slug, 'pass']);
      }
      await serve.stop();
    }, 600_000);
  });
});
