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
 * - FHIR schema compile time and report-writing time for 1,000 checks (bench/fhir-schema.ts,
 *   bench/reports.ts), as those scripts print them.
 * The LAST line is one JSON object with the headline figures.
 * `quick_s` is the median wall time of QUICK_RUNS runs, each a fresh process; CPU time
 * (user + system, from the children's resource usage) beside it, as the machine is shared.
 * Run: npm run bench   (about 10 minutes: the certification run waits out 5-minute tokens)
 *      npm run bench -- --skip-certification   (about 3 minutes)
 *      npm run bench -- --only quick   (the quick runs only, under a minute)
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PROJECT_ROOT } from '../src/paths.js';
import { runConformance } from '../src/run/index.js';
import type { CheckResult, RequestBudget, RequirementVerdict, RunInfo } from '../src/engine/types.js';

const skipCertification = process.argv.includes('--skip-certification');
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt === -1 ? undefined : process.argv[onlyAt + 1];
if (only !== undefined && only !== 'quick') {
  console.error(`bench: --only takes "quick" (got ${JSON.stringify(only)})`);
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

/** `fhir-conformance serve` at the spec's limits on a free port, its config written to `configOut`; stopped by PID. */
async function startServe(configOut: string): Promise<{ stop: () => void }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--host', '127.0.0.1', '--config-out', configOut], {
    cwd: PROJECT_ROOT,
    stdio: 'ignore',
  });
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
  return [...counts].map(([o, n]) => `${o} ${n}`).join(', ');
}

const dir = await mkdtemp(join(tmpdir(), 'fhirc-bench-'));
try {
  console.log(`node ${process.version}; ${new Date().toISOString()}`);

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
  if (only === 'quick') {
    console.log(JSON.stringify({ quick_s: round(quickS), quick_cpu_s: round(median(cpus)) }));
    await rm(dir, { recursive: true, force: true });
    process.exit(0);
  }

  // The gate at the spec's default limits: serve + run --config, both through the CLI.
  const configPath = join(dir, 'served-spec.json');
  const served = await startServe(configPath);
  let gateS: number;
  let gateReport: Report;
  try {
    const t = performance.now();
    const gate = await node([CLI, 'run', '--config', configPath, '--profile', 'gate', '--quiet', '--report-dir', join(dir, 'gate')], 900_000);
    gateS = (performance.now() - t) / 1000;
    gateReport = JSON.parse(await readFile(join(dir, 'gate', 'latest', 'report.json'), 'utf8')) as Report;
    console.log(
      `gate at the spec's limits (serve, one key): ${gateS.toFixed(1)} s wall (exit ${gate.code}); ${gateReport.checks.length} checks (${outcomes(gateReport.checks)})`,
    );
  } finally {
    served.stop();
  }
  const gateBudget = gateReport.run.budget;
  console.log(`  ${budgetLine(gateBudget)}`);
  const left = gateBudget?.leftToFull ?? [];
  console.log(`  left to full: ${left.length} MUST requirements (${[...new Set(left.map((l) => l.reason))].join('; ')})`);
  const slowestGate = [...gateReport.checks].sort((a, b) => b.durationMs - a.durationMs).slice(0, 3);
  console.log(`  slowest checks (waits included): ${slowestGate.map((c) => `${c.id} ${(c.durationMs / 1000).toFixed(1)} s`).join(', ')}`);

  const headline: Record<string, number | null> = {
    quick_s: round(quickS),
    quick_cpu_s: round(median(cpus)),
    gate_spec_limits_s: round(gateS),
    gate_requests: gateBudget?.requests ?? null,
  };
  if (skipCertification) {
    console.log('certification: skipped (--skip-certification)');
    console.log(
      JSON.stringify({
        ...headline,
        certification_s: null,
        certification_bound_s: null,
        ratio: null,
        certification_bound_all_waits_serial_s: null,
        requests: null,
        requests_per_requirement: null,
        unplanned_429: null,
      }),
    );
    await rm(dir, { recursive: true, force: true });
    process.exit(0);
  }

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

  // The component benchmarks, as they print themselves.
  for (const script of ['bench/fhir-schema.ts', 'bench/reports.ts']) {
    const r = await node([...TSX, script, ...(script.includes('fhir') ? ['R4'] : [])], 300_000);
    for (const line of r.stdout.trim().split('\n')) console.log(`${script}: ${line}`);
    if (r.code !== 0) console.log(`${script}: exit ${r.code} ${r.stderr.trim().split('\n').at(-1) ?? ''}`);
  }

  console.log(
    JSON.stringify({
      ...headline,
      certification_s: round(certS),
      certification_bound_s: pacing.boundS,
      ratio: round(certS / pacing.boundS, 3),
      certification_bound_all_waits_serial_s: pacing.boundAllSerialS,
      requests: pacing.requests,
      requests_per_requirement: round(perRequirement, 2),
      unplanned_429: pacing.unplanned429,
    }),
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}

function round(v: number, digits = 1): number {
  const k = 10 ** digits;
  return Math.round(v * k) / k;
}
