/**
 * Run figures, in one run on this machine:
 * - wall time of the quick profile against the embedded reference (the CLI, as `npm start`);
 * - wall time and request count of the gate profile against the reference at the spec's
 *   default limits (`fhir-conformance serve` in a child process, the CLI with `--config` in
 *   another, start-up and discovery included): what a CI gate costs against a real deployment;
 * - wall time and request count of the certification profile against the reference at the
 *   spec's default limits (in this process), next to its lower bound and the ratio
 *   (src/engine/schedule.ts); requests per covered requirement; 429s outside the
 *   rate-limit checks (must be 0); peak memory;
 * - the gate against `serve` in the pacing-variant modes (PACING_VARIANT: a key's window that keeps
 *   whole seconds, a reset that names the moment the whole window is free, a longer
 *   Retry-After) at the spec's limits: `gate_pacing_variant_s`, the 150 s promise on another target;
 * - with three keys of the main organization and its ceiling declared (THREE_KEYS): the gate against
 *   a reference in this process at the spec's limits (`gate_3keys_s`) and the certification run
 *   (`certification_3keys_s`), with what the reference's windows counted per key and per organization
 *   (peak in a window, refusals) and the checks whose outcome differs from the one-key run;
 * - FHIR schema compile time and report-writing time for 1,000 checks (bench/fhir-schema.ts,
 *   bench/reports.ts), as those scripts print them.
 * The LAST line is one JSON object with the headline figures.
 * `quick_s` is the median wall time of QUICK_RUNS runs, each a fresh process; CPU time
 * (user + system, from the children's resource usage) beside it, as the machine is shared.
 * Run: npm run bench   (about 25 minutes: the two certification runs wait out 5-minute tokens)
 *      npm run bench -- --skip-certification   (about 6 minutes)
 *      npm run bench -- --only gates   (the three gate runs, about 10 minutes)
 *      npm run bench -- --only certifications   (the two certification runs, about 13 minutes)
 *      npm run bench -- --only quick   (the quick runs only, under a minute)
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PROJECT_ROOT } from '../src/paths.js';
import { runConformance } from '../src/run/index.js';
import { createReferenceServer, type ReferenceServer } from '../src/reference/index.js';
import type { RateCounts } from '../src/reference/server.js';
import type { CheckResult, RequestBudget, RequirementVerdict, RunInfo } from '../src/engine/types.js';

const skipCertification = process.argv.includes('--skip-certification');
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt === -1 ? undefined : process.argv[onlyAt + 1];
if (only !== undefined && only !== 'quick' && only !== 'gates' && only !== 'certifications') {
  console.error(`bench: --only takes "quick", "gates" or "certifications" (got ${JSON.stringify(only)})`);
  process.exit(2);
}
/** Runs of the quick profile whose median is `quick_s`. */
const QUICK_RUNS = 5;

const CLI = resolve(PROJECT_ROOT, 'bin/fhir-conformance.js');
const TSX = ['--import', 'tsx'];

interface Report {
  run: RunInfo;
  checks: CheckResult[];
  requirements: RequirementVerdict[];
}

/**
 * The reference modes of the pacing-variant gate: a per-key window that keeps whole seconds, an X-RateLimit-Reset that names the moment the whole window is free, and a
 * Retry-After one second longer (all conformant: ALTERNATIVE_MODES in src/mutation/run.ts).
 */
const PACING_VARIANT = ['keyWindowAccounting=coarse', 'rateLimitReset=window-free', 'retryAfter=plus-one'];

/**
 * The third key of the main organization (the fixtures register `conformance-main` and
 * `conformance-main-2`): registered with the reference here, signing with a test key of the fixtures.
 */
const THIRD_KEY_FILE = resolve(PROJECT_ROOT, 'fixtures/reference/keys/conformance-main.rs256.test-key.private.jwk.json');
const THIRD_CLIENT = 'conformance-main-3';
const SCOPES = [
  'system/MedicationRequest.rs',
  'system/MedicationRequest.cru',
  'system/MedicationRequest.c',
  'system/Encounter.rs',
  'system/Encounter.cru',
  'system/DocumentReference.rs',
  'system/DocumentReference.cru',
];
const KEY_CEILING = 60;

function thirdKey() {
  const jwk = JSON.parse(readFileSync(THIRD_KEY_FILE, 'utf8')) as Record<string, string>;
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...pub } = jwk;
  return {
    extraClient: { clientId: THIRD_CLIENT, org: 'org-a', keyKind: 'sandbox' as const, scopes: SCOPES, jwks: { keys: [pub] } },
    configClient: { role: 'extra', clientId: THIRD_CLIENT, alg: 'RS256', keyKind: 'sandbox', scopes: SCOPES, privateKey: { file: THIRD_KEY_FILE } },
  };
}

/** A target config with three keys of the main organization and the organization's ceiling (the reference's) declared. */
function threeKeys(raw: Record<string, unknown>, orgCeiling: number): Record<string, unknown> {
  const clients = (raw.clients as Array<Record<string, unknown>>).map((c) => ({ ...c, rateLimitPerMinute: KEY_CEILING }));
  return { ...raw, organization: { requestsPerMinute: orgCeiling }, clients: [...clients, { ...thirdKey().configClient, rateLimitPerMinute: KEY_CEILING }] };
}

/** What the reference's windows counted, one line: the organization's and each key's peak in a window against its ceiling, and refusals. */
function countsLine(c: RateCounts): string {
  const one = ([n, x]: [string, { limit: number; peak: number; refused: number }]) => `${n} ${x.peak}/${x.limit}${x.refused ? ` (${x.refused} refused)` : ''}`;
  return `organizations: ${Object.entries(c.organizations).map(one).join(', ')}; keys: ${Object.entries(c.keys).map(one).join(', ')}`;
}

/** Requests the main organization's windows refused (its keys' and its own): 0 when no ceiling was exceeded. */
function mainOrgRefused(c: RateCounts, mainOrgKeys: readonly string[]): number {
  return (c.organizations['org-a']?.refused ?? 0) + mainOrgKeys.reduce((n, k) => n + (c.keys[k]?.refused ?? 0), 0);
}

/** Checks whose outcome differs between two runs (by id), one per line. */
function verdictDiff(a: readonly CheckResult[], b: readonly CheckResult[]): string[] {
  const of = new Map(b.map((c) => [c.id, c]));
  const out: string[] = [];
  for (const c of a) {
    const other = of.get(c.id);
    if (!other) out.push(`${c.id}: ${c.outcome} -> (not run)`);
    else if (other.outcome !== c.outcome) out.push(`${c.id}: ${c.outcome} -> ${other.outcome} (${(other.message ?? '').slice(0, 160)})`);
  }
  for (const c of b) if (!a.some((x) => x.id === c.id)) out.push(`${c.id}: (not run) -> ${c.outcome}`);
  return out;
}

/** `fhir-conformance serve` at the spec's limits on a free port, its config written to `configOut`; stopped by PID. */
async function startServe(configOut: string, modes: readonly string[] = []): Promise<{ stop: () => void }> {
  const child = spawn(
    process.execPath,
    [CLI, 'serve', '--port', '0', '--host', '127.0.0.1', '--config-out', configOut, ...modes.flatMap((m) => ['--mode', m])],
    {
      cwd: PROJECT_ROOT,
      stdio: 'ignore',
    },
  );
  for (let i = 0; i < 600; i++) {
    if (
      await stat(configOut).then(
        () => true,
        () => false,
      )
    )
      return { stop: () => void child.kill('SIGTERM') };
    if (child.exitCode !== null) break;
    await sleep(100);
  }
  child.kill('SIGTERM');
  throw new Error('fhir-conformance serve did not write its config within 60 s');
}

function budgetLine(b: RequestBudget | undefined): string {
  if (!b) return 'no request budget in the report';
  const areas = Object.entries(b.byArea)
    .filter(([, a]) => a.requests > 0)
    .map(([n, a]) => `${n} ${a.requests}`)
    .join(', ');
  return `${b.requests} requests (${b.tokenRequests} token, ${b.shared} answered from shared exchanges), ${b.coveredRequirements} requirements judged, ${b.requestsPerRequirement} per requirement; per area: ${areas}`;
}

function node(args: string[], timeoutMs: number): Promise<{ code: number; stdout: string; stderr: string; cpuS: number }> {
  const before = childCpuS();
  return new Promise((done) => {
    execFile(process.execPath, args, { cwd: PROJECT_ROOT, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
      done({ code, stdout: String(stdout), stderr: String(stderr), cpuS: childCpuS() - before });
    });
  });
}

/** User + system CPU seconds of this process's waited-for children (getrusage RUSAGE_CHILDREN, through /proc). */
function childCpuS(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  // Fields 16 and 17 (cutime, cstime), counted from the state field (3): indexes 13 and 14.
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** The checks that met a 429 they did not provoke on purpose (per-check stats: in-process results only). */
const unplannedBy = (checks: CheckResult[]) => checks.filter((c) => (c.stats?.unplanned429 ?? 0) > 0).map((c) => `${c.id} ${c.stats!.unplanned429}`);

const covered = (r: Report) => r.requirements.filter((q) => q.outcome !== 'untested' && q.outcome !== 'skip').length;
function outcomes(checks: CheckResult[]): string {
  const counts = new Map<string, number>();
  for (const c of checks) counts.set(c.outcome, (counts.get(c.outcome) ?? 0) + 1);
  const bad = checks.filter((c) => c.outcome === 'fail' || c.outcome === 'error').map((c) => `${c.id} ${c.outcome}`);
  return [...counts].map(([o, n]) => `${o} ${n}`).join(', ') + (bad.length ? `; ${bad.join(', ')}` : '');
}

const dir = await mkdtemp(join(tmpdir(), 'fhirc-bench-'));
try {
  console.log(`node ${process.version}; ${new Date().toISOString()}`);
  const headline: Record<string, number | null> = {};

  if (only === undefined || only === 'quick') {
    // Quick profile, through the CLI as `npm start` runs it: the median of QUICK_RUNS runs.
    const walls: number[] = [];
    const cpus: number[] = [];
    let quickReport: Report | undefined;
    for (let i = 0; i < QUICK_RUNS; i++) {
      const t0 = performance.now();
      const quick = await node([CLI, 'run', '--profile', 'quick', '--quiet', '--report-dir', join(dir, 'quick')], 120_000);
      walls.push((performance.now() - t0) / 1000);
      cpus.push(quick.cpuS);
      quickReport = JSON.parse(await readFile(join(dir, 'quick', 'latest', 'report.json'), 'utf8')) as Report;
      console.log(
        `quick ${i + 1}/${QUICK_RUNS}: ${walls[i]!.toFixed(1)} s wall, ${quick.cpuS.toFixed(1)} s CPU (exit ${quick.code}); ${quickReport.checks.length} checks (${outcomes(quickReport.checks)})`,
      );
    }
    const quickS = median(walls);
    console.log(`quick: median ${quickS.toFixed(1)} s wall (${walls.map((w) => w.toFixed(1)).join(', ')}), median ${median(cpus).toFixed(1)} s CPU`);
    if (!quickReport) throw new Error('no quick run');
    console.log(`  ${budgetLine(quickReport.run.budget)}`);
    headline.quick_s = round(quickS);
    headline.quick_cpu_s = round(median(cpus));
  }

  if (only === undefined || only === 'gates') {
    // The gate at the spec's default limits: serve + run --config, both through the CLI.
    const gate = await servedGate("gate at the spec's limits (serve, one key)", 'gate', []);
    const gateBudget = gate.report.run.budget;
    const left = gateBudget?.leftToFull ?? [];
    console.log(`  left to full: ${left.length} MUST requirements (${[...new Set(left.map((l) => l.reason))].join('; ')})`);
    headline.gate_spec_limits_s = round(gate.s);
    headline.gate_requests = gateBudget?.requests ?? null;

    // The same gate against a reference whose windows count differently (PACING_VARIANT).
    const variant = await servedGate(
      `gate at the spec's limits, pacing variant (serve --mode ${PACING_VARIANT.join(' --mode ')})`,
      'gate-variant',
      PACING_VARIANT,
    );
    headline.gate_pacing_variant_s = round(variant.s);
    headline.gate_pacing_variant_requests = variant.report.run.budget?.requests ?? null;
    console.log(`  unplanned 429 (pacing variant): ${unplannedOf(variant.report)}`);

    // Three keys of the main organization, its ceiling declared: a reference in this process, whose windows we read.
    const reference = await createReferenceServer({ host: '127.0.0.1', port: 0, extraClients: [thirdKey().extraClient] });
    let three: { s: number; report: Report; code: number };
    let counts: RateCounts;
    try {
      const configPath = join(dir, 'three-keys.json');
      await writeFile(
        configPath,
        JSON.stringify(threeKeys(reference.targetConfig() as unknown as Record<string, unknown>, reference.options.limits.perOrgPerWindow), null, 2),
      );
      three = await cliGate("gate at the spec's limits, three keys of the main organization and its ceiling declared", configPath, 'gate-3keys');
      counts = reference.rateCounts();
    } finally {
      await reference.close();
    }
    const mainKeys = mainOrgKeys(three.report);
    console.log(`  the reference counted: ${countsLine(counts)}`);
    console.log(`  main organization's windows: ${mainOrgRefused(counts, mainKeys)} requests refused (0: no key's and no organization's ceiling exceeded)`);
    console.log(`  unplanned 429: ${unplannedOf(three.report)}`);
    const diff = verdictDiff(gate.report.checks, three.report.checks);
    console.log(`  verdicts against the one-key gate: ${diff.length ? `${diff.length} differ:\n    ${diff.join('\n    ')}` : 'the same'}`);
    headline.gate_3keys_s = round(three.s);
    headline.gate_3keys_requests = three.report.run.budget?.requests ?? null;
    headline.gate_3keys_refused_main_org = mainOrgRefused(counts, mainKeys);
    headline.gate_3keys_verdict_differences = diff.length;
  }

  if (skipCertification || only === 'quick' || only === 'gates') {
    if (skipCertification) console.log('certification: skipped (--skip-certification)');
    console.log(JSON.stringify(headline));
    await rm(dir, { recursive: true, force: true });
    process.exit(0);
  }

  let oneKey: CheckResult[] | undefined;
  {
    // Certification at the spec's default limits, in this process (its peak memory is ours).
    const t1 = performance.now();
    const cert = await runConformance({ profile: 'certification', reportsRoot: join(dir, 'certification'), progress: false });
    const certS = (performance.now() - t1) / 1000;
    const certReport = JSON.parse(await readFile(join(dir, 'certification', 'latest', 'report.json'), 'utf8')) as Report;
    const pacing = cert.result.info.pacing;
    if (!pacing) throw new Error(`the certification run produced no pacing figures (exit ${cert.exitCode}; ${cert.setupError ?? 'no setup error'})`);
    const requirements = covered(certReport);
    const perRequirement = pacing.requests / requirements;
    const slowest = [...certReport.checks].sort((a, b) => b.durationMs - a.durationMs).slice(0, 5);
    console.log(`certification: ${certS.toFixed(1)} s wall (exit ${cert.exitCode}); ${certReport.checks.length} checks (${outcomes(certReport.checks)})`);
    console.log(
      `  ${pacing.requests} requests (${pacing.pacedRequests} paced) for ${requirements} covered requirements: ${perRequirement.toFixed(2)} per requirement`,
    );
    console.log(
      `  lower bound ${pacing.boundS} s (${pacing.boundBy}; ${pacing.requiredWaitsS} s of waits after the paced requests, ${pacing.overlappedWaitsS} s beside them); ` +
        `run ${pacing.wallS} s from its start; ratio ${pacing.ratio}; with every wait added to the pacing the bound is ${pacing.boundAllSerialS} s, ratio ${round(pacing.wallS / pacing.boundAllSerialS, 3)}`,
    );
    console.log(`  unplanned 429: ${pacing.unplanned429}${pacing.unplanned429 ? ` (${unplannedBy(cert.results).join(', ')})` : ''}`);
    console.log(`  ${budgetLine(certReport.run.budget)}`);
    console.log(`  slowest checks: ${slowest.map((c) => `${c.id} ${(c.durationMs / 1000).toFixed(1)} s`).join(', ')}`);
    console.log(`peak RSS (this process, certification run included): ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
    oneKey = cert.results;
    Object.assign(headline, {
      certification_s: round(certS),
      certification_bound_s: pacing.boundS,
      ratio: round(certS / pacing.boundS, 3),
      certification_bound_all_waits_serial_s: pacing.boundAllSerialS,
      requests: pacing.requests,
      requests_per_requirement: round(perRequirement, 2),
      unplanned_429: pacing.unplanned429,
    });
  }

  // Certification with three keys of the main organization and its ceiling declared (the embedded reference at the spec's limits).
  {
    let reference: ReferenceServer | undefined;
    const t2 = performance.now();
    const cert3 = await runConformance({
      profile: 'certification',
      reportsRoot: join(dir, 'certification-3keys'),
      progress: false,
      reference: { extraClients: [thirdKey().extraClient] },
      configOverlay: (raw) => threeKeys(raw, reference?.options.limits.perOrgPerWindow ?? 600),
      onReference: (server) => {
        reference = server;
      },
    });
    const cert3S = (performance.now() - t2) / 1000;
    const report3 = JSON.parse(await readFile(join(dir, 'certification-3keys', 'latest', 'report.json'), 'utf8')) as Report;
    const pacing3 = cert3.result.info.pacing;
    console.log(
      `certification, three keys of the main organization and its ceiling declared: ${cert3S.toFixed(1)} s wall (exit ${cert3.exitCode}); ${report3.checks.length} checks (${outcomes(report3.checks)})`,
    );
    if (pacing3)
      console.log(
        `  ${pacing3.requests} requests (${pacing3.pacedRequests} paced, ${pacing3.usableKeys} usable keys); lower bound ${pacing3.boundS} s (${pacing3.boundBy}); ratio ${pacing3.ratio}; unplanned 429: ${pacing3.unplanned429}${pacing3.unplanned429 ? ` (${unplannedBy(cert3.results).join(', ')})` : ''}`,
      );
    console.log(`  ${budgetLine(report3.run.budget)}`);
    const slowest3 = [...report3.checks].sort((a, b) => b.durationMs - a.durationMs).slice(0, 5);
    console.log(`  slowest checks: ${slowest3.map((c) => `${c.id} ${(c.durationMs / 1000).toFixed(1)} s`).join(', ')}`);
    const counts = reference?.rateCounts();
    if (counts) {
      console.log(`  the reference counted: ${countsLine(counts)}`);
      console.log(
        `  main organization's windows: ${mainOrgRefused(counts, mainOrgKeys(report3))} requests refused (0: no key's and no organization's ceiling exceeded)`,
      );
    }
    if (oneKey) {
      const diff = verdictDiff(oneKey, cert3.results);
      console.log(`  verdicts against the one-key certification: ${diff.length ? `${diff.length} differ:\n    ${diff.join('\n    ')}` : 'the same'}`);
      headline.certification_3keys_verdict_differences = diff.length;
    }
    headline.certification_3keys_s = round(cert3S);
    headline.certification_3keys_requests = pacing3?.requests ?? null;
    headline.certification_3keys_unplanned_429 = pacing3?.unplanned429 ?? null;
    headline.certification_3keys_refused_main_org = counts ? mainOrgRefused(counts, mainOrgKeys(report3)) : null;
  }

  if (only === undefined) {
    // The component benchmarks, as they print themselves.
    for (const script of ['bench/fhir-schema.ts', 'bench/reports.ts']) {
      const r = await node([...TSX, script, ...(script.includes('fhir') ? ['R4'] : [])], 300_000);
      for (const line of r.stdout.trim().split('\n')) console.log(`${script}: ${line}`);
      if (r.code !== 0) console.log(`${script}: exit ${r.code} ${r.stderr.trim().split('\n').at(-1) ?? ''}`);
    }
  }

  console.log(JSON.stringify(headline));
} finally {
  await rm(dir, { recursive: true, force: true });
}

/** The gate through the CLI against the target of `configPath`; its report and a few lines. */
async function cliGate(label: string, configPath: string, name: string): Promise<{ s: number; report: Report; code: number }> {
  const t = performance.now();
  const run = await node([CLI, 'run', '--config', configPath, '--profile', 'gate', '--quiet', '--report-dir', join(dir, name)], 900_000);
  const s = (performance.now() - t) / 1000;
  const report = JSON.parse(await readFile(join(dir, name, 'latest', 'report.json'), 'utf8')) as Report;
  console.log(`${label}: ${s.toFixed(1)} s wall (exit ${run.code}); ${report.checks.length} checks (${outcomes(report.checks)})`);
  console.log(`  ${budgetLine(report.run.budget)}`);
  const slowest = [...report.checks].sort((a, b) => b.durationMs - a.durationMs).slice(0, 3);
  console.log(`  slowest checks (waits included): ${slowest.map((c) => `${c.id} ${(c.durationMs / 1000).toFixed(1)} s`).join(', ')}`);
  return { s, report, code: run.code };
}

/** The gate against `fhir-conformance serve` at the spec's limits in `modes`. */
async function servedGate(label: string, name: string, modes: readonly string[]): Promise<{ s: number; report: Report; code: number }> {
  const configPath = join(dir, `${name}-served.json`);
  const served = await startServe(configPath, modes);
  try {
    return await cliGate(label, configPath, name);
  } finally {
    served.stop();
  }
}

/** Client ids of the main organization's keys in a report's config (every role but second-org). */
function mainOrgKeys(report: Report): string[] {
  const clients = ((report.run as unknown as { config?: { clients?: Array<{ role: string; clientId: string }> } }).config?.clients ?? []) as Array<{
    role: string;
    clientId: string;
  }>;
  const ids = clients.filter((c) => c.role !== 'second-org').map((c) => c.clientId);
  return ids.length ? ids : ['conformance-main', 'conformance-main-2', THIRD_CLIENT, 'conformance-production'];
}

/** 429s the run did not provoke on purpose, from the checks' stats in the report. */
function unplannedOf(report: Report): string {
  const checks = report.checks.filter((c) => (c.stats?.unplanned429 ?? 0) > 0);
  const n = checks.reduce((k, c) => k + (c.stats?.unplanned429 ?? 0), 0);
  return `${n}${checks.length ? ` (${checks.map((c) => `${c.id} ${c.stats!.unplanned429}`).join(', ')})` : ''}`;
}

function round(v: number, digits = 1): number {
  const k = 10 ** digits;
  return Math.round(v * k) / k;
}
