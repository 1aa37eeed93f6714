/**
 * The outcome policy (docs/outcome-policy.md): what happened while a check ran
 * -> pass, fail, skip, error or observation. The one place that decides it;
 * src/engine/execute.ts gathers the facts and calls `decideOutcome`.
 *
 * - skip: the check said it cannot run (SkipSignal), for a reason the target
 *   did not cause by breaking the rule (a fixture not provided, a profile).
 * - error: the tool could not tell: the network, a timeout, a target that is
 *   down, a redirect it must not follow, a body cut at the cap, a bug of ours.
 * - fail: the target broke a rule, whatever the status of the answer. A 5xx
 *   where the spec requires another answer is a fail when it persisted through
 *   the spec's retries (or answered a request sent without retries, which
 *   provokes an error on purpose) while the target answers normally elsewhere;
 *   when the target answers 5xx (or nothing) everywhere, it is down: error.
 * - observation: an observation check never fails and never errs because of an
 *   assertion: what it asserted is recorded as an observation. A check of any level
 *   that ends with OpenChoiceSignal (ctx.openChoice: the target chose what the spec
 *   leaves open, so its rule never came into play) is an observation too.
 * - pass: a MUST/SHOULD check completed without a finding.
 */
import { CheckFailure, ConformanceError, OpenChoiceSignal, SkipSignal, describeError } from '../errors.js';
import type { Unjudgeable } from '../http/client.js';
import type { Exchange, Finding, Level, Observation, Outcome } from './types.js';

/** How the check's `run` ended. */
export type Ending = { kind: 'completed' } | { kind: 'thrown'; error: unknown };

export interface Happened {
  level: Level;
  ending: Ending;
  /** Soft findings (ctx.check), in order; the hard one (ctx.fail) is in `ending`. */
  findings: readonly Finding[];
  observations: readonly Observation[];
  evidence: readonly Exchange[];
}

/** Whether the target answers normally apart from `besides` (recent exchanges of the run, else a control request). */
export interface Health {
  normal: boolean;
  /** One readable line: which answers show it, e.g. `GET /fhir/R4/metadata answered 200`. */
  how: string;
  /** The control request, when one was sent (added to the check's evidence). */
  control?: Exchange;
}

export interface OutcomeEnv {
  /** Why an exchange's answer is no ground for a verdict on its own (HttpClient.unjudgeableAnswer). */
  unjudgeable(exchangeId: string): Unjudgeable | undefined;
  /** Asked only when a failing check saw a persistent 5xx. */
  health(besides: readonly Exchange[]): Promise<Health>;
  /** A line about discovery to add to a deadline error, when discovery met a problem. */
  discoveryProblem?: string;
}

export interface Decided {
  outcome: Outcome;
  message?: string;
  findings: Finding[];
  observations: Observation[];
  /** Exchanges to add to the evidence (a control request). */
  extraEvidence: Exchange[];
}

/** Fewer answers than this (1 + retries) is not "consistently". */
const CONSISTENT_ATTEMPTS = 2;

export async function decideOutcome(h: Happened, env: OutcomeEnv): Promise<Decided> {
  const findings = [...h.findings];
  const observations = [...h.observations];
  const { ending } = h;

  if (ending.kind === 'thrown' && ending.error instanceof SkipSignal) {
    return { outcome: 'skip', message: ending.error.reason, findings: [], observations, extraEvidence: [] };
  }
  if (ending.kind === 'thrown' && ending.error instanceof OpenChoiceSignal) {
    // The target chose what the spec leaves open; findings made before it still fail the check.
    if (findings.length === 0) return { outcome: 'observation', message: ending.error.reason, findings: [], observations, extraEvidence: [] };
    return decideOutcome({ ...h, ending: { kind: 'completed' } }, env);
  }
  if (ending.kind === 'thrown' && !(ending.error instanceof CheckFailure)) {
    let message = describeError(ending.error);
    // A run that spent its time in discovery: say what discovery met.
    if (ending.error instanceof ConformanceError && ending.error.code === 'ERR_DEADLINE' && env.discoveryProblem)
      message += ` (discovery: ${env.discoveryProblem})`;
    // The exchange it happened on, whichever check sent it (work started early for several checks).
    const extraEvidence = ending.error instanceof ConformanceError && ending.error.exchange ? [ending.error.exchange] : [];
    return { outcome: 'error', message, findings, observations, extraEvidence };
  }
  if (ending.kind === 'thrown') {
    const failure = ending.error as CheckFailure;
    findings.push({ message: failure.message, ...failure.details });
  }

  if (h.level === 'observation') {
    // The spec leaves the point open: what the check asserted is a fact about the target, not a failure.
    for (const f of findings) {
      observations.push({
        key: 'asserted',
        value: f.actual === undefined ? f.message : { message: f.message, expected: f.expected, actual: f.actual },
        note: 'an observation check asserted this; the spec leaves the point open, so it is recorded, not failed',
      });
    }
    const message = observations.map((o) => `${o.key} = ${short(o.value)}`).join('; ') || undefined;
    return { outcome: 'observation', message, findings: [], observations, extraEvidence: [] };
  }

  if (findings.length === 0) return { outcome: 'pass', findings, observations, extraEvidence: [] };

  const message = findings.map((f) => f.message).join('; ');
  const verdict = await judgeAnswers(h.evidence, findings, env);
  if (verdict.kind === 'error')
    return { outcome: 'error', message: `${verdict.reason}; no verdict (${message})`, findings, observations, extraEvidence: verdict.extra };
  return {
    outcome: 'fail',
    message: verdict.prefix ? `${verdict.prefix}: ${message}` : message,
    findings,
    observations,
    extraEvidence: verdict.extra,
  };
}

type AnswerVerdict = { kind: 'fail'; prefix?: string; extra: Exchange[] } | { kind: 'error'; reason: string; extra: Exchange[] };

/**
 * Whether the answers a failing check saw can carry the verdict. A redirect, a
 * body cut at the cap, or a Retry-After the run cannot wait out cannot: error.
 * A 5xx that persisted through the retries, or answered a request sent without
 * retries (provoked), can when the target answers normally elsewhere; when it
 * does not (down), error.
 */
async function judgeAnswers(evidence: readonly Exchange[], findings: readonly Finding[], env: OutcomeEnv): Promise<AnswerVerdict> {
  const serverErrors: Array<{ x: Exchange; u: Unjudgeable }> = [];
  for (const x of evidence) {
    const u = env.unjudgeable(x.id);
    if (u?.kind === 'server-error') serverErrors.push({ x, u });
    else if (u) return { kind: 'error', reason: u.reason, extra: [] };
    const res = x.response;
    if (res && res.status >= 300 && res.status < 400 && res.headers.location !== undefined)
      return {
        kind: 'error',
        reason: `the target redirected ${x.request.method} ${x.request.url} to ${res.headers.location} (redirects are not followed; check baseUrl)`,
        extra: [],
      };
  }
  if (serverErrors.length === 0) return { kind: 'fail', extra: [] };
  // A finding about another answer the target gave stands on its own.
  if (findings.some((f) => f.exchange !== undefined && !serverErrors.some((s) => s.x.id === f.exchange))) return { kind: 'fail', extra: [] };

  // The 5xx a finding names, else the first one.
  const first = serverErrors.find((s) => findings.some((f) => f.exchange === s.x.id)) ?? serverErrors[0]!;
  const what = `${first.x.request.method} ${pathOf(first.x.request.url)}`;
  // A provoked 5xx (a request sent without retries, e.g. an invalid body) is the answer to judge;
  // an unprovoked one must have persisted through the retries to be "consistent".
  if (!first.u.provoked && first.u.attempts < CONSISTENT_ATTEMPTS) {
    return { kind: 'error', reason: `the target answered ${first.u.status} to ${what} and the run had no time to retry it (server error)`, extra: [] };
  }
  // Every attempt of the failing requests (the retries too): the target must have answered normally since the first.
  const attempts = evidence.filter((x) => serverErrors.some((s) => s.x.request.method === x.request.method && s.x.request.url === x.request.url));
  const health = await env.health(attempts);
  const extra = health.control ? [health.control] : [];
  const fiveXx = attempts.filter(
    (x) => x.request.method === first.x.request.method && x.request.url === first.x.request.url && (x.response?.status ?? 0) >= 500,
  ).length;
  const how = first.u.provoked
    ? `(a request that provokes an error, not retried; ${fiveXx} ${fiveXx === 1 ? 'send' : 'sends'} answered 5xx)`
    : `after ${first.u.attempts - 1} retries`;
  if (!health.normal) {
    return {
      kind: 'error',
      reason: `the target answered ${first.u.status} to ${what} ${how} and does not answer normally elsewhere either (${health.how}): it looks down`,
      extra,
    };
  }
  const named = findings.find((f) => f.exchange !== undefined && serverErrors.some((s) => s.x.id === f.exchange));
  const required = named?.expected ?? findings.find((f) => f.expected !== undefined)?.expected;
  const where = required === undefined ? '' : ` where ${describeExpected(required)} is required`;
  return {
    kind: 'fail',
    prefix: `answered ${first.u.status} to ${what}${where}${first.u.provoked ? ` ${how}` : `, consistently ${how}`}; other endpoints answer normally (${health.how})`,
    extra,
  };
}

function describeExpected(v: unknown): string {
  if (Array.isArray(v)) return v.length > 6 ? `one of ${v.slice(0, 3).join(', ')} ...` : v.join(' or ');
  return typeof v === 'string' || typeof v === 'number' ? String(v) : short(v);
}

function pathOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.pathname}${u.search}`;
  } catch {
    return url;
  }
}

export function short(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s === undefined ? 'undefined' : s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** A recent answer of the run, kept by the runtime for `health`. */
export interface RecentAnswer {
  at: number;
  method: string;
  /** Path and query. */
  path: string;
  status?: number;
}

/**
 * Whether recent answers show the target working apart from `besides` (the
 * answers that kept failing): an exchange to another path of the service
 * itself (`isServicePath`: not a token endpoint that may live elsewhere) that
 * ended after the first of them started and was answered below 500. Older
 * answers prove nothing: the target may have gone down since.
 */
export function normalElsewhere(
  recent: readonly RecentAnswer[],
  besides: readonly Exchange[],
  isServicePath: (path: string) => boolean,
): RecentAnswer | undefined {
  const paths = new Set(besides.map((x) => pathOf(x.request.url).split('?')[0]));
  const since = Math.min(...besides.map((x) => Date.parse(x.startedAt)));
  for (let i = recent.length - 1; i >= 0; i--) {
    const r = recent[i]!;
    if (r.at < since) break;
    if (r.status !== undefined && r.status < 500 && isServicePath(r.path) && !paths.has(r.path.split('?')[0])) return r;
  }
  return undefined;
}

/** Where a control request goes: the first of `controlPaths` none of `besides` failed on. */
export function controlPath(besides: readonly Exchange[], controlPaths: readonly string[]): string {
  const failed = new Set(besides.map((x) => pathOf(x.request.url).split('?')[0]));
  return controlPaths.find((p) => ![...failed].some((f) => f.endsWith(p))) ?? controlPaths[0]!;
}
