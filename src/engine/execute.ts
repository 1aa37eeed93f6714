/**
 * Runs one check and turns what happened into a CheckResult. The outcome is
 * decided by the outcome policy (src/engine/outcome.ts, docs/outcome-policy.md):
 * CheckFailure -> fail, SkipSignal -> skip, anything else -> error; a persistent
 * 5xx is a fail while the target answers normally elsewhere, an error when it
 * is down; observation checks never fail.
 */
import { CheckFailure, ConformanceError } from '../errors.js';
import type { HttpResponse, RequestOptions } from '../http/types.js';
import type { ModelOperation } from '../discovery/model.js';
import { excludedBy, type CheckDefinition } from './check.js';
import { CheckRecorder, throwSkip, type CheckContext } from './context.js';
import { controlPath, decideOutcome, normalElsewhere, type Ending, type Health } from './outcome.js';
import type { Runtime } from './runtime.js';
import type { CheckResult, Exchange, Finding } from './types.js';

export interface ExecuteOptions {
  /** The check's time budget: past it the check ends as `error` and its context refuses further work. */
  timeoutMs?: number;
}

export async function executeCheck(check: CheckDefinition, rt: Runtime, opts: ExecuteOptions = {}): Promise<CheckResult> {
  const recorder = new CheckRecorder();
  const startedAt = new Date();
  const t0 = performance.now();
  const unplannedBefore = rt.http.stats.unplanned429;
  let ending: Ending = { kind: 'completed' };

  const excluded = excludedBy(rt.spec.profile, check);
  try {
    if (excluded) throwSkip(excluded);
    const missing = (check.fixtures ?? []).filter((k) => !rt.config.fixtures[k]);
    if (missing.length) throwSkip(`fixture${missing.length > 1 ? 's' : ''} not provided: ${missing.join(', ')}`);
    const roles = (check.clients ?? []).filter((r) => !rt.config.clients.some((c) => c.role === r));
    if (roles.length) throwSkip(`no client with role ${roles.join(', ')} in the config`);
    const ctx = createContext(check, rt, recorder);
    await withinBudget(opts.timeoutMs, recorder, () => rt.als.run({ recorder }, () => check.run(ctx)));
  } catch (e) {
    ending = { kind: 'thrown', error: e };
  }

  const decided = await decideOutcome(
    { level: check.level, ending, findings: recorder.findings, observations: recorder.observations, evidence: recorder.evidence },
    {
      unjudgeable: (id) => rt.http.unjudgeableAnswer(id),
      health: (besides) => targetHealth(rt, besides),
      discoveryProblem: rt.spec.model.problems[0],
    },
  );
  for (const x of decided.extraEvidence) recorder.addExchange(x);
  const primary = decided.findings[0];
  return {
    id: check.id,
    title: check.title,
    area: check.area,
    requirements: check.requirements,
    level: check.level,
    outcome: decided.outcome,
    message: decided.message,
    expected: primary?.expected,
    actual: primary?.actual,
    findings: decided.findings,
    observations: decided.observations,
    evidence: recorder.evidence,
    curl: curlFor(primary, recorder),
    startedAt: startedAt.toISOString(),
    durationMs: Math.round(performance.now() - t0),
    created: recorder.created,
    stats: { requests: recorder.requests, unplanned429: rt.http.stats.unplanned429 - unplannedBefore },
  };
}

/**
 * Whether the target answers normally apart from the exchanges that kept
 * answering 5xx: another path of the service answered below 500 since they
 * started, else a control request sent now (the service's first control path,
 * e.g. its CapabilityStatement, or the next when that is what failed; no retry) does.
 */
async function targetHealth(rt: Runtime, besides: readonly Exchange[]): Promise<Health> {
  const { service } = rt.spec;
  const seen = normalElsewhere(rt.recentAnswers, besides, service.isServicePath);
  if (seen) return { normal: true, how: `${seen.method} ${seen.path} answered ${seen.status} meanwhile` };
  const url = controlPath(besides, service.controlPaths);
  try {
    const res = await rt.http.request({ url, headers: { accept: url.endsWith('metadata') ? 'application/fhir+json' : 'application/json' }, retry: 'none', skipInvariants: true });
    return { normal: res.status < 500, how: `control request GET ${url} answered ${res.status}`, control: res.exchange };
  } catch (e) {
    return { normal: false, how: `control request GET ${url} failed: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/**
 * Runs `fn` within the check's budget. Past it the recorder is closed (the context
 * refuses further requests and waits, so the abandoned run stops at its next step)
 * and the check ends with ERR_TIMEOUT.
 */
async function withinBudget(timeoutMs: number | undefined, recorder: CheckRecorder, fn: () => Promise<void>): Promise<void> {
  if (timeoutMs === undefined) return fn();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      recorder.closed = `the check did not finish within its time budget of ${Math.round(timeoutMs / 1000)} s`;
      reject(new ConformanceError('ERR_TIMEOUT', recorder.closed));
    }, timeoutMs);
    timer.unref();
  });
  const run = fn();
  run.catch(() => undefined); // an abandoned run's late rejection is not unhandled
  try {
    await Promise.race([run, expired]);
  } finally {
    clearTimeout(timer);
  }
}

function curlFor(primary: Finding | undefined, r: CheckRecorder): string | undefined {
  const ex = (primary?.exchange && r.evidence.find((x) => x.id === primary.exchange)) || r.evidence[r.evidence.length - 1];
  return ex?.curl;
}

function createContext(check: CheckDefinition, rt: Runtime, recorder: CheckRecorder): CheckContext {
  const config = rt.config;
  /** A check past its budget sends nothing more. */
  const open = () => {
    if (recorder.closed) throw new ConformanceError('ERR_TIMEOUT', recorder.closed);
  };
  const ctx: CheckContext = {
    definition: check,
    config,
    model: rt.spec.model,
    profile: rt.spec.profile,
    runId: rt.spec.runId,
    limits: config.limits,
    tokens: rt.tokens,
    shared: rt.shared,
    fixture(key) {
      const v = config.fixtures[key];
      if (!v) throwSkip(`fixture not provided: ${key}`);
      return v;
    },
    hasFixture: (key) => Boolean(config.fixtures[key]),
    client(role = 'main') {
      const c = config.clients.find((x) => x.role === role);
      if (!c) throwSkip(`no client with role ${role} in the config`);
      return c;
    },
    token: (scopes, role = 'main') => (open(), rt.tokens.token(role, scopes)),
    request: (opts: RequestOptions) => (open(), rt.http.request(opts)),
    async fhir(opts): Promise<HttpResponse> {
      open();
      const { scopes, role = 'main', ...rest } = opts;
      ctx.client(role);
      return rt.http.request({
        ...rest,
        // Taken when the request leaves (after pacing, holds and back-off), never before a wait.
        token: () => rt.tokens.token(role, scopes),
        client: role,
        headers: { accept: 'application/fhir+json', ...(rest.headers ?? {}) },
      });
    },
    findOperation: (resource, interaction, release) => findOperation(rt, resource, interaction, release),
    operation(resource, interaction, release) {
      const op = findOperation(rt, resource, interaction, release);
      if (!op) {
        const what = `${release ?? ''}${release ? ' ' : ''}${resource} ${interaction} operation`;
        const failure = discoveryFailure(rt, release);
        if (failure) throw new ConformanceError('ERR_DISCOVERY', `no ${what} known: ${failure}`);
        throwSkip(`the target publishes no ${what}`);
      }
      return op;
    },
    path(template, params = {}) {
      return template.replace(/\{(\w+)\}/g, (_m, k: string) => {
        const v = params[k];
        if (v === undefined) throw new ConformanceError('ERR_INTERNAL', `path parameter ${k} missing for ${template}`);
        return encodeURIComponent(v);
      });
    },
    observe(key, value, note) {
      recorder.observations.push(note === undefined ? { key, value } : { key, value, note });
    },
    check(condition, message, details = {}) {
      if (!condition) recorder.findings.push({ message, ...details });
      return condition;
    },
    fail(message, details = {}): never {
      throw new CheckFailure(message, details);
    },
    skip: (reason) => throwSkip(reason),
    created(resourceType, id, url) {
      recorder.created.push({
        resourceType,
        id,
        url: url ?? resourceUrl(rt, resourceType, id),
        createdBy: check.id,
        at: new Date().toISOString(),
      });
    },
    validate: (release, resource) => rt.validator.validate(release, resource),
    sleep: (ms) => (open(), rt.sleep(ms)),
    attach: (ex) => recorder.addExchange(ex),
    run: { exchangesSeen: () => rt.exchangesSeen, invariant: (id) => rt.tally(id), keyRequests: (role) => rt.keyRequests(role) },
    waiting: (reason, ms) => rt.onWait({ reason, ms }),
  };
  return ctx;
}

/**
 * Why an operation may be missing through no choice of the target: discovery
 * found no operation of the release at all and recorded a problem.
 */
function discoveryFailure(rt: Runtime, release?: 'R4' | 'R5'): string | undefined {
  const { operations, problems } = rt.spec.model;
  if (!problems.length || operations.some((o) => release === undefined || o.release === release)) return undefined;
  return `discovery failed (${problems[0]})`;
}

function findOperation(
  rt: Runtime,
  resource: string,
  interaction: ModelOperation['interaction'],
  release?: 'R4' | 'R5',
): ModelOperation | undefined {
  return rt.spec.model.operations.find(
    (o) => o.resource === resource && o.interaction === interaction && (release === undefined || o.release === release),
  );
}

/** The read URL of a resource, from the target's published read operation (R4 before R5). */
function resourceUrl(rt: Runtime, resourceType: string, id: string): string {
  const read = findOperation(rt, resourceType, 'read', 'R4') ?? findOperation(rt, resourceType, 'read');
  const path = read ? read.path.replace('{id}', encodeURIComponent(id)) : rt.spec.service.resourcePath(resourceType, id);
  return `${rt.config.baseUrl.replace(/\/$/, '')}${path}`;
}
