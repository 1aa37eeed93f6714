/**
 * bench:stability — are the suite's verdicts stable on this machine? Runs K full-profile CLI
 * runs at once against the embedded reference at short limits (6 s windows, 8 s tokens, a
 * small per-key ceiling), optionally beside N CPU-burning child processes, and compares the
 * verdict of every check across the runs.
 *
 *   npm run bench:stability -- --runs 3 --load 1
 *
 * Options: --runs K (default 3), --load N (default 0), --profile P (default full),
 * --limit key=value (added to / overriding the short limits), --mode key=value,
 * --timeout-min M (per run, default 20).
 *
 * Prints each run's wall time and outcome counts, per check how many runs agreed (the
 * disagreeing ones first, with each run's outcome and message), and as the LAST line one
 * JSON object. Exit code 0 only when every check got the same verdict in every run and no
 * run has a fail or an error (the reference is clean: any fail or error is the suite's).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import { runCli } from '../src/mutation/run.js';
import type { CheckResult } from '../src/engine/types.js';

/**
 * 6 s windows and 8 s tokens, so every expiry, window and Retry-After path is exercised many
 * times in a run; 30 requests per key and 40 token requests per window keep the exhaustion
 * bursts short enough to fill a window on a loaded machine, and a run at a few minutes.
 */
const SHORT_LIMITS: Record<string, string> = {
  windowMs: '6000',
  tokenLifetimeSec: '8',
  perKeyPerWindow: '30',
  tokenWindowMs: '6000',
  tokenIssuancePerWindow: '40',
};

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    load: { type: 'string', default: '0' },
    profile: { type: 'string', default: 'full' },
    limit: { type: 'string', multiple: true },
    mode: { type: 'string', multiple: true },
    'timeout-min': { type: 'string', default: '20' },
  },
  strict: true,
});

function count(name: string, v: string | undefined, min: number): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) {
    console.error(`--${name} takes a whole number >= ${min}, got ${String(v)}`);
    process.exit(2);
  }
  return n;
}

const runs = count('runs', values.runs, 1);
const load = count('load', values.load, 0);
const timeoutMs = count('timeout-min', values['timeout-min'], 1) * 60_000;
const limits = { ...SHORT_LIMITS };
for (const l of values.limit ?? []) {
  const [k, v] = l.split('=', 2);
  if (!k || v === undefined) {
    console.error(`--limit takes KEY=VALUE, got "${l}"`);
    process.exit(2);
  }
  limits[k] = v;
}
const args = [
  '--profile',
  values.profile!,
  ...Object.entries(limits).flatMap(([k, v]) => ['--limit', `${k}=${v}`]),
  ...(values.mode ?? []).flatMap((m) => ['--mode', m]),
];

interface Run {
  index: number;
  exitCode: number;
  wallMs: number;
  checks: Map<string, Pick<CheckResult, 'outcome' | 'message'>>;
  /** Requests re-sent with a re-issued token (observation `suite.token-reissued`). */
  tokenReissues: number;
  stderr: string;
}

/** One CLI run in its own report directory (the mutation runner's), by its report.json. */
async function cliRun(index: number): Promise<Run> {
  const r = await runCli(args, timeoutMs);
  const checks = new Map(r.checks.map((c) => [c.id, { outcome: c.outcome, message: c.message }]));
  const tokenReissues = r.checks.reduce((n, c) => n + (c.observations ?? []).filter((o) => o.key === 'suite.token-reissued').length, 0);
  return { index, exitCode: r.exitCode, wallMs: r.durationMs, checks, tokenReissues, stderr: r.stderr };
}

/** A child process that burns one CPU until killed, and stops by itself after `maxMs` in any case. */
function burner(maxMs: number): ChildProcess {
  const code = `const stop = Date.now() + ${maxMs}; let x = 0; while (Date.now() < stop) { for (let i = 0; i < 1e6; i++) x += Math.sqrt(i); }`;
  return spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
}

function outcomeCounts(checks: Iterable<Pick<CheckResult, 'outcome'>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of checks) out[c.outcome] = (out[c.outcome] ?? 0) + 1;
  return out;
}

const short = (s: string | undefined, n = 300) => (s === undefined ? '' : s.length > n ? `${s.slice(0, n - 3)}...` : s);

console.log(`stability: ${runs} run(s) at once, ${load} CPU burner(s) beside them; node ${process.version}; ${new Date().toISOString()}`);
console.log(`  each: fhir-conformance run --quiet ${args.join(' ')}`);
console.log(
  `  limits: ${limits.perKeyPerWindow} requests per key per ${Number(limits.windowMs) / 1000} s window, ${limits.tokenLifetimeSec} s tokens, ${limits.tokenIssuancePerWindow} token requests per ${Number(limits.tokenWindowMs) / 1000} s`,
);

const burners = Array.from({ length: load }, () => burner(timeoutMs + 60_000));
const t0 = Date.now();
let results: Run[];
try {
  results = await Promise.all(Array.from({ length: runs }, (_x, i) => cliRun(i + 1)));
} finally {
  for (const b of burners) if (b.exitCode === null) b.kill();
}
const wallS = (Date.now() - t0) / 1000;

for (const r of results) {
  const counts = Object.entries(outcomeCounts(r.checks.values()))
    .map(([o, n]) => `${o} ${n}`)
    .join(', ');
  console.log(
    `run ${r.index}: ${(r.wallMs / 1000).toFixed(1)} s, exit ${r.exitCode}, ${r.checks.size} checks (${counts || 'no report'}), token re-issues ${r.tokenReissues}`,
  );
  if (r.checks.size === 0) console.log(`  stderr: ${short(r.stderr, 1500)}`);
}

const ids = [...new Set(results.flatMap((r) => [...r.checks.keys()]))].sort();
const rows = ids.map((id) => {
  const per = results.map((r) => r.checks.get(id));
  const outcomes = per.map((c) => c?.outcome ?? 'missing');
  const majority = [...new Set(outcomes)].map((o) => [o, outcomes.filter((x) => x === o).length] as const).sort((a, b) => b[1] - a[1])[0]!;
  return { id, per, outcomes, agreed: majority[1], verdict: majority[0], same: new Set(outcomes).size === 1 };
});
const disagreed = rows.filter((r) => !r.same);
const bad = rows.filter((r) => r.outcomes.some((o) => o === 'fail' || o === 'error' || o === 'missing'));

if (disagreed.length || bad.length) {
  console.log('\nchecks whose verdict differs between runs, or that failed or erred in any run:');
  for (const r of [...new Set([...disagreed, ...bad])]) {
    console.log(`  ${r.agreed}/${runs} ${r.verdict.padEnd(11)} ${r.id}`);
    r.per.forEach((c, i) => {
      if (c?.outcome !== r.verdict || c.outcome === 'fail' || c.outcome === 'error')
        console.log(`      run ${i + 1}: ${c?.outcome ?? 'missing'}${c?.message ? `: ${short(c.message)}` : ''}`);
    });
  }
}
// Agreeing, but judging nothing: a timing check this runner is too slow for at these limits.
const inconclusive = rows.filter((r) => r.same && r.per.every((c) => c?.outcome === 'skip' && (c.message ?? '').startsWith('inconclusive on this run')));
if (inconclusive.length) {
  console.log('\ntiming checks inconclusive in every run (this runner is too slow for them at these limits; they judged nothing):');
  for (const r of inconclusive) console.log(`  ${r.id}: ${short(r.per[0]?.message ?? '')}`);
}
console.log(`\nper check (runs that agreed / ${runs}, verdict):`);
for (const r of rows) console.log(`  ${r.agreed}/${runs} ${r.verdict.padEnd(11)} ${r.id}`);

const totals = outcomeCounts(results.flatMap((r) => [...r.checks.values()]));
const summary = {
  runs,
  load,
  checks: ids.length,
  disagreed: disagreed.length,
  inconclusive_everywhere: inconclusive.length,
  fail: totals.fail ?? 0,
  error: totals.error ?? 0,
  wall_s: Number(wallS.toFixed(1)),
  run_wall_s: results.map((r) => Number((r.wallMs / 1000).toFixed(1))),
  token_reissues: results.map((r) => r.tokenReissues),
  limits: Object.fromEntries(Object.entries(limits).map(([k, v]) => [k, Number(v)])),
};
console.log(
  `\nagreed on ${ids.length - disagreed.length}/${ids.length} checks; ${summary.fail} fail and ${summary.error} error in all runs together; ${wallS.toFixed(1)} s wall`,
);
console.log(JSON.stringify(summary));
process.exitCode = disagreed.length || summary.fail || summary.error || results.some((r) => r.checks.size === 0) ? 1 : 0;
