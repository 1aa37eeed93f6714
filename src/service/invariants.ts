/**
 * Generic invariants run on every exchange (Schemathesis style): plain functions,
 * registered once in INVARIANTS. Each finding names the requirement it traces to.
 * `judgeExchanges` subscribes them (and the FHIR-body rule, fhir-bodies.ts) to a run's
 * exchange events; the HTTP client knows nothing of them.
 */
import type { RunEvents } from '../engine/events.js';
import type { Exchange, Finding } from '../engine/types.js';
import type { FhirValidator } from '../fhir/index.js';
import type { ExchangeFacts } from '../http/types.js';
import { detailCodes, ISSUE_SEVERITIES, ISSUE_TYPES, outcomeIssues as issuesOf, type OperationOutcomeIssue } from './errors.js';
import { CATALOG_CODE_PATTERN } from './catalog.js';
import { fhirBodyValidator } from './fhir-bodies.js';
import { isFhirPath, isTokenEndpointPath } from './paths.js';
import { correlationIdRepeats, encounterShapeFindings, versionlessResources } from './run-wide.js';

/**
 * Requirement ids (from suites/requirements.json; align them here only).
 * Spec sources: "Audit" + "Rate-limit response headers" (X-Correlation-Id, X-RateLimit-*,
 * Retry-After), the introduction (application/fhir+json), "Errors" > "Format" 1-4.
 */
export const INVARIANT_REQUIREMENTS = {
  correlationId: 'headers.correlation-id-every-response',
  correlationIdAudit: 'headers.correlation-id',
  rateLimitHeaders: 'rate-limit.headers-present',
  rateLimitArithmetic: 'rate-limit.headers-arithmetic',
  limitHeader: 'rate-limit.limit-header',
  keyLimit: 'rate-limit.per-key-default-60',
  resetHeader: 'rate-limit.reset-header',
  retryAfter: 'rate-limit.retry-after',
  fhirMediaType: 'media-type.fhir-json',
  operationOutcome: 'errors.operation-outcome-shape',
  catalogCode: 'errors.catalog-code-format',
  diagnosticsPrefix: 'errors.prefix-matches-details-code',
  throttled: 'errors.throttled-code',
  issueType: 'errors.issue-code-fhir-issue-type',
} as const;

export interface InvariantContext {
  /** The request went to a FHIR endpoint (`/fhir/...`, except `.well-known`). */
  isFhir: boolean;
  /** The request carried a bearer token. */
  authenticated: boolean;
  /** The request went to the token endpoint (`/auth/token`). */
  isTokenEndpoint?: boolean;
  /** Rate-limit window in seconds (default 60). */
  windowSec?: number;
  /** When the response was received, epoch ms (default: the exchange's send plus its duration). */
  now?: number;
  /** The declared ceiling of the key that sent the request (clients[].rateLimitPerMinute), when the exchange names its key. */
  keyLimit?: number;
  /** The request's method and path are those of an operation the target publishes (its operation model). */
  publishedOperation?: boolean;
}

export interface Invariant {
  id: string;
  requirements: string[];
  title: string;
  check(ex: Exchange, ctx: InvariantContext): Finding[];
}

const R = INVARIANT_REQUIREMENTS;
const CATALOG_CODE = CATALOG_CODE_PATTERN;
const RESET_PAST_SLACK_S = 5;
const RESET_FUTURE_SLACK_S = 60;

function finding(ex: Exchange, requirement: string, message: string, expected: unknown, actual: unknown): Finding {
  return { message, requirement, expected, actual, exchange: ex.id };
}

/** The issues of an OperationOutcome body (the exchange's evidence), or undefined when the body is not one. */
function outcomeIssues(ex: Exchange): OperationOutcomeIssue[] | undefined {
  const body = ex.response?.body;
  if (!body) return undefined;
  try {
    return issuesOf(JSON.parse(body));
  } catch {
    return undefined;
  }
}

function catalogCodes(issue: OperationOutcomeIssue | undefined): string[] {
  return issue ? detailCodes(issue).filter((c): c is string => typeof c === 'string') : [];
}

const isError = (ex: Exchange) => (ex.response?.status ?? 0) >= 400;
const isOutcomeEndpoint = (ctx: InvariantContext) => ctx.isFhir || !!ctx.isTokenEndpoint;

export const INVARIANTS: Invariant[] = [
  {
    id: 'correlation-id-present',
    requirements: [R.correlationId, R.correlationIdAudit],
    title: 'X-Correlation-Id on every response',
    check(ex) {
      const v = ex.response?.headers['x-correlation-id'];
      return v && v.trim() !== '' ? [] : [finding(ex, R.correlationId, 'response has no X-Correlation-Id header', 'X-Correlation-Id header', v ?? null)];
    },
  },
  {
    id: 'rate-limit-headers-present',
    requirements: [R.rateLimitHeaders],
    title: 'X-RateLimit-Limit, -Remaining and -Reset on every authenticated and token-endpoint response',
    check(ex, ctx) {
      // Unauthenticated discovery responses are left to an observation (requirements catalog note).
      if (!ctx.authenticated && !ctx.isTokenEndpoint) return [];
      const h = ex.response?.headers ?? {};
      const missing = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'].filter((n) => h[n] === undefined);
      return missing.length === 0
        ? []
        : [
            finding(
              ex,
              R.rateLimitHeaders,
              `response lacks ${missing.join(', ')}`,
              'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset',
              `missing: ${missing.join(', ')}`,
            ),
          ];
    },
  },
  {
    id: 'rate-limit-headers-arithmetic',
    requirements: [R.rateLimitArithmetic, R.limitHeader, R.resetHeader],
    title: 'Rate-limit headers are consistent integers; Reset is a unix timestamp in seconds',
    check(ex, ctx) {
      const h = ex.response?.headers ?? {};
      const out: Finding[] = [];
      const parsed: Record<string, number> = {};
      const requirementOf: Record<string, string> = {
        'x-ratelimit-limit': R.limitHeader,
        'x-ratelimit-remaining': R.rateLimitArithmetic,
        'x-ratelimit-reset': R.resetHeader,
      };
      for (const [name, requirement] of Object.entries(requirementOf)) {
        const v = h[name];
        if (v === undefined) continue;
        if (!/^\d+$/.test(v.trim())) out.push(finding(ex, requirement, `${name} is not a non-negative integer`, 'integer', v));
        else parsed[name] = Number(v.trim());
      }
      const limit = parsed['x-ratelimit-limit'];
      if (limit === 0) out.push(finding(ex, R.limitHeader, 'X-RateLimit-Limit is 0', 'a positive integer', 0));
      const remaining = parsed['x-ratelimit-remaining'];
      const reset = parsed['x-ratelimit-reset'];
      if (limit !== undefined && remaining !== undefined && remaining > limit) {
        out.push(finding(ex, R.rateLimitArithmetic, 'X-RateLimit-Remaining exceeds X-RateLimit-Limit', `0 <= remaining <= ${limit}`, remaining));
      }
      if (reset !== undefined) {
        // Against when the exchange happened, from its send to its answer, not when it is judged (a
        // client busy elsewhere may judge it seconds later): the target set the reset at some moment
        // in between, and a starved client may read an answer seconds after the target wrote it.
        const sent = Date.parse(ex.startedAt);
        const answered = ctx.now ?? (Number.isNaN(sent) ? Date.now() : sent + (ex.durationMs ?? 0));
        const from = Number.isNaN(sent) ? answered : Math.min(sent, answered);
        const lo = Math.floor(from / 1000 - RESET_PAST_SLACK_S);
        const hi = Math.ceil(answered / 1000 + (ctx.windowSec ?? 60) + RESET_FUTURE_SLACK_S);
        // A 429's reset may lie beyond the window: early retries extend it (Retry rule 1, by an amount not
        // shown). Only a reset in milliseconds is wrong there.
        const tooLate = ex.response?.status === 429 ? reset > hi * 100 : reset > hi;
        if (reset < lo || tooLate) {
          const hint = reset > hi * 100 ? ' (milliseconds instead of seconds?)' : '';
          out.push(finding(ex, R.resetHeader, `X-RateLimit-Reset is not a unix timestamp in seconds within the window${hint}`, `${lo}..${hi}`, reset));
        }
      }
      return out;
    },
  },
  {
    id: 'rate-limit-limit-per-key',
    requirements: [R.keyLimit],
    title: "X-RateLimit-Limit is the sending key's ceiling on every served authenticated response, whichever surface answered",
    check(ex, ctx) {
      // Answers the key's window certainly counted: a success, or an error of an operation the target
      // publishes (it authenticates before it answers). A path no operation serves may be answered before
      // the request is authenticated (the reference counts it in its anonymous window; the spec leaves it
      // open); a 401 is an unauthenticated request's; a 429 may come from the organization's window.
      const status = ex.response?.status ?? 0;
      if (ctx.keyLimit === undefined || !ctx.authenticated || ctx.isTokenEndpoint || status === 401 || status === 429) return [];
      if ((status < 200 || status >= 300) && !ctx.publishedOperation) return [];
      const raw = ex.response?.headers['x-ratelimit-limit'];
      if (raw === undefined || !/^\d+$/.test(raw.trim())) return []; // absent or malformed: rate-limit-headers-present and -arithmetic
      const limit = Number(raw.trim());
      return limit === ctx.keyLimit
        ? []
        : [finding(ex, R.keyLimit, `X-RateLimit-Limit is ${limit}, the key's ceiling is ${ctx.keyLimit} (clients[].rateLimitPerMinute)`, ctx.keyLimit, limit)];
    },
  },
  {
    id: 'retry-after-on-429',
    requirements: [R.retryAfter],
    title: 'Retry-After (seconds) on every 429',
    check(ex) {
      if (ex.response?.status !== 429) return [];
      const v = ex.response.headers['retry-after'];
      if (v === undefined) return [finding(ex, R.retryAfter, '429 without Retry-After', 'Retry-After header', null)];
      return /^\d+$/.test(v.trim()) ? [] : [finding(ex, R.retryAfter, 'Retry-After is not a number of seconds', 'non-negative integer', v)];
    },
  },
  {
    id: 'fhir-media-type',
    requirements: [R.fhirMediaType],
    title: 'FHIR endpoints answer with application/fhir+json',
    check(ex, ctx) {
      if (!ctx.isFhir || !ex.response || ex.response.bodyBytes === 0) return [];
      const type = ex.response.headers['content-type'];
      const mediaType = type?.split(';')[0].trim().toLowerCase();
      return mediaType === 'application/fhir+json'
        ? []
        : [finding(ex, R.fhirMediaType, 'FHIR response is not application/fhir+json', 'application/fhir+json', type ?? null)];
    },
  },
  {
    id: 'error-operation-outcome',
    requirements: [R.operationOutcome],
    title: 'Errors are OperationOutcomes with issue[0].severity, code and diagnostics, every severity a FHIR issue severity',
    check(ex, ctx) {
      if (!isError(ex) || !isOutcomeEndpoint(ctx)) return [];
      const issues = outcomeIssues(ex);
      if (!issues || issues.length === 0) {
        const excerpt = ex.response?.body?.slice(0, 200) ?? '';
        return [
          finding(ex, R.operationOutcome, `${ex.response?.status} response is not an OperationOutcome with issues`, 'OperationOutcome with issue[]', excerpt),
        ];
      }
      const first = issues[0];
      const missing = (['severity', 'code', 'diagnostics'] as const).filter((k) => typeof first[k] !== 'string' || first[k] === '');
      const out =
        missing.length === 0 ? [] : [finding(ex, R.operationOutcome, `issue[0] lacks ${missing.join(', ')}`, 'issue[0].severity, code, diagnostics', first)];
      for (const [i, issue] of issues.entries()) {
        if (typeof issue.severity === 'string' && issue.severity !== '' && !ISSUE_SEVERITIES.has(issue.severity))
          out.push(
            finding(
              ex,
              R.operationOutcome,
              `issue[${i}].severity ${JSON.stringify(issue.severity)} is not a FHIR issue severity`,
              [...ISSUE_SEVERITIES],
              issue.severity,
            ),
          );
      }
      return out;
    },
  },
  {
    id: 'error-issue-type',
    requirements: [R.issueType],
    title: "Every error's issues carry a FHIR issue type as code",
    check(ex, ctx) {
      if (!isError(ex) || !isOutcomeEndpoint(ctx)) return [];
      // The release a FHIR path names; the token endpoint's answers may use either release's types.
      const release = /\/fhir\/(R4|R5)\//.exec(ex.request.url)?.[1] as 'R4' | 'R5' | undefined;
      const known = (code: string) => (release ? ISSUE_TYPES[release].has(code) : ISSUE_TYPES.R4.has(code) || ISSUE_TYPES.R5.has(code));
      const out: Finding[] = [];
      for (const [i, issue] of (outcomeIssues(ex) ?? []).entries()) {
        // Absent ones are error-operation-outcome's.
        if (typeof issue.code === 'string' && issue.code !== '' && !known(issue.code))
          out.push(
            finding(
              ex,
              R.issueType,
              `issue[${i}].code ${JSON.stringify(issue.code)} is not a FHIR ${release ?? 'R4 or R5'} issue type`,
              'a code of http://hl7.org/fhir/issue-type',
              issue.code,
            ),
          );
      }
      return out;
    },
  },
  {
    id: 'error-catalog-code-format',
    requirements: [R.catalogCode, R.diagnosticsPrefix],
    title: 'Catalog codes are HPB-/SVC-nnnnn and prefix diagnostics as "<CODE>: "',
    check(ex, ctx) {
      if (!isError(ex) || !isOutcomeEndpoint(ctx)) return [];
      const out: Finding[] = [];
      (outcomeIssues(ex) ?? []).forEach((issue, i) => {
        const codes = catalogCodes(issue);
        if (!Array.isArray(issue.details?.coding) || issue.details.coding.length === 0) return;
        const code = codes.find((c) => CATALOG_CODE.test(c));
        if (!code) {
          out.push(finding(ex, R.catalogCode, `issue[${i}].details.coding has no HPB-/SVC- catalog code`, '^(HPB|SVC)-\\d{5}$', codes));
          return;
        }
        const diagnostics = typeof issue.diagnostics === 'string' ? issue.diagnostics : '';
        if (!diagnostics.startsWith(`${code}: `)) {
          out.push(
            finding(ex, R.diagnosticsPrefix, `issue[${i}].diagnostics does not start with "${code}: "`, `${code}: <message>`, issue.diagnostics ?? null),
          );
        }
      });
      return out;
    },
  },
  {
    id: 'throttled-code',
    requirements: [R.throttled],
    title: '429 carries issue code throttled and HPB-00105',
    check(ex, ctx) {
      if (ex.response?.status !== 429 || !isOutcomeEndpoint(ctx)) return [];
      const first = outcomeIssues(ex)?.[0];
      if (!first) return []; // reported by error-operation-outcome
      const codes = catalogCodes(first);
      // HPB-00121 (sandbox volume cap) is also a 429; the spec names no issue code for it.
      if (codes.includes('HPB-00121')) return [];
      const out: Finding[] = [];
      if (first.code !== 'throttled') out.push(finding(ex, R.throttled, '429 issue[0].code is not throttled', 'throttled', first.code ?? null));
      if (!codes.includes('HPB-00105')) out.push(finding(ex, R.throttled, '429 does not carry catalog code HPB-00105', 'HPB-00105', codes));
      return out;
    },
  },
];

/** Runs every invariant on an exchange that has a response. */
export function runInvariants(ex: Exchange, ctx: InvariantContext): Finding[] {
  if (!ex.response) return [];
  return INVARIANTS.flatMap((inv) => inv.check(ex, ctx));
}

export interface ExchangeRulesOptions {
  /** Rate-limit window in seconds (the run's). */
  windowSec: number;
  /** Validates FHIR bodies against the HL7 schemas. */
  validator: FhirValidator;
  /** The declared ceiling of a key by the name exchanges give it (`Exchange.client`), when the config declares the key. */
  keyLimit?: (client: string) => number | undefined;
  /** Whether a method and path (relative to the base URL) are an operation the target publishes. */
  publishedOperation?: (method: string, path: string) => boolean;
  /** The resource types the target publishes operations for: each of their resources carries meta.versionId (run-wide.ts). */
  versionedTypes?: ReadonlySet<string>;
}

/** The run-wide rules that remember what they saw (one set per run). */
export interface RunWideState {
  bodies: ReturnType<typeof fhirBodyValidator>;
  correlationIds: ReturnType<typeof correlationIdRepeats>;
}

function runWideState(validator: FhirValidator): RunWideState {
  return { bodies: fhirBodyValidator(validator), correlationIds: correlationIdRepeats() };
}

/** Every run-wide rule on one exchange: the invariants and the FHIR-body rule (none when the caller asked to skip it, or it got no whole answer). */
export function exchangeFindings(
  ex: Exchange,
  facts: ExchangeFacts,
  opts: ExchangeRulesOptions,
  state: RunWideState = runWideState(opts.validator),
): Finding[] {
  if (!facts.complete || facts.skipInvariants || !ex.response) return [];
  const findings = runInvariants(ex, {
    isFhir: isFhirPath(facts.path),
    authenticated: facts.authenticated,
    isTokenEndpoint: facts.perSource || isTokenEndpointPath(facts.path),
    windowSec: opts.windowSec,
    now: facts.answeredAt,
    ...(ex.client !== undefined && opts.keyLimit ? { keyLimit: opts.keyLimit(ex.client) } : {}),
    ...(opts.publishedOperation ? { publishedOperation: opts.publishedOperation(ex.request.method, facts.path.split('?')[0]!) } : {}),
  });
  findings.push(...state.bodies({ path: facts.path, status: ex.response.status, json: facts.json, text: facts.text, truncated: facts.truncated }, ex));
  findings.push(...state.correlationIds(ex, facts.authenticated));
  if (opts.versionedTypes && !facts.truncated) findings.push(...versionlessResources(ex, facts.path, facts.json, opts.versionedTypes));
  if (!facts.truncated) findings.push(...encounterShapeFindings(ex, facts.path, facts.json));
  return findings;
}

/** Subscribes the run-wide rules to a run's exchange events; what they find goes to `record` (the run's tally). */
export function judgeExchanges(events: RunEvents, opts: ExchangeRulesOptions, record: (ex: Exchange, findings: readonly Finding[]) => void): () => void {
  const state = runWideState(opts.validator);
  return events.on('exchange', (e) => {
    const findings = exchangeFindings(e.exchange, e.facts, opts, state);
    if (findings.length) record(e.exchange, findings);
  });
}
