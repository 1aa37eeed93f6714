/**
 * Runs one check and turns what happened into a CheckResult. The outcome is
 * decided by the outcome policy (src/engine/outcome.ts, docs/outcome-policy.md):
 * CheckFailure -> fail, SkipSignal -> skip, anything else -> error; a persistent
 * 5xx is a fail while the target answers normally elsewhere, an error when it
 * is down; observation checks never fail.
 */
import { CheckFailure, ConformanceError, OpenChoiceSignal } from '../errors.js';
import type { HttpResponse, RequestOptions } from '../http/types.js';
import type { ModelOperation } from '../discovery/model.js';
import { excludedBy, type CheckDefinition } from './check.js';
import { CheckRecorder, throwSkip, type CheckContext } from './context.js';
import { controlPath, decideOutcome, normalElsewhere, type Ending, type Health } from './outcome.js';
import { spreadRoles, type Runtime } from './runtime.js';
import { type Slot, slotOf } from './plan.js';
import { shareKey } from './exchange-cache.js';
import { plannedRequests } from './budget.js';
import { DETACH_KEY } from './schedule.js';
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

  try {
    const skipped = whyNotRun(check, rt);
    if (skipped) throwSkip(skipped);
    const ctx = createContext(check, rt, recorder);
    await withinBudget(opts.timeoutMs, recorder, () => rt.scope.run({ recorder, area: check.area, check: check.id }, () => check.run(ctx)));
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
    stats: {
      requests: recorder.requests,
      tokenRequests: recorder.tokenRequests,
      mainKeyRequests: recorder.mainKeyRequests,
      shared: recorder.shared,
      sharedMainKey: recorder.sharedMainKey,
      planned: plannedRequests(check),
      unplanned429: rt.http.stats.unplanned429 - unplannedBefore,
    },
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
    const res = await rt.http.request({
      url,
      headers: { accept: url.endsWith('metadata') ? 'application/fhir+json' : 'application/json' },
      retry: 'none',
      skipInvariants: true,
    });
    return { normal: res.status < 500, how: `control request GET ${url} answered ${res.status}`, control: res.exchange };
  } catch (e) {
    return { normal: false, how: `control request GET ${url} failed: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/**
 * Runs `fn` within the check's budget. Past it the recorder is closed (the context
 * refuses further requests and waits, so the abandoned run stops at its next step)
 * and the check ends with ERR_TIMEOUT. The budget's clock stops while the check waits for
 * the run's own coordination (`recorder.budget.pauseFor`: a token request held while another
 * check has the token endpoint to itself), which says nothing of the target.
 */
async function withinBudget(timeoutMs: number | undefined, recorder: CheckRecorder, fn: () => Promise<void>): Promise<void> {
  if (timeoutMs === undefined) return fn();
  let timer: NodeJS.Timeout | undefined;
  let expire!: () => void;
  const expired = new Promise<never>((_resolve, reject) => {
    expire = () => {
      recorder.closed = `the check did not finish within its time budget of ${Math.round(timeoutMs / 1000)} s`;
      reject(new ConformanceError('ERR_TIMEOUT', recorder.closed));
    };
  });
  let remaining = timeoutMs;
  let since = 0;
  let pauses = 0;
  let settled = false;
  const arm = () => {
    since = performance.now();
    timer = setTimeout(expire, remaining);
    timer.unref();
  };
  recorder.budget = {
    pauseFor(wait) {
      if (recorder.closed) return;
      if (pauses++ === 0) {
        clearTimeout(timer);
        remaining = Math.max(0, remaining - (performance.now() - since));
      }
      const resume = () => {
        if (--pauses === 0 && !recorder.closed && !settled) arm();
      };
      wait.then(resume, resume);
    },
  };
  arm();
  const run = fn();
  run.catch(() => undefined); // an abandoned run's late rejection is not unhandled
  try {
    await Promise.race([run, expired]);
  } finally {
    settled = true;
    clearTimeout(timer);
    recorder.budget = undefined;
  }
}

function curlFor(primary: Finding | undefined, r: CheckRecorder): string | undefined {
  const ex = (primary?.exchange && r.evidence.find((x) => x.id === primary.exchange)) || r.evidence[r.evidence.length - 1];
  return ex?.curl;
}

/** Why the check does not run here (the profile or the run excludes it, a fixture or client role is missing), else undefined. */
export function whyNotRun(check: CheckDefinition, rt: Runtime): string | undefined {
  const excluded = excludedBy(rt.spec.profile, check) ?? rt.spec.exclusions?.get(check.id);
  if (excluded) return excluded;
  const missing = (check.fixtures ?? []).filter((k) => !rt.config.fixtures[k]);
  if (missing.length) return `fixture${missing.length > 1 ? 's' : ''} not provided: ${missing.join(', ')}`;
  const roles = (check.clients ?? []).filter((r) => !rt.config.clients.some((c) => c.role === r));
  if (roles.length) return `no client with role ${roles.join(', ')} in the config`;
  return undefined;
}

/**
 * Starts a check's early work (CheckDefinition.startEarly) with a context of the check, attributed
 * to it; returns the work's promise (never rejecting: the check meets any failure when it runs).
 */
export function startEarlyWork(check: CheckDefinition, rt: Runtime): Promise<unknown> {
  const recorder = new CheckRecorder();
  const ctx = createContext(check, rt, recorder);
  // Detached work of the check (schedule.ts, episode): its requests count for the check's area and pass the keys it owns.
  const detach = rt.shared.get(DETACH_KEY) as <T>(fn: () => Promise<T>) => Promise<T>;
  const work = rt.scope.run({ recorder, area: check.area, check: check.id }, () => detach(async () => check.startEarly!.start(ctx)));
  return work.catch(() => undefined);
}

/** Marks the share key of a covering request (a scope no target grants: it has no `system/` form). */
const COVERING_MARK = '(any token covering)';

/** Slots whose requests without a role may go out with any key of the organization (see keyOf). */
const SPREAD_SLOTS: ReadonlySet<Slot> = new Set(['paced', 'last']);

function createContext(check: CheckDefinition, rt: Runtime, recorder: CheckRecorder): CheckContext {
  const config = rt.config;
  /** A check past its budget sends nothing more. */
  const open = () => {
    if (recorder.closed) throw new ConformanceError('ERR_TIMEOUT', recorder.closed);
  };
  /**
   * The key of a request that names no role: `main`; with a declared organization ceiling, a
   * paced request of a check in the paced or the last slot goes out with the organization key
   * that can send soonest (Runtime.spreadKey). The check keeps that key for its other requests
   * while it holds their scopes and no other key could send sooner (Runtime.keepOrSpread); else
   * the request goes out with the key that can, which the check keeps from then on. A
   * check kept on `main` waited out main's whole window (58 s of a three-key gate) while the
   * organization's other keys were free. The last slot's run-wide invariants sample surfaces
   * with any key of the organization too: on `main` alone they waited out its window at the end
   * of a gate (56 s).
   */
  let pinned: string | undefined;
  const spreads = SPREAD_SLOTS.has(slotOf(check));
  const keyOf = (scopes: string[], o: RequestOptions, covering: boolean): string => {
    if (!rt.config.organization || o.pace === false || !spreads) return 'main';
    pinned =
      pinned !== undefined && spreadRoles(rt.config, scopes).includes(pinned) ? rt.keepOrSpread(pinned, scopes, covering) : rt.spreadKey(scopes, covering);
    return pinned;
  };
  const tokenOf = (role: string, scopes: string[], covering: boolean) => (covering ? rt.tokens.covering(role, scopes) : rt.tokens.token(role, scopes));
  /** A shareable request: another check's exchange for the same key, or sent (and kept for the next). */
  const sharedRequest = async (key: string, request: RequestOptions): Promise<HttpResponse> => {
    const { res, shared } = await rt.exchanges.get(
      key,
      request.url,
      () => rt.http.request(request),
      (r) => shareableAnswer(rt, r),
      (id) => recorder.holds(id),
    );
    if (shared) recorder.addExchange(res.exchange, 'shared');
    return res;
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
    token: (scopes, role = 'main') => (open(), tokenOf(role, scopes, check.coveringTokens === true)),
    async request(opts) {
      open();
      const { share, ...rest } = opts;
      // Shared only with a broker token: its client role and scopes are the request's identity.
      const grant = share && typeof rest.token === 'string' ? rt.tokens.grantOf(rest.token) : undefined;
      const key = grant && rest.client === grant.role && shareableOptions({ ...rest, token: undefined }) ? shareKey({ ...rest, ...grant }) : undefined;
      return key === undefined ? rt.http.request(rest) : sharedRequest(key, rest);
    },
    async fhir(opts): Promise<HttpResponse> {
      open();
      const { scopes, role: asked, share, coveringToken, ...rest } = opts;
      const logical = asked ?? 'main';
      ctx.client(logical);
      const covering = coveringToken ?? check.coveringTokens === true;
      const role = asked === undefined ? keyOf(scopes, rest, covering) : logical;
      const request: RequestOptions = {
        ...rest,
        // Taken when the request leaves (after pacing, holds and back-off), never before a wait.
        token: () => tokenOf(role, scopes, covering),
        client: role,
        headers: { accept: 'application/fhir+json', ...(rest.headers ?? {}) },
      };
      // Keys of one organization holding the same scopes get the same answer: shared by the role asked for.
      // A covering request's token may hold more scopes than asked: shared only with covering requests,
      // never with one whose point is the exact scopes (a scope check must not see a wider token's answer).
      const shared = covering ? [COVERING_MARK, ...scopes] : scopes;
      const key = (share ?? check.shareReads) && shareableOptions(rest) ? shareKey({ ...request, role: logical, scopes: shared }) : undefined;
      return key === undefined ? rt.http.request(request) : sharedRequest(key, request);
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
    openChoice(reason): never {
      throw new OpenChoiceSignal(reason);
    },
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
    attach: (ex) => recorder.addExchange(ex, 'attached'),
    run: {
      exchangesSeen: () => rt.exchangesSeen,
      invariant: (id) => rt.tally(id),
      keyRequests: (role) => rt.keyRequests(role),
      startedAt: rt.startedAt,
      tokenRequestLog: () => rt.tokenRequestLog(),
    },
    waiting: (reason, ms) => rt.onWait({ reason, ms }),
  };
  return ctx;
}

/** Requests with options of their own (no retry, no pacing, a deliberate 429, a cap) are never shared. */
function shareableOptions(o: RequestOptions): boolean {
  return (
    o.retry !== 'none' &&
    o.pace !== false &&
    !o.urgent &&
    !o.expect429 &&
    !o.earlyRetry &&
    o.timeoutMs === undefined &&
    o.maxBodyBytes === undefined &&
    !o.skipInvariants &&
    o.form === undefined &&
    o.token === undefined &&
    o.secretFields === undefined
  );
}

/** An answer worth sharing: below 500, not a 429, whole, and ground for a verdict. */
function shareableAnswer(rt: Runtime, r: HttpResponse): boolean {
  return r.status < 500 && r.status !== 429 && !r.bodyTruncated && !r.exchange.error && rt.http.unjudgeableAnswer(r.exchange.id) === undefined;
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

function findOperation(rt: Runtime, resource: string, interaction: ModelOperation['interaction'], release?: 'R4' | 'R5'): ModelOperation | undefined {
  return rt.spec.model.operations.find((o) => o.resource === resource && o.interaction === interaction && (release === undefined || o.release === release));
}

/** The read URL of a resource, from the target's published read operation (R4 before R5). */
function resourceUrl(rt: Runtime, resourceType: string, id: string): string {
  const read = findOperation(rt, resourceType, 'read', 'R4') ?? findOperation(rt, resourceType, 'read');
  const path = read ? read.path.replace('{id}', encodeURIComponent(id)) : rt.spec.service.resourcePath(resourceType, id);
  return `${rt.config.baseUrl.replace(/\/$/, '')}${path}`;
}
