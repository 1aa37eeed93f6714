/**
 * Runs the real CLI (`bin/fhir-conformance.js`) as a child process and reads
 * what it wrote: exit code, stdout, stderr, the report files. Shared by the
 * CLI end-to-end tests and the robustness tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PROJECT_ROOT } from '../../src/paths.js';
import type { ReportDocument } from '../../src/report/types.js';
import { createReferenceServer } from '../../src/reference/index.js';
import type { ReferenceServer } from '../../src/reference/server.js';
import { EMBEDDED_LIMITS, embeddedTargetConfig } from '../../src/run/embedded.js';

export const CLI = resolve(PROJECT_ROOT, 'bin/fhir-conformance.js');
export const KEYS_DIR = resolve(PROJECT_ROOT, 'fixtures/reference/keys');

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** The process outlived `timeoutMs` and was killed. */
  timedOut: boolean;
  /** Peak resident memory of the process (VmHWM, kB), sampled from /proc while it ran. */
  peakRssKb?: number;
}

export interface CliOptions {
  timeoutMs: number;
  /** Called once the process is spawned (to signal it, or to watch its output). */
  onSpawn?: (child: ChildProcess) => void;
  /** Environment variables set (a value) or removed (undefined) for the process. */
  env?: Record<string, string | undefined>;
}

/** Runs `node bin/fhir-conformance.js ...args`; kills it (by pid) after `timeoutMs`. */
export function runCli(args: string[], opts: CliOptions): Promise<CliRun> {
  const started = Date.now();
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let peakRssKb: number | undefined;
  let timedOut = false;
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const sampler = setInterval(() => {
    const kb = vmHwmKb(child.pid);
    if (kb !== undefined) peakRssKb = Math.max(peakRssKb ?? 0, kb);
  }, 100);
  const killer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, opts.timeoutMs);
  opts.onSpawn?.(child);
  return new Promise((done, fail) => {
    child.once('error', fail);
    child.once('close', (code, signal) => {
      clearInterval(sampler);
      clearTimeout(killer);
      done({ code, signal, stdout, stderr, ms: Date.now() - started, timedOut, peakRssKb });
    });
  });
}

function vmHwmKb(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

export async function tempDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `fhirc-${prefix}-`));
}

export const REPORT_FILES = ['report.json', 'junit.xml', 'report.html', 'summary.md'] as const;

/** The latest run's report.json under a `--report-dir`. */
export async function readLatestReport(reportDir: string): Promise<ReportDocument> {
  return JSON.parse(await readFile(join(reportDir, 'latest', 'report.json'), 'utf8')) as ReportDocument;
}

/** Every report file of the latest run, by name. */
export async function readReportFiles(reportDir: string): Promise<Record<string, string>> {
  const entries = await Promise.all(REPORT_FILES.map(async (f) => [f, await readFile(join(reportDir, 'latest', f), 'utf8')] as const));
  return Object.fromEntries(entries);
}

/** The reference's clients as it registers them by default, with their test keys (absolute paths; the main client's ES256 test key: mode mainKeyAlg). */
export const TEST_CLIENTS = [
  { role: 'main', clientId: 'conformance-main', alg: 'ES256', keyFile: 'conformance-main.es256.test-key.private.jwk.json' },
  { role: 'second-org', clientId: 'conformance-org-b', alg: 'ES256' },
  { role: 'production', clientId: 'conformance-production', alg: 'ES256' },
  { role: 'extra', clientId: 'conformance-main-2', alg: 'RS384' },
].map(({ keyFile, ...c }) => ({ ...c, privateKey: { file: join(KEYS_DIR, keyFile ?? `${c.clientId}.test-key.private.jwk.json`) } }));

export interface TargetConfigInit {
  baseUrl: string;
  tokenUrl?: string;
  requestMs: number;
  runMs: number;
  fixtures?: Record<string, string>;
  extra?: Record<string, unknown>;
}

/** Writes a target config with the reference's test keys; returns its path. */
export async function writeTargetConfig(dir: string, init: TargetConfigInit): Promise<string> {
  const config = {
    baseUrl: init.baseUrl,
    ...(init.tokenUrl ? { tokenUrl: init.tokenUrl } : {}),
    clients: TEST_CLIENTS,
    fixtures: init.fixtures ?? referenceFixtures(),
    timeouts: { requestMs: init.requestMs, runMs: init.runMs },
    ...init.extra,
  };
  const path = join(dir, 'target.json');
  await writeFile(path, JSON.stringify(config, null, 2));
  return path;
}

/** The reference's fixture ids as config fixtures (orgA/orgB are not fixtures). */
export function referenceFixtures(): Record<string, string> {
  const ids = JSON.parse(readFileSync(resolve(PROJECT_ROOT, 'fixtures/reference/fixture-ids.json'), 'utf8')) as Record<string, string>;
  const { orgA: _a, orgB: _b, ...fixtures } = ids;
  return fixtures;
}

/** A reference in this process with the embedded run's limits (what `run` without --config uses). */
export function startReference(): Promise<ReferenceServer> {
  return createReferenceServer({ port: 0, limits: EMBEDDED_LIMITS });
}

/**
 * Writes the config the embedded run would use for `server` (its limits
 * declared), pointed at `baseUrl`/`tokenUrl` (a proxy in front of it, say).
 */
export async function writeReferenceConfig(dir: string, server: ReferenceServer, init: Omit<TargetConfigInit, 'fixtures' | 'extra'>): Promise<string> {
  const config = {
    ...embeddedTargetConfig(server, EMBEDDED_LIMITS),
    baseUrl: init.baseUrl,
    tokenUrl: init.tokenUrl ?? `${init.baseUrl}/auth/token`,
    timeouts: { requestMs: init.requestMs, runMs: init.runMs },
  };
  const path = join(dir, 'target.json');
  await writeFile(path, JSON.stringify(config, null, 2));
  return path;
}
