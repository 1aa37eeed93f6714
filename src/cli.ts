/**
 * fhir-conformance command line (commander). Exit codes: 0 no check failed, 1 a check
 * failed (or `diff` found a regression), 2 usage, config or set-up problem (the message
 * says what to fix), 3 the target could not be reached, or errors kept checks from a
 * verdict and none failed.
 */
import { Command, CommanderError, Option } from 'commander';
import { ConformanceError, describeError } from './errors.js';
import { PROFILES, type Profile } from './engine/types.js';
import { redactString } from './redact.js';
import { TOOL_VERSION } from './version.js';

type Out = { out: (s: string) => void; err: (s: string) => void };
const std: Out = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) };

/** Error codes that mean "fix how you called it or what you gave it": exit 2. */
const USAGE_CODES = new Set(['ERR_CONFIG_INVALID', 'ERR_USAGE', 'ERR_REPORT', 'ERR_KEY']);

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

const examples = (lines: string[]): string => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;

export async function main(argv: string[], io: Out = std): Promise<number> {
  let exitCode = 0;
  const program = buildProgram(io, (code) => (exitCode = code));
  if (argv.length === 0) {
    program.outputHelp({ error: true });
    return 2;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (e) {
    if (e instanceof CommanderError) return e.code === 'commander.helpDisplayed' || e.code === 'commander.version' ? 0 : 2;
    return reportError(e, io);
  }
}

/** One readable message for a failure, no stack and no internal error names; returns the exit code. */
function reportError(e: unknown, io: Out): number {
  if (e instanceof ConformanceError) {
    io.err(`error: ${redactString(e.message)}${e.field ? `\n  field: ${e.field}` : ''}${e.fix ? `\n  fix: ${e.fix}` : ''}\n`);
    return USAGE_CODES.has(e.code) ? 2 : 3;
  }
  const sys = e as NodeJS.ErrnoException;
  if (typeof sys?.code === 'string' && typeof sys.path === 'string') {
    // A file the user named cannot be read or written.
    const what =
      {
        ENOENT: 'no such file or directory',
        EACCES: 'permission denied',
        EISDIR: 'is a directory',
        ENOTDIR: 'a parent is not a directory',
        EEXIST: 'already exists',
      }[sys.code] ?? sys.code;
    io.err(`error: cannot ${sys.syscall ?? 'use'} ${sys.path}: ${what}\n  fix: check the path and its folder\n`);
    return 2;
  }
  const message = e instanceof Error ? e.message : String(e);
  io.err(`error: ${redactString(message.split('\n')[0] ?? '')}\n  (an internal error of fhir-conformance; please report it with the command you ran)\n`);
  return 3;
}

function buildProgram(io: Out, setExit: (code: number) => void): Command {
  const program = new Command('fhir-conformance')
    .description('Conformance suite for the Clinical Records FHIR Service: run it against a target, or against the embedded reference.')
    .version(TOOL_VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help for a command')
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .showSuggestionAfterError(true)
    .showHelpAfterError('(add --help for usage and examples)')
    .exitOverride()
    .addHelpText(
      'after',
      `\nExit codes: 0 no check failed · 1 a check failed (diff: a regression) · 2 usage, config or set-up problem · 3 target unreachable, or errors kept checks from a verdict\n` +
        examples([
          'fhir-conformance run --profile quick                       # against the embedded reference',
          'fhir-conformance init --base-url https://staging.example.com --out ./conformance',
          'fhir-conformance run --config ./conformance/target.json',
          'fhir-conformance help run',
        ]),
    );

  // ---- run ----------------------------------------------------------------
  program
    .command('run')
    .description('run the suites against the target in --config, or against the embedded reference when no --config is given')
    .option('-c, --config <file>', 'target config (JSON); see docs/config.md')
    .addOption(new Option('-p, --profile <profile>', 'which checks run').choices(PROFILES))
    .option('--report-dir <dir>', 'where reports go (each run in <dir>/<run-id>, <dir>/latest points at it)', 'reports')
    .option('--keep <n>', 'keep the N newest run directories under the report dir (0 keeps all)', '10')
    .option('--only <pattern>', 'only checks whose id or title matches this regular expression')
    .option('--requirements <ids>', 'only checks verifying these requirement ids (comma separated)')
    .option('--redact-phi', 'mask patient identifiers and CURPs in the reports')
    .option('-q, --quiet', 'no progress: only the verdict line and the report path')
    .option('--fault <name>', 'embedded reference only: plant this fault (repeatable; see `faults`)', collect)
    .option('--mode <key=value>', 'embedded reference only: an alternative-conformant choice (repeatable)', collect)
    .option('--limit <key=value>', 'embedded reference only: a reference limit (repeatable)', collect)
    .addOption(
      new Option(
        '--transport <transport>',
        'embedded reference only: reach it over its HTTP socket, or call its request handler in this process (default: in-process for a quick run without --fault, else http)',
      ).choices(['http', 'in-process']),
    )
    .addHelpText(
      'after',
      `${examples([
        'fhir-conformance run --profile quick',
        'fhir-conformance run --config target.json --profile full --report-dir out',
        'fhir-conformance run --config target.json --only "^pagination\\." --quiet',
        'fhir-conformance run --config target.json --requirements auth.client-credentials,auth.token-grant-type',
        'fhir-conformance run --fault no-correlation-id --quiet     # a faulty reference: exit 1',
      ])}\nA filter that selects no check, an unknown requirement id or an invalid pattern exits 2; so does a set-up problem the preflight finds.\n`,
    )
    .action(async (opts: RunFlags) => setExit(await cmdRun(opts, io)));

  // ---- serve --------------------------------------------------------------
  program
    .command('serve')
    .description('run the embedded reference server on its own and print a ready-to-use target config')
    .option('--port <n>', 'port to listen on (0 picks a free one)', '4780')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .addOption(
      new Option('--limits <preset>', "rate windows and token lifetime: the spec's, or the short ones `npm start` uses")
        .choices(['spec', 'short'])
        .default('spec'),
    )
    .option('--client <id=jwks>', 'register a client: its id and public key set (a JWKS file, e.g. from init, or an http(s) URL); repeatable', collect)
    .option('--client-scopes <scopes>', "scopes of the --client clients (space or comma separated; default: the fixture clients')")
    .option('--client-org <org>', 'organization of the --client clients (org-a or org-b)', 'org-a')
    .option('--clients <file>', 'register the clients of this file ({ "clients": [ { "clientId", "jwks" | "jwksFile" | "jwksUri", ... } ] })')
    .option('--config-out <file>', 'also write the printed target config to this file')
    .option('--fault <name>', 'plant this fault (repeatable; see `faults`)', collect)
    .option('--mode <key=value>', 'an alternative-conformant choice (repeatable)', collect)
    .option('--tls', 'serve HTTPS with a CA and server certificate generated at start (paths printed; the config gets tls.ca)')
    .option('--mtls', 'like --tls, and require a client certificate signed by the same CA (generated too; the config gets tls.cert and tls.key)')
    .option('--tls-dir <dir>', 'where --tls/--mtls write the certificates and keys (default: a new temporary directory)')
    .addHelpText(
      'after',
      examples([
        "fhir-conformance serve                                        # 127.0.0.1:4780, the spec's limits",
        'fhir-conformance serve --limits short --config-out target.json   # then: run --config target.json',
        'fhir-conformance serve --client my-client=conformance/keys/main.public.jwks.json',
        'fhir-conformance serve --fault no-correlation-id',
        'fhir-conformance serve --mtls --limits short --config-out target.json   # HTTPS with client certificates',
      ]),
    )
    .action(async (opts: ServeFlags) => setExit(await cmdServe(opts, io)));

  // ---- requirements -------------------------------------------------------
  program
    .command('requirements')
    .description(
      'print the requirements coverage matrix, then each requirement with its level and the checks that verify it (exit 1 when a testable requirement has no check)',
    )
    .addHelpText(
      'after',
      examples([
        'fhir-conformance requirements',
        'fhir-conformance requirements | grep pagination.   # the pagination requirements and their checks',
        'fhir-conformance run --requirements pagination.next-absent-on-last-page --profile full',
      ]),
    )
    .action(async () => setExit(await cmdRequirements(io)));

  // ---- report -------------------------------------------------------------
  program
    .command('report')
    .description('re-render a report.json as html, junit, md or json, to a file next to it (or --out FILE, or --stdout)')
    .argument('<report.json>', 'a report.json written by `run`')
    .addOption(new Option('-f, --format <format>', 'output format').choices(['html', 'junit', 'md', 'json']).default('html'))
    .option('-o, --out <file>', 'write here (default: report.html, junit.xml or summary.md next to the report.json)')
    .option('--stdout', 'write to standard output instead of a file')
    .addHelpText(
      'after',
      examples(['fhir-conformance report reports/latest/report.json', 'fhir-conformance report reports/latest/report.json --format md --stdout']),
    )
    .action(async (file: string, opts: ReportFlags) => setExit(await cmdReport(file, opts, io)));

  // ---- diff ---------------------------------------------------------------
  program
    .command('diff')
    .description('list regressions, fixes, new and removed checks between two reports; exit 1 on any regression')
    .argument('<old.json>', 'the earlier report.json')
    .argument('<new.json>', 'the later report.json')
    .addHelpText('after', examples(['fhir-conformance diff last/report.json reports/latest/report.json']))
    .action(async (a: string, b: string) => setExit(await cmdDiff(a, b, io)));

  // ---- faults -------------------------------------------------------------
  program
    .command('faults')
    .description("list the reference server's fault catalog: each fault's area, the requirements it violates and the checks it must fail")
    .option('--json', 'as JSON')
    .addHelpText(
      'after',
      examples([
        'fhir-conformance faults',
        'fhir-conformance faults --json',
        'fhir-conformance serve --fault no-correlation-id     # the reference with that one violation',
        'fhir-conformance run --fault no-correlation-id --quiet   # the suite against it: exit 1',
      ]),
    )
    .action(async (opts: { json?: boolean }) => setExit(await cmdFaults(opts, io)));

  // ---- init ---------------------------------------------------------------
  program
    .command('init')
    .description('generate a key pair and a config skeleton for a target')
    .requiredOption('--base-url <url>', "the target's base URL")
    .option('--out <dir>', 'where to write target.json and keys/', '.')
    .option(
      '--alg <alg>',
      "the key's signing algorithm: RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512 or EdDSA (Ed25519); default ES384, or the first the target lists when it lacks ES384",
    )
    .addHelpText(
      'after',
      examples([
        'fhir-conformance init --base-url https://staging.example.com --out ./conformance',
        'fhir-conformance init --base-url http://127.0.0.1:4780 --out ./local     # against `serve`',
        'fhir-conformance init --base-url https://staging.example.com --alg PS256 --out ./conformance',
      ]),
    )
    .action(async (opts: { baseUrl: string; out: string; alg?: string }) => setExit(await cmdInit(opts, io)));

  return program;
}

// ---- commands -------------------------------------------------------------

interface RunFlags {
  config?: string;
  profile?: Profile;
  reportDir: string;
  keep: string;
  only?: string;
  requirements?: string;
  redactPhi?: boolean;
  quiet?: boolean;
  fault?: string[];
  mode?: string[];
  limit?: string[];
  transport?: 'http' | 'in-process';
}

async function cmdRun(opts: RunFlags, io: Out): Promise<number> {
  const modes = parseKeyValues(opts.mode, '--mode');
  const limits = parseKeyValues(opts.limit, '--limit');
  if (opts.config && (opts.fault?.length || Object.keys(modes).length || Object.keys(limits).length))
    throw new ConformanceError('ERR_USAGE', '--fault, --mode and --limit apply to the embedded reference', {
      fix: 'drop --config to use them, or drop them to run against your target',
    });
  if (opts.config && opts.transport === 'in-process')
    throw new ConformanceError('ERR_USAGE', '--transport in-process applies to the embedded reference: a target of --config is reached over the network', {
      fix: 'drop --transport, or drop --config to run against the embedded reference',
    });
  // The quick run's embedded reference is reached in-process (README "Speed"); a planted fault goes over
  // HTTP, as the fault catalog's proofs do.
  const transport = opts.transport ?? (opts.profile === 'quick' && !opts.fault?.length ? 'in-process' : 'http');
  const keep = keepOf(opts.keep);
  const { runConformance } = await import('./run/index.js');
  const { exitCode, reportDir } = await runConformance(
    {
      configPath: opts.config,
      profile: opts.profile,
      reportsRoot: opts.reportDir,
      only: opts.only,
      requirements: opts.requirements
        ?.split(',')
        .map((r) => r.trim())
        .filter(Boolean),
      redactPhi: opts.redactPhi,
      progress: !opts.quiet,
      liveProgress: io === std && process.stderr.isTTY === true && (process.stderr.columns ?? 0) > 0 && !process.env.CI,
      verdict: true,
      reference: { faults: opts.fault, modes, limits },
      ...(opts.config ? {} : { transport }),
      handleSignals: true,
    },
    (line) => io.err(`${line}\n`),
  );
  if (reportDir) {
    const { pruneReports } = await import('./report/index.js');
    try {
      await pruneReports(opts.reportDir, keep, reportDir);
    } catch (e) {
      io.err(`could not remove old reports under ${opts.reportDir}: ${describeError(e)}\n`);
    }
  }
  return exitCode;
}

/** `--keep N`: how many run directories to keep under the report dir (0: all). */
function keepOf(v: string): number {
  if (!/^\d+$/.test(v)) throw new ConformanceError('ERR_USAGE', `--keep takes a whole number (0 keeps every run), got "${v}"`, { field: 'keep' });
  return Number(v);
}

interface ServeFlags {
  port: string;
  host: string;
  limits: 'spec' | 'short';
  client?: string[];
  clientScopes?: string;
  clientOrg: string;
  clients?: string;
  configOut?: string;
  fault?: string[];
  mode?: string[];
  tls?: boolean;
  mtls?: boolean;
  tlsDir?: string;
}

/** `serve --tls`/`--mtls`: the generated CA, server (and client) certificates, printed, and the config's `tls` block. */
async function servePki(opts: ServeFlags, io: Out) {
  const { generateTestPki, tlsConfigBlock } = await import('./reference/tls.js');
  const { mkdtemp } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const mtls = opts.mtls === true;
  const dir = opts.tlsDir ?? (await mkdtemp(join(tmpdir(), 'fhir-conformance-tls-')));
  const pki = await generateTestPki(dir, { host: opts.host, client: mtls });
  io.out(`TLS: CA certificate ${pki.files.ca} (trust it: tls.ca in the target config, or curl --cacert)\n`);
  io.out(`TLS: server certificate ${pki.files.serverCert}, key ${pki.files.serverKey}\n`);
  if (mtls) io.out(`TLS: client certificates required; client certificate ${pki.files.clientCert}, key ${pki.files.clientKey}\n`);
  const curlArgs = `--cacert ${pki.files.ca}${mtls ? ` --cert ${pki.files.clientCert} --key ${pki.files.clientKey}` : ''}`;
  return {
    block: tlsConfigBlock(pki),
    server: { cert: pki.serverCert, key: pki.serverKey, ca: pki.ca, requestCert: mtls },
    curlArgs,
  };
}

async function cmdServe(opts: ServeFlags, io: Out): Promise<number> {
  const port = Number(opts.port);
  if (!/^\d+$/.test(opts.port) || port > 65535)
    throw new ConformanceError('ERR_USAGE', `--port must be an integer from 0 to 65535, got "${opts.port}"`, { field: 'port' });
  const modes = parseKeyValues(opts.mode, '--mode');
  const { serve } = await import('./reference/index.js');
  const { parseClientFlag, loadClientsFile } = await import('./reference/clients.js');
  const { EMBEDDED_LIMITS, embeddedTargetConfig } = await import('./run/embedded.js');
  const { resolveFaults } = await import('./reference/faults/index.js');
  const { resolveModes } = await import('./reference/types.js');
  const usage = <T>(fn: () => Promise<T> | T) =>
    Promise.resolve()
      .then(fn)
      .catch((e: unknown) => {
        throw new ConformanceError('ERR_USAGE', e instanceof Error ? e.message : String(e));
      });
  await usage(() => {
    resolveFaults(opts.fault ?? []);
    resolveModes(modes);
  });
  const scopes = opts.clientScopes?.split(/[\s,]+/).filter(Boolean);
  const defaults = { org: opts.clientOrg, ...(scopes?.length ? { scopes } : {}) };
  const extraClients = await usage(async () => [
    ...(await Promise.all((opts.client ?? []).map((f) => parseClientFlag(f, defaults)))),
    ...(opts.clients ? await loadClientsFile(opts.clients) : []),
  ]);
  const limits = opts.limits === 'short' ? EMBEDDED_LIMITS : {};
  const pki = opts.tls || opts.mtls || opts.tlsDir ? await servePki(opts, io) : undefined;
  let server: Awaited<ReturnType<typeof serve>>;
  try {
    server = await serve({
      port,
      host: opts.host,
      faults: opts.fault,
      modes,
      limits,
      extraClients,
      targetConfig: (s) => ({ ...embeddedTargetConfig(s, limits), ...(pki ? { tls: pki.block } : {}) }),
      ...(pki ? { tls: pki.server, curlArgs: pki.curlArgs } : {}),
      ...(opts.configOut ? { configOut: opts.configOut } : {}),
      print: (line) => io.out(`${line}\n`),
    });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new ConformanceError('ERR_USAGE', `port ${port} on ${opts.host} is already in use (another \`serve\`?)`, {
        field: 'port',
        fix: 'stop the other server, or pick another port with --port N (--port 0 picks a free one)',
      });
    if (code === 'EACCES' || code === 'EADDRNOTAVAIL')
      throw new ConformanceError('ERR_USAGE', `cannot listen on ${opts.host}:${port} (${code})`, {
        field: 'port',
        fix: 'use a port above 1023 and an address of this machine',
      });
    if (e instanceof Error && /client|clients\.json/.test(e.message)) throw new ConformanceError('ERR_USAGE', e.message);
    throw e;
  }
  await new Promise<void>((resolveStop) => {
    const stop = () => resolveStop();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  return 0;
}

/** `KEY=VALUE` flags (--mode, --limit): numbers and booleans typed. */
export function parseKeyValues(flags: string[] | undefined, name: string): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const m of flags ?? []) {
    const eq = m.indexOf('=');
    const k = eq === -1 ? '' : m.slice(0, eq);
    const v = eq === -1 ? undefined : m.slice(eq + 1);
    if (!k || v === undefined) throw new ConformanceError('ERR_USAGE', `${name} takes KEY=VALUE, got "${m}"`, { field: name.slice(2) });
    out[k] = /^\d+$/.test(v) ? Number(v) : v === 'true' ? true : v === 'false' ? false : v;
  }
  return out;
}

async function cmdRequirements(io: Out): Promise<number> {
  const { loadRequirements, coverage, renderCoverageMatrix } = await import('./requirements/index.js');
  const { referenceCatalog } = await import('./run/reference-model.js');
  const reqs = loadRequirements();
  const report = coverage(reqs, await referenceCatalog());
  io.out(`${renderCoverageMatrix(reqs, report, { color: io === std && process.stdout.isTTY === true })}\n`);
  return report.uncovered.length || report.unknownRefs.length ? 1 : 0;
}

interface ReportFlags {
  format: 'html' | 'junit' | 'md' | 'json';
  out?: string;
  stdout?: boolean;
}

/** The file `run` writes for each format, next to report.json. */
const RUN_FILE: Record<ReportFlags['format'], string | undefined> = { html: 'report.html', junit: 'junit.xml', md: 'summary.md', json: undefined };

async function cmdReport(file: string, opts: ReportFlags, io: Out): Promise<number> {
  if (opts.out && opts.stdout) throw new ConformanceError('ERR_USAGE', '--out and --stdout exclude each other');
  const { dirname, join, resolve } = await import('node:path');
  const target = opts.stdout ? undefined : (opts.out ?? (RUN_FILE[opts.format] ? join(dirname(file), RUN_FILE[opts.format]!) : undefined));
  if (!opts.stdout && target === undefined)
    throw new ConformanceError('ERR_USAGE', '--format json would overwrite the report.json it reads', { fix: 'pass --out FILE or --stdout' });
  if (target && resolve(target) === resolve(file))
    throw new ConformanceError('ERR_USAGE', `--out ${target} is the report being read`, { fix: 'pass another --out FILE, or --stdout' });
  const r = await import('./report/index.js');
  const doc = await r.readReport(file);
  const render: Record<ReportFlags['format'], () => string> = {
    html: () => r.renderHtml(doc),
    junit: () => r.renderJunit(doc),
    md: () => r.renderMarkdown(doc),
    json: () => JSON.stringify(doc, null, 2),
  };
  const text = render[opts.format]();
  const body = text.endsWith('\n') ? text : `${text}\n`;
  if (!target) {
    io.out(body);
    return 0;
  }
  const { writeFile } = await import('node:fs/promises');
  await writeFile(target, body);
  io.out(`wrote ${target}\n`);
  return 0;
}

async function cmdDiff(a: string, b: string, io: Out): Promise<number> {
  const r = await import('./report/index.js');
  // One after the other: an error names the first report that cannot be read, whatever the timing.
  const before = await r.readReport(a);
  const after = await r.readReport(b);
  const d = r.diffReports(before, after);
  io.out(`${r.renderDiff(d)}\n`);
  return d.regressed.length || d.requirements.regressed.length ? 1 : 0;
}

async function cmdFaults(opts: { json?: boolean }, io: Out): Promise<number> {
  const { FAULTS } = await import('./reference/faults/index.js');
  if (opts.json) {
    io.out(
      `${JSON.stringify(
        FAULTS.map(({ name, area, violates, checks, symptom, modes }) => ({
          name,
          area,
          violates,
          checks: checks ?? [],
          symptom,
          ...(modes ? { modes } : {}),
        })),
        null,
        2,
      )}\n`,
    );
    return 0;
  }
  const width = Math.max(...FAULTS.map((f) => f.name.length), 4);
  io.out(`${FAULTS.length} faults\n\n`);
  const pad = ' '.repeat(width + 2);
  for (const f of FAULTS)
    io.out(
      `${f.name.padEnd(width)}  ${f.area.padEnd(18)}  ${f.symptom}\n${pad}violates: ${f.violates.join(', ')}\n${pad}must fail: ${(f.checks ?? []).join(', ')}\n${
        f.modes
          ? `${pad}planted under: ${Object.entries(f.modes)
              .map(([k, v]) => `${k}=${v}`)
              .join(', ')}\n`
          : ''
      }`,
    );
  return 0;
}

async function cmdInit(opts: { baseUrl: string; out: string; alg?: string }, io: Out): Promise<number> {
  const { initConfig, CLIENT_ID_PLACEHOLDER } = await import('./config/init.js');
  const { isAbsolute, relative } = await import('node:path');
  const r = await initConfig({ baseUrl: opts.baseUrl, outDir: opts.out, ...(opts.alg !== undefined ? { alg: opts.alg } : {}) });
  // Paths as the user would type them: relative below the working directory, absolute elsewhere.
  const rel = (p: string) => {
    const r = relative(process.cwd(), p);
    return r && !r.startsWith('..') && !isAbsolute(r) ? r : p;
  };
  io.out(
    `wrote ${rel(r.configPath)}\nwrote ${rel(r.keyPath)} (private key, ${r.alg}: ${r.algReason}; keep it out of version control)\nwrote ${rel(r.publicJwksPath)} (public key set)\n\n`,
  );
  io.out(`register this public key set for your client with the target:\n${JSON.stringify(r.publicJwks, null, 2)}\n\n`);
  if (r.missing.length) io.out(`still missing:\n${r.missing.map((m) => `  - ${m}`).join('\n')}\n\n`);
  io.out(
    'next:\n' +
      `  1. register ${rel(r.publicJwksPath)} with the target; put the client id it assigns in place of "${CLIENT_ID_PLACEHOLDER}" in ${rel(r.configPath)}\n` +
      `     (against the local reference: fhir-conformance serve --client YOUR-ID=${rel(r.publicJwksPath)})\n` +
      `  2. fhir-conformance run --config ${rel(r.configPath)} --profile quick\n`,
  );
  return 0;
}
