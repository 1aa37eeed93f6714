/**
 * fhir-conformance command line. Exit codes: 0 no check failed, 1 a check
 * failed (or `diff` found a regression), 2 usage or config error, 3 errors kept
 * checks from a verdict and none failed.
 */
import { parseArgs } from 'node:util';
import { ConformanceError, describeError } from './errors.js';
import { PROFILES, type Profile } from './engine/types.js';
import { redactString } from './redact.js';

const USAGE = `usage: fhir-conformance <command> [options]

commands:
  run [--config FILE] [--profile quick|full|certification|read-only] [--report-dir DIR] [--keep N] [--only PATTERN] [--redact-phi]
      [--fault NAME]... [--mode KEY=VALUE]... [--limit KEY=VALUE]... [--requirements ID,ID] [--quiet]
        run the suites against the target in FILE, or against the embedded reference when no --config is given
        (--fault, --mode and --limit apply to the embedded reference only); --keep N keeps the N newest run
        directories under the report dir (default 10, 0 keeps all)
  serve [--port N] [--fault NAME]... [--mode KEY=VALUE]...
        run the embedded reference server on its own and print a ready-to-use target config
  requirements            print the requirements coverage matrix
  report <report.json> [--format html|junit|md|json] [--out FILE]
        re-render a report
  diff <old.json> <new.json>
        list regressions, fixes, new and removed checks; exit 1 on any regression
  faults [--json]         list the reference server's fault catalog
  init --base-url URL [--out DIR]
        generate a key pair and a config skeleton for a target
`;

type Out = { out: (s: string) => void; err: (s: string) => void };
const std: Out = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) };

export async function main(argv: string[], io: Out = std): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'run':
        return await cmdRun(rest, io);
      case 'serve':
        return await cmdServe(rest, io);
      case 'requirements':
        return await cmdRequirements(io);
      case 'report':
        return await cmdReport(rest, io);
      case 'diff':
        return await cmdDiff(rest, io);
      case 'faults':
        return await cmdFaults(rest, io);
      case 'init':
        return await cmdInit(rest, io);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.out(USAGE);
        return command === undefined ? 2 : 0;
      default:
        io.err(`unknown command "${command}"\n\n${USAGE}`);
        return 2;
    }
  } catch (e) {
    if (e instanceof ConformanceError && (e.code === 'ERR_CONFIG_INVALID' || e.code === 'ERR_USAGE')) {
      io.err(`${redactString(e.message)}${e.field ? `\n  field: ${e.field}` : ''}${e.fix ? `\n  fix: ${e.fix}` : ''}\n`);
      return 2;
    }
    io.err(`fhir-conformance: ${redactString(describeError(e))}\n`);
    return 3;
  }
}

function parse(args: string[], options: NonNullable<NonNullable<Parameters<typeof parseArgs>[0]>['options']>, positionals = false) {
  try {
    return parseArgs({ args, options, allowPositionals: positionals, strict: true });
  } catch (e) {
    throw new ConformanceError('ERR_USAGE', `${describeError(e)}\n\n${USAGE}`);
  }
}

function profileOf(v: unknown): Profile | undefined {
  if (v === undefined) return undefined;
  if (!PROFILES.includes(v as Profile)) throw new ConformanceError('ERR_USAGE', `--profile must be one of ${PROFILES.join(', ')}`, { field: 'profile' });
  return v as Profile;
}

async function cmdRun(args: string[], io: Out): Promise<number> {
  const { values } = parse(args, {
    config: { type: 'string' },
    profile: { type: 'string' },
    'report-dir': { type: 'string' },
    keep: { type: 'string' },
    only: { type: 'string' },
    'redact-phi': { type: 'boolean' },
    quiet: { type: 'boolean' },
    fault: { type: 'string', multiple: true },
    mode: { type: 'string', multiple: true },
    requirements: { type: 'string' },
    limit: { type: 'string', multiple: true },
  });
  const faults = values.fault as string[] | undefined;
  const modes = parseModes(values.mode as string[] | undefined);
  const limits = parseModes(values.limit as string[] | undefined);
  const configPath = values.config as string | undefined;
  const keep = keepOf(values.keep);
  if (configPath && (faults?.length || Object.keys(modes).length || Object.keys(limits).length))
    throw new ConformanceError('ERR_USAGE', '--fault, --mode and --limit apply to the embedded reference; drop --config to use them');
  const { runConformance } = await import('./run/index.js');
  const reportsRoot = (values['report-dir'] as string | undefined) ?? 'reports';
  const { exitCode, reportDir } = await runConformance(
    {
      configPath,
      profile: profileOf(values.profile),
      reportsRoot,
      only: values.only as string | undefined,
      requirements: (values.requirements as string | undefined)?.split(',').map((r) => r.trim()).filter(Boolean),
      redactPhi: values['redact-phi'] as boolean | undefined,
      progress: !values.quiet,
      reference: { faults, modes, limits },
      handleSignals: true,
    },
    (line) => io.err(`${line}\n`),
  );
  if (reportDir) {
    const { pruneReports, DEFAULT_KEEP } = await import('./report/index.js');
    try {
      await pruneReports(reportsRoot, keep ?? DEFAULT_KEEP, reportDir);
    } catch (e) {
      io.err(`could not remove old reports under ${reportsRoot}: ${describeError(e)}\n`);
    }
  }
  return exitCode;
}

/** `--keep N`: how many run directories to keep under the report dir (0: all; default DEFAULT_KEEP). */
function keepOf(v: unknown): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^\d+$/.test(v)) throw new ConformanceError('ERR_USAGE', `--keep takes a whole number (0 keeps every run), got "${String(v)}"`, { field: 'keep' });
  return Number(v);
}

async function cmdServe(args: string[], io: Out): Promise<number> {
  const { values } = parse(args, {
    port: { type: 'string' },
    host: { type: 'string' },
    fault: { type: 'string', multiple: true },
    mode: { type: 'string', multiple: true },
  });
  const port = values.port === undefined ? 4780 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConformanceError('ERR_USAGE', '--port must be an integer from 0 to 65535', { field: 'port' });
  const modes = parseModes(values.mode as string[] | undefined);
  const { serve } = await import('./reference/index.js');
  const server = await serve({
    port,
    host: values.host as string | undefined,
    faults: values.fault as string[] | undefined,
    modes,
    print: (line) => io.out(`${line}\n`),
  });
  await new Promise<void>((resolveStop) => {
    const stop = () => resolveStop();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  return 0;
}

/** `--mode KEY=VALUE` flags for the embedded reference's alternative-conformant modes. */
function parseModes(flags: string[] | undefined): Record<string, string | number | boolean> {
  const modes: Record<string, string | number | boolean> = {};
  for (const m of flags ?? []) {
    const [k, v] = m.split('=', 2);
    if (!k || v === undefined) throw new ConformanceError('ERR_USAGE', `--mode takes KEY=VALUE, got "${m}"`, { field: 'mode' });
    modes[k] = /^\d+$/.test(v) ? Number(v) : v === 'true' ? true : v === 'false' ? false : v;
  }
  return modes;
}

async function cmdRequirements(io: Out): Promise<number> {
  const { loadRequirements, coverage, renderCoverageMatrix } = await import('./requirements/index.js');
  const { referenceCatalog } = await import('./run/reference-model.js');
  const reqs = loadRequirements();
  const report = coverage(reqs, await referenceCatalog());
  io.out(`${renderCoverageMatrix(reqs, report, { color: process.stdout.isTTY })}\n`);
  return report.uncovered.length || report.unknownRefs.length ? 1 : 0;
}

async function cmdReport(args: string[], io: Out): Promise<number> {
  const { values, positionals } = parse(args, { format: { type: 'string' }, out: { type: 'string' } }, true);
  const file = positionals[0];
  if (!file) throw new ConformanceError('ERR_USAGE', 'report needs a report.json path');
  const format = (values.format as string | undefined) ?? 'html';
  const r = await import('./report/index.js');
  const doc = await r.readReport(file);
  const renderers: Record<string, () => string> = {
    html: () => r.renderHtml(doc),
    junit: () => r.renderJunit(doc),
    md: () => r.renderMarkdown(doc),
    json: () => r.renderJson(doc),
  };
  const render = renderers[format];
  if (!render) throw new ConformanceError('ERR_USAGE', `--format must be one of ${Object.keys(renderers).join(', ')}`, { field: 'format' });
  const text = render();
  if (values.out) {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(values.out as string, text);
  } else io.out(text.endsWith('\n') ? text : `${text}\n`);
  return 0;
}

async function cmdDiff(args: string[], io: Out): Promise<number> {
  const { positionals } = parse(args, {}, true);
  if (positionals.length !== 2) throw new ConformanceError('ERR_USAGE', 'diff needs two report.json paths: <old> <new>');
  const r = await import('./report/index.js');
  const [a, b] = await Promise.all([r.readReport(positionals[0]!), r.readReport(positionals[1]!)]);
  const d = r.diffReports(a, b);
  io.out(`${r.renderDiff(d)}\n`);
  return d.regressed.length || d.requirements.regressed.length ? 1 : 0;
}

async function cmdFaults(args: string[], io: Out): Promise<number> {
  const { values } = parse(args, { json: { type: 'boolean' } });
  const { FAULTS } = await import('./reference/faults/index.js');
  if (values.json) {
    io.out(`${JSON.stringify(FAULTS.map(({ name, area, violates, symptom }) => ({ name, area, violates, symptom })), null, 2)}\n`);
    return 0;
  }
  const width = Math.max(...FAULTS.map((f) => f.name.length), 4);
  io.out(`${FAULTS.length} faults\n\n`);
  for (const f of FAULTS) io.out(`${f.name.padEnd(width)}  ${f.area.padEnd(18)}  ${f.symptom}\n${' '.repeat(width + 2)}violates: ${f.violates.join(', ')}\n`);
  return 0;
}

async function cmdInit(args: string[], io: Out): Promise<number> {
  const { values } = parse(args, { 'base-url': { type: 'string' }, out: { type: 'string' } });
  const baseUrl = values['base-url'] as string | undefined;
  if (!baseUrl) throw new ConformanceError('ERR_USAGE', 'init needs --base-url URL', { field: 'base-url' });
  const { initConfig } = await import('./config/init.js');
  const r = await initConfig({ baseUrl, outDir: (values.out as string | undefined) ?? '.' });
  io.out(`wrote ${r.configPath}\nwrote ${r.keyPath} (private key: keep it out of version control)\n\n`);
  io.out(`register this public key set for your client:\n${JSON.stringify(r.publicJwks, null, 2)}\n\n`);
  if (r.missing.length) io.out(`still missing:\n${r.missing.map((m) => `  - ${m}`).join('\n')}\n`);
  return 0;
}
