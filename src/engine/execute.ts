/**
 * Runs one check and turns what happened into a CheckResult. Outcomes follow
 * from error types: CheckFailure -> fail, SkipSignal -> skip, anything else ->
 * error (never counted against the target).
 */
import { CheckFailure, ConformanceError, SkipSignal, describeError } from '../errors.js';
import type { HttpResponse, RequestOptions } from '../http/types.js';
import type { ModelOperation } from '../discovery/index.js';
import { excludedBy, type CheckDefinition } from './check.js';
import { CheckRecorder, failureFrom, throwSkip, type CheckContext } from './context.js';
import type { Runtime } from './runtime.js';
import type { CheckResult, Exchange, Finding, Outcome } from './types.js';

export async function executeCheck(check: CheckDefinition, rt: Runtime): Promise<CheckResult> {
  const recorder = new CheckRecorder();
  const startedAt = new Date();
  const t0 = performance.now();
  const unplannedBefore = rt.http.stats.unplanned429;
  let outcome: Outcome;
  let message: string | undefined;

  const excluded = excludedBy(rt.spec.profile, check);
  try {
    if (excluded) throwSkip(excluded);
    const missing = (check.fixtures ?? []).filter((k) => !rt.config.fixtures[k]);
    if (missing.length) throwSkip(`fixture${missing.length > 1 ? 's' : ''} not provided: ${missing.join(', ')}`);
    const roles = (check.clients ?? []).filter((r) => !rt.config.clients.some((c) => c.role === r));
    if (roles.length) throwSkip(`no client with role ${roles.join(', ')} in the config`);
    const ctx = createContext(check, rt, recorder);
    await rt.als.run({ recorder }, () => check.run(ctx));
    if (recorder.findings.length) {
      outcome = 'fail';
      message = recorder.findings.map((f) => f.message).join('; ');
    } else {
      outcome = check.level === 'observation' ? 'observation' : 'pass';
      if (outcome === 'observation') message = recorder.observations.map((o) => `${o.key} = ${short(o.value)}`).join('; ') || undefined;
    }
  } catch (e) {
    if (e instanceof CheckFailure) {
      recorder.findings.push(failureFrom(e));
      outcome = check.level === 'observation' ? 'error' : 'fail';
      message = recorder.findings.map((f) => f.message).join('; ');
      if (check.level === 'observation') message = `observation check asserted: ${message}`;
    } else if (e instanceof SkipSignal) {
      outcome = 'skip';
      message = e.reason;
    } else {
      outcome = 'error';
      message = describeError(e);
      // A run that spent its time in discovery: say what discovery met.
      const problem = rt.spec.model.problems[0];
      if (e instanceof ConformanceError && e.code === 'ERR_DEADLINE' && problem) message += ` (discovery: ${problem})`;
    }
  }

  const unjudgeable = outcome === 'fail' ? noVerdictReason(recorder.evidence, rt) : undefined;
  if (unjudgeable) {
    outcome = 'error';
    message = `${unjudgeable}; no verdict (${message})`;
  }
  const primary = recorder.findings[0];
  return {
    id: check.id,
    title: check.title,
    area: check.area,
    requirements: check.requirements,
    level: check.level,
    outcome,
    message,
    expected: primary?.expected,
    actual: primary?.actual,
    findings: recorder.findings,
    observations: recorder.observations,
    evidence: recorder.evidence,
    curl: curlFor(primary, recorder),
    startedAt: startedAt.toISOString(),
    durationMs: Math.round(performance.now() - t0),
    created: recorder.created,
    stats: { requests: recorder.requests, unplanned429: rt.http.stats.unplanned429 - unplannedBefore },
  };
}

/**
 * Answers a failure must not be judged on, never counted against the target:
 * what the HTTP client flags (a 5xx that outlasted the spec's retries, a body
 * cut at the size cap) and a redirect (never followed: the bearer token must
 * not travel elsewhere; usually a wrong baseUrl).
 */
function noVerdictReason(evidence: readonly Exchange[], rt: Runtime): string | undefined {
  for (const x of evidence) {
    const flagged = rt.http.noVerdict(x.id);
    if (flagged) return flagged;
    const res = x.response;
    if (res && res.status >= 300 && res.status < 400 && res.headers.location !== undefined)
      return `the target redirected ${x.request.method} ${x.request.url} to ${res.headers.location} (redirects are not followed; check baseUrl)`;
  }
  return undefined;
}

function short(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s === undefined ? 'undefined' : s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

function curlFor(primary: Finding | undefined, r: CheckRecorder): string | undefined {
  const ex = (primary?.exchange && r.evidence.find((x) => x.id === primary.exchange)) || r.evidence[r.evidence.length - 1];
  return ex?.curl;
}

function createContext(check: CheckDefinition, rt: Runtime, recorder: CheckRecorder): CheckContext {
  const config = rt.config;
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
    token: (scopes, role = 'main') => rt.tokens.token(role, scopes),
    request: (opts: RequestOptions) => rt.http.request(opts),
    async fhir(opts): Promise<HttpResponse> {
      const { scopes, role = 'main', ...rest } = opts;
      ctx.client(role);
      const token = await rt.tokens.token(role, scopes);
      return rt.http.request({
        ...rest,
        token,
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
    sleep: (ms) => rt.sleep(ms),
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
  const path = read ? read.path.replace('{id}', encodeURIComponent(id)) : `/fhir/R4/${resourceType}/${encodeURIComponent(id)}`;
  return `${rt.config.baseUrl.replace(/\/$/, '')}${path}`;
}
