/**
 * The one run path. The CLI, the embedded run, the mutation runner and the project
 * tests all come through `runConformance`:
 *   config resolved once (a file, or the embedded reference's) -> the target discovered
 *   once -> the checks collected and selected -> one runtime -> the executor runs them
 *   in schedule order (src/engine/plan.ts) -> reports.
 * Everything that watches the run (progress, the result collector, the pacing figures,
 * the run-wide rules, the report writer, callers' own subscribers) subscribes to its events.
 */
import { loadConfig, networkOf, redactedConfig, resolveConfig, type ResolvedConfig } from '../config/index.js';
import { discover, operationMatcher, type OperationModel } from '../discovery/index.js';
import { sharedFhirValidator } from '../fhir/index.js';
import { HttpClient } from '../http/client.js';
import { clientKey } from '../auth/broker.js';
import { publicJwks, serveJwks, type JwksServer } from '../auth/jwks.js';
import { collectChecks, materialize, type ChecksExport } from '../engine/catalog.js';
import { RunEvents, plannedCheck, type Subscriber } from '../engine/events.js';
import { executePlan } from '../engine/executor.js';
import { preflight, renderPreflight } from '../engine/preflight.js';
import { buildRunResult, requirementVerdicts, type RunRecord } from './result.js';
import { SERVICE_BINDING, SERVICE_HTTP, judgeExchanges } from '../service/index.js';
import { LANE_TOKEN_RESERVE, requestBudget, selectGate, spreadTokenChecks, tokenOnlyRequests, type GateInput } from '../engine/budget.js';
import { Runtime } from '../engine/runtime.js';
import { pacingCollector } from '../engine/pacing-collector.js';
import { timelineCollector } from '../engine/timeline-collector.js';
import { excludedBy, type CheckDefinition } from '../engine/check.js';
import { planChecks, slotOf, type CatalogCheck, type Slot } from '../engine/plan.js';
import type { CheckResult, LeftToFull, Profile, RunResult } from '../engine/types.js';
import { ConformanceError, describeError } from '../errors.js';
import { PROJECT_ROOT } from '../paths.js';
import type { ReferenceServer } from '../reference/index.js';
import { resolveFaults } from '../reference/faults/index.js';
import { DEFAULT_MODES, resolveLimits, resolveModes, type ReferenceOptions } from '../reference/types.js';
import { writeReports } from '../report/index.js';
import { embeddedLimits, QUICK_LIMITS, startEmbeddedTarget } from './embedded.js';
import { closingLines, liveProgress, progressLines, summaryLines } from './progress.js';
import { checkClientIds, discoveryBearer, probeTarget, probeTokens, SetupStop, type DiscoveryBearer } from './preflight.js';
import { didYouMean, literalOf } from './suggest.js';
import { settleSigningAlgs } from './signing-algs.js';
import { loadRequirements } from '../requirements/index.js';
import { registerSecret, unregisterSecret } from '../redact.js';

export interface RunOptions {
  /** Target config file; absent = the embedded reference. */
  configPath?: string;
  profile?: Profile;
  /** Root directory for reports (default `reports`). */
  reportsRoot?: string;
  /** Only checks whose id or title matches this pattern. */
  only?: string | RegExp;
  /** Only checks that name one of these requirement ids. */
  requirements?: readonly string[];
  /** Also these checks, by id, whatever the other filters say. */
  ids?: readonly string[];
  /** These checks instead of the suites' catalog (project tests). */
  checks?: ChecksExport;
  /**
   * Embedded reference only: target config members laid over its generated config (e.g.
   * `documentReference` declarations), or a function of the generated config (e.g. without a client).
   */
  configOverlay?: Record<string, unknown> | ((raw: Record<string, unknown>) => Record<string, unknown>);
  redactPhi?: boolean;
  /** Options for the embedded reference (faults, modes, limits). */
  reference?: ReferenceOptions;
  /** Progress lines on stderr (default true). */
  progress?: boolean;
  /** Progress as one live status line (a terminal) instead of plain lines (default false). */
  liveProgress?: boolean;
  /** The closing lines: a setup problem, where the reports are, the verdict (default: as `progress`). */
  verdict?: boolean;
  /** Write the report files (default true). */
  writeReports?: boolean;
  /**
   * How the run reaches the embedded reference (no config file): over its HTTP socket (default), or
   * `in-process`, calling its request handler directly (src/http/in-process.ts; the CLI's default for
   * a quick run without --fault). Ignored for a target of a config file.
   */
  transport?: 'http' | 'in-process';
  /** The run's deadline from its start, ms (default: the config's `timeouts.runMs`). */
  deadlineMs?: number;
  /** Ctrl-C / SIGTERM end the run with a partial report (the CLI). */
  handleSignals?: boolean;
  /** Cancels the run from the caller's side: the checks stop, a partial result (and report) marked interrupted. */
  signal?: AbortSignal;
  /** Extra subscribers of the run's events. */
  subscribers?: readonly Subscriber[];
  /** Embedded reference only: called with the reference once it listens (benchmarks read what its windows counted). */
  onReference?: (server: ReferenceServer) => void;
}

export interface RunOutcome {
  exitCode: number;
  result: RunResult;
  /** The checks' results in run order. */
  results: CheckResult[];
  reportDir?: string;
  setupError?: string;
}

/** The runs in progress that hear of a rejection nothing handled (one process listener for all: in-process runs go side by side). */
const unhandledListeners = new Set<(e: unknown) => void>();
const onProcessUnhandled = (e: unknown) => {
  for (const l of unhandledListeners) l(e);
};

function listenUnhandled(listener: (e: unknown) => void): () => void {
  if (unhandledListeners.size === 0) process.on('unhandledRejection', onProcessUnhandled);
  unhandledListeners.add(listener);
  return () => {
    unhandledListeners.delete(listener);
    if (unhandledListeners.size === 0) process.removeListener('unhandledRejection', onProcessUnhandled);
  };
}

/** What the run resolved before any check: the target and how to reach it. */
interface Target {
  config: ResolvedConfig;
  server?: ReferenceServer;
  /** The suite's hosted client key set (embedded runs, and configs with `jwksHosting`). */
  jwks?: JwksServer;
  embedded: boolean;
}

const INTERRUPT_GRACE_MS = 1500;

export async function runConformance(options: RunOptions, out: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<RunOutcome> {
  checkReferenceOptions(options);
  const only = onlyPattern(options.only);
  // An empty list beside explicit check ids selects exactly those checks (the mutation runner's form).
  if (!(options.requirements?.length === 0 && options.ids?.length)) checkRequirementIds(options.requirements);
  const startedAt = new Date();
  const record: RunRecord = {
    runId: newRunId(startedAt),
    startedAt: startedAt.toISOString(),
    profile: options.profile ?? 'full',
    embedded: !options.configPath,
    deviations: [],
    results: [],
    interrupted: false,
  };
  const events = new RunEvents();
  const progress = options.progress !== false;
  const live = progress && options.liveProgress ? await liveProgress() : undefined;
  if (live) events.subscribe(live.subscriber);
  else if (progress) events.subscribe(progressLines(out));
  const say = (line: string) => (live ? live.print(line) : out(line));
  for (const s of options.subscribers ?? []) events.subscribe(s);
  events.on('check-finished', (e) => void record.results.push(e.result));
  const pacing = pacingCollector();
  events.subscribe(pacing.subscriber);

  const target = await resolveTarget(options);
  let runtime: Runtime | undefined;
  let leftToFull: LeftToFull[] | undefined;
  /** Requests of discovery and the preflight (their own HTTP clients). */
  const setupRequests = { count: 0 };
  let jwks: JwksServer | undefined;
  let hardStop: NodeJS.Timeout | undefined;
  let reportDir: string | undefined;
  /** Writes the report files of a result once (the run-finished subscriber, or an interrupt's hard stop). */
  let reportError: unknown;
  const writeOnce = async (result: RunResult): Promise<void> => {
    if (options.writeReports === false || reportDir) return;
    try {
      reportDir = (
        await writeReports(result, {
          reportsRoot: options.reportsRoot ?? 'reports',
          runDirName: record.runId,
          redactPhi: options.redactPhi ?? target.config.redactPhi,
        })
      ).dir;
    } catch (e) {
      reportError = e;
    }
  };
  // The report writer subscribes to the end of the run.
  events.on('run-finished', (e) => writeOnce(e.result));
  const write = async (): Promise<RunResult> => {
    const result = buildRunResult(record);
    await writeOnce(result);
    if (reportError) throw reportError;
    return result;
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (record.interrupted) return;
    record.interrupted = true;
    say(`${signal}: stopping; a partial report is written`);
    runtime?.interrupt();
    // A run that does not wind down within the grace period is cut: the partial report, then exit.
    hardStop = setTimeout(
      () =>
        void write().then(
          (r) => process.exit(r.info.exitCode ?? 3),
          () => process.exit(3),
        ),
      INTERRUPT_GRACE_MS,
    );
  };
  if (options.handleSignals) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  // A rejection nothing handles is a bug of ours: without a listener Node ends the process with exit 1,
  // which says "a check failed". The run goes on and ends in error instead (exit 3 unless a check failed).
  const onUnhandled = (e: unknown) => {
    record.setupError ??= `internal error (a bug of the suite, not the target's): ${describeError(e)}`;
  };
  const stopListening = listenUnhandled(onUnhandled);
  const onAbort = () => {
    record.interrupted = true;
    runtime?.interrupt();
  };
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });

  try {
    let config = target.config;
    record.profile = config.profile;
    record.baseUrl = config.baseUrl;
    record.redactedConfig = redactedConfig(config);
    record.deviations = config.deviations;
    // The run's deadline covers discovery too.
    const deadline = Date.now() + (options.deadlineMs ?? config.timeouts.runMs);
    // Can the run work at all? (A target of ours, the embedded reference, is known to answer.)
    if (!target.embedded) {
      checkClientIds(config);
      const line = await probeTarget(config, { deadline, counter: setupRequests });
      if (progress) say(`preflight: ${line}`);
    }
    // Each client's signing algorithm, against the target's published list (before any assertion is signed).
    const settled = await settleSigningAlgs(config, { deadline, counter: setupRequests });
    config = settled.config;
    record.redactedConfig = redactedConfig(config);
    if (progress && !target.embedded) say(`preflight: ${settled.line}`);
    // Targets that fetch client keys from a URL get them from the suite itself (before discovery: it may need a token).
    jwks = target.jwks ?? (config.jwksHosting ? await serveJwks(config.jwksHosting, publicJwks(config.clients)) : undefined);
    jwks?.setKeys(publicJwks(config.clients));
    // The key-set control URL carries its secret: redacted wherever it appears until the run's reports are written.
    if (jwks) registerSecret(jwks.control.url);
    const discoveryAuth: { bearer?: DiscoveryBearer } = {};
    const model = await discoverTarget(config, deadline, record, setupRequests, discoveryAuth);
    record.model = model;

    const catalog = options.checks ? materialize(options.checks, model) : await collectChecks(model);
    const checks = selectChecks(catalog, options, only);
    // A filter that selects nothing is a typo, not a green run.
    if (checks.length === 0 && (only || options.requirements)) throw nothingSelected(options, model, catalog);
    // A filter whose every check the profile leaves out would judge nothing and look green.
    if ((only || options.requirements) && checks.every((c) => excludedBy(config.profile, c))) throw excludedByProfile(config.profile, checks);
    if (progress) for (const line of renderPreflight(preflight(checks, config))) say(`preflight: ${line}`);

    // The run-wide rules (the invariants, the FHIR-body rule) judge every exchange of the runtime, into its tally.
    const keyLimits = new Map(config.clients.map((c) => [clientKey(config.clients, c), c.rateLimitPerMinute]));
    judgeExchanges(
      events,
      {
        windowSec: config.limits.windowSec,
        validator: sharedFhirValidator(),
        keyLimit: (client) => keyLimits.get(client),
        publishedOperation: operationMatcher(model.operations),
        versionedTypes: new Set(model.operations.map((o) => o.resource)),
      },
      (ex, findings) => runtime?.tallyFindings(ex, findings),
    );
    // The gate: the cheapest checks that need no waiting and judge every MUST requirement such checks judge (src/engine/budget.ts).
    const gate = config.profile === 'gate' ? selectGate(checks, gateInput(config)) : undefined;
    // The run timeline of the report: the requests, waits and tokens of the run's HTTP client.
    const timeline = timelineCollector({
      startedAt: startedAt.getTime(),
      keys: config.clients.map((c) => ({ role: c.role, ceiling: c.rateLimitPerMinute })),
      windowSec: config.limits.windowSec,
      issuancePerWindow: config.limits.tokenIssuancePerMinute,
      tokenLifetimeSec: config.limits.tokenLifetimeSec,
      isTokenEndpoint: (url) => runtime?.isTokenEndpoint(url) ?? false,
      retryAfterMs: (headers) => SERVICE_HTTP.retryAfterMs?.(headers),
    });
    events.subscribe(timeline.subscriber);
    // The same object grows as the run goes: a report written on an interrupt has the timeline so far.
    record.timeline = timeline.timeline();
    runtime = await Runtime.create(
      {
        runId: record.runId,
        profile: config.profile,
        config,
        embedded: target.embedded,
        model,
        deadline,
        startedAt: record.startedAt,
        service: SERVICE_BINDING,
        ...(jwks ? { jwksControl: jwks.control } : {}),
        ...(gate ? { exclusions: gate.excluded } : {}),
      },
      events,
    );
    // An interrupt before the runtime existed stops it at once.
    if (record.interrupted) runtime.interrupt();
    leftToFull = gate?.leftToFull;
    // A token discovery needed (protected documents) is the run's: no second token request for it.
    const discoveryToken = discoveryAuth.bearer?.issued();
    if (discoveryToken) runtime.tokens.adopt('main', discoveryToken.scopes, discoveryToken.res, { sentElsewhere: true });
    if (!target.embedded) {
      const line = await probeTokens(runtime, { startedAt: startedAt.getTime() });
      if (progress) say(`preflight: ${line}`);
    }
    // Checks that only talk to the token endpoint are spread through the paced slot (src/engine/budget.ts).
    const arrange = <T extends CheckDefinition>(slot: Slot, cs: T[]): T[] =>
      slot === 'paced'
        ? spreadTokenChecks(cs, {
            keyCeiling: config.clients.find((c) => c.role === 'main')?.rateLimitPerMinute ?? 60,
            issuancePerWindow: config.limits.tokenIssuancePerMinute,
            reserved: target.embedded ? 0 : config.clients.length,
            runs: (c) => !excludedBy(config.profile, c) && !gate?.excluded.has(c.id),
          })
        : cs;
    const planned = planChecks(checks, arrange).map((c) => plannedCheck(c, slotOf(c)));
    events.emit({ type: 'run-started', runId: record.runId, profile: config.profile, baseUrl: config.baseUrl, embedded: target.embedded, planned });
    // ...and moved within it as the limits are met: queued while the issuance window is full, run while the main key waits.
    const rt = runtime;
    const lane = {
      tokensOf: (c: CheckDefinition) => tokenOnlyRequests(c),
      room: () => rt.tokens.issuanceRoom(),
      mainWaitMs: () => rt.http.keyLoad('main').waitMs,
      reserve: LANE_TOKEN_RESERVE,
    };
    await executePlan(checks, runtime, events, { arrange, lane });
    if (config.profile === 'certification') record.pacing = pacing.figures(Date.now() - startedAt.getTime());
  } catch (e) {
    if (e instanceof ConformanceError && e.code === 'ERR_USAGE') throw e;
    if (e instanceof SetupStop) {
      record.setupError = e.message;
      record.setupExitCode = e.exitCode;
    } else record.setupError ??= describeError(e);
  } finally {
    live?.stop();
    if (options.handleSignals) {
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
    }
    options.signal?.removeEventListener('abort', onAbort);
    await runtime?.close();
    // Let rejections of work the run started settle before the listener goes.
    await new Promise((r) => setImmediate(r));
    stopListening();
    await (jwks ?? target.jwks)?.close();
    await target.server?.close();
  }
  clearTimeout(hardStop);
  const stats = runtime?.runStats();
  if (runtime) {
    const rt = runtime;
    record.budget = requestBudget({
      profile: record.profile,
      results: record.results,
      requirements: requirementVerdicts(record.results),
      episodeRequests: rt.episodeRequests(),
      requests: rt.http.stats.requests + setupRequests.count,
      tokenRequests: rt.tokenRequests,
      keys: rt.keysUsed(),
      ...(leftToFull ? { leftToFull } : {}),
    });
  }
  const result = buildRunResult(record);
  await events.emitAsync({
    type: 'run-finished',
    results: record.results,
    ...(stats ? { stats } : {}),
    interrupted: record.interrupted,
    ...(record.setupError ? { setupError: record.setupError } : {}),
    result,
  });
  // The run's own secret (its key-set control URL) is in no report and no result but redacted: forgotten
  // once the reports are written, so a process of many runs does not match text against every earlier one's.
  if (jwks) unregisterSecret(jwks.control.url);
  // A report that could not be written is the run's failure, not a subscriber's.
  if (reportError) throw reportError;
  if (progress && !(record.setupError && record.results.length === 0)) for (const line of summaryLines(result)) out(line);
  if (options.verdict ?? progress) for (const line of closingLines(result, reportDir, record.setupError)) out(line);
  for (const e of events.drainErrors()) out(`internal: a run subscriber failed: ${describeError(e)}`);
  return {
    exitCode: result.info.exitCode ?? 3,
    result,
    results: record.results,
    ...(reportDir ? { reportDir } : {}),
    ...(record.setupError ? { setupError: record.setupError } : {}),
  };
}

/** Bad --fault/--mode/--limit values are usage errors, found before anything starts. */
function checkReferenceOptions(options: RunOptions): void {
  try {
    resolveModes(options.reference?.modes);
    resolveLimits(options.reference?.limits);
    resolveFaults(options.reference?.faults ?? []);
  } catch (e) {
    throw new ConformanceError('ERR_USAGE', describeError(e));
  }
}

function onlyPattern(only: string | RegExp | undefined): RegExp | undefined {
  if (only === undefined || only instanceof RegExp) return only;
  try {
    return new RegExp(only);
  } catch (e) {
    throw new ConformanceError('ERR_USAGE', `--only is not a valid regular expression: ${(e as Error).message}`, {
      field: 'only',
      fix: 'pass a JavaScript regular expression over check ids and titles, e.g. --only "^pagination\\."',
    });
  }
}

/** `--requirements` ids must be catalog ids: a typo in a CI gate must not pass the build. */
function checkRequirementIds(ids: readonly string[] | undefined): void {
  if (ids === undefined) return;
  if (ids.length === 0)
    throw new ConformanceError('ERR_USAGE', '--requirements names no requirement id', {
      field: 'requirements',
      fix: 'pass ids from suites/requirements.json, comma separated (list them with `fhir-conformance requirements`)',
    });
  const known = loadRequirements().map((r) => r.id);
  const unknown = ids.filter((id) => !known.includes(id));
  if (unknown.length === 0) return;
  throw new ConformanceError(
    'ERR_USAGE',
    `unknown requirement id${unknown.length > 1 ? 's' : ''}: ${unknown.map((id) => `"${id}"${didYouMean(id, known)}`).join(', ')}`,
    { field: 'requirements', fix: 'use ids from suites/requirements.json (list them with `fhir-conformance requirements`)' },
  );
}

/** The filters selected checks, but the profile runs none of them. */
function excludedByProfile(profile: Profile, checks: readonly CheckDefinition[]): ConformanceError {
  const reason = excludedBy(profile, checks[0]!) ?? `excluded by the ${profile} profile`;
  const n = checks.length;
  return new ConformanceError(
    'ERR_USAGE',
    `nothing to run: the ${n} selected check${n > 1 ? 's are' : ' is'} not run by the ${profile} profile (${reason}): ${checks
      .slice(0, 3)
      .map((c) => c.id)
      .join(', ')}${n > 3 ? ', ...' : ''}`,
    { field: 'profile', fix: '--profile full runs every check (certification too); or widen --only/--requirements' },
  );
}

/** The filters selected no check: say which filter, and what was near. */
function nothingSelected(options: RunOptions, model: OperationModel, all: readonly (CheckDefinition | CatalogCheck)[]): ConformanceError {
  const parts: string[] = [];
  const ids = all.map((c) => c.id);
  const areas = [...new Set(all.map((c) => c.area))];
  if (options.only !== undefined) {
    const source = typeof options.only === 'string' ? options.only : options.only.source;
    const literal = literalOf(source);
    const re = options.only instanceof RegExp ? options.only : new RegExp(source);
    const matchesAlone = all.some((c) => re.test(c.id) || re.test(c.title));
    parts.push(
      matchesAlone
        ? `--only "${source}" matches checks, but none of them verifies the requirements asked for`
        : `--only "${source}" matches no check id or title${literal ? didYouMean(literal, [...ids, ...areas]) : ''}`,
    );
  }
  if (options.requirements) {
    const byId = new Map(loadRequirements().map((r) => [r.id, r]));
    const uncovered = options.requirements.filter((id) => !all.some((c) => c.requirements.includes(id)));
    for (const id of uncovered) {
      const r = byId.get(id);
      parts.push(`requirement ${id} has no check${r && !r.testable ? ` (not testable: ${r.reason ?? 'no reason given'})` : ''}`);
    }
    if (uncovered.length === 0 && options.only === undefined) parts.push('--requirements selects no check');
  }
  const discoveryFailed = model.operations.length === 0 && model.problems.length > 0;
  return new ConformanceError(
    'ERR_USAGE',
    `nothing to run: ${parts.join('; ')}${discoveryFailed ? ` (note: the target's discovery failed, so the checks generated from its OpenAPI document are missing: ${model.problems[0]})` : ''}`,
    {
      field: options.only !== undefined ? 'only' : 'requirements',
      fix:
        options.only !== undefined
          ? 'check ids look like area.slug (e.g. "^pagination\\." or "discovery.metadata"); list requirement ids with `fhir-conformance requirements`'
          : 'pick requirement ids that checks verify: `fhir-conformance requirements` lists each with its checks',
    },
  );
}

/** The config, resolved once: from the file, or from the embedded reference started here. */
async function resolveTarget(options: RunOptions): Promise<Target> {
  if (options.configPath) {
    const config = await loadConfig(options.configPath, options.profile ? { profile: options.profile } : {});
    return { config, embedded: false };
  }
  const profile = options.profile ?? 'full';
  // Everyday runs use short windows (declared in the generated config); certification the spec's defaults.
  const limits = profile === 'certification' ? {} : embeddedLimits({ ...(profile === 'quick' ? QUICK_LIMITS : {}), ...options.reference?.limits });
  const { server, jwks, rawConfig } = await startEmbeddedTarget({ ...options.reference, host: '127.0.0.1', port: 0 }, limits);
  options.onReference?.(server);
  try {
    const overlay = options.configOverlay;
    // Quick runs declare the reference's document maximum (QUICK_LIMITS): the size checks then send a
    // document of exactly that size and one a byte larger each way, not a 32 MiB probe.
    const declared = profile === 'quick' ? { ...rawConfig, documentReference: { maxBytes: server.options.limits.documentMaxBytes } } : rawConfig;
    const config = await resolveConfig(
      typeof overlay === 'function' ? overlay(declared as Record<string, unknown>) : { ...declared, ...overlay },
      PROJECT_ROOT,
      { profile },
    );
    // The report says what the reference was made to do: its planted faults, the choices it was run with (a fault's among them).
    const planted = [
      ...server.options.faults.map((f) => `embedded reference with fault ${f} planted`),
      ...Object.entries(server.options.modes)
        .filter(([k, v]) => (DEFAULT_MODES as unknown as Record<string, unknown>)[k] !== v)
        .map(([k, v]) => `embedded reference in mode ${k}=${String(v)}`),
    ];
    const stated = planted.length ? { ...config, deviations: [...config.deviations, ...planted] } : config;
    // The reference answered in this process (`--transport in-process`): its handler, no socket.
    const inProcess = options.transport === 'in-process' && !server.url.startsWith('https:') ? server.inProcess : undefined;
    return { config: inProcess ? { ...stated, inProcess } : stated, server, jwks, embedded: true };
  } catch (e) {
    await server.close();
    await jwks.close();
    throw e;
  }
}

/** The target's operation model from what it publishes; a failure is recorded and the run goes on with what it has. */
async function discoverTarget(
  config: ResolvedConfig,
  deadline: number,
  record: RunRecord,
  counter: { count: number },
  auth?: { bearer?: DiscoveryBearer },
): Promise<OperationModel> {
  const http = new HttpClient({ baseUrl: config.baseUrl, timeoutMs: config.timeouts.requestMs, deadline, protocol: SERVICE_HTTP, network: networkOf(config) });
  // Documents whose authentication is "not stated" may be protected: read them with the main client's bearer then.
  const bearer = discoveryBearer(config, http);
  if (auth) auth.bearer = bearer;
  try {
    return await discover(http, { bearer: bearer.bearer });
  } catch (e) {
    record.setupError = `discovery failed: ${describeError(e)}`;
    return { operations: [], divergences: [], problems: [record.setupError], hashes: {} };
  } finally {
    counter.count += http.stats.requests;
    await http.close();
  }
}

/** What the gate's selection needs to know of the config and the catalog. */
function gateInput(config: ResolvedConfig): GateInput {
  return {
    fixtures: new Set(Object.keys(config.fixtures).filter((k) => config.fixtures[k])),
    roles: new Set(config.clients.map((c) => c.role)),
    levels: new Map(loadRequirements().map((r) => [r.id, r.level])),
  };
}

/** The checks the options select (--only, --requirements, ids). */
function selectChecks(all: readonly (CheckDefinition | CatalogCheck)[], options: RunOptions, only: RegExp | undefined): Array<CheckDefinition | CatalogCheck> {
  const wanted = options.requirements;
  return all.filter(
    (c) => options.ids?.includes(c.id) || ((!only || only.test(c.id) || only.test(c.title)) && (!wanted || c.requirements.some((r) => wanted.includes(r)))),
  );
}

export function newRunId(startedAt: Date): string {
  const stamp = startedAt
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  // The millisecond first: runs started within one second still sort in the order they started (run
  // --keep keeps the newest by name); four random characters tell apart runs of the same millisecond.
  const ms = String(startedAt.getUTCMilliseconds()).padStart(3, '0');
  return `${stamp}-${ms}${Math.random().toString(36).slice(2, 6).padEnd(4, '0')}`;
}
