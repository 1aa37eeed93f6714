/**
 * A check is data: an id, the requirements it verifies, the spec sentence it
 * quotes, and a `run` function. Suites register checks; the engine runs them.
 */
import type { HttpResponse, RequestOptions } from '../http/types.js';
import type { TokenBrokerApi } from '../auth/types.js';
import type { ResolvedClient, ResolvedConfig } from '../config/index.js';
import type { ModelOperation, OperationModel } from '../discovery/model.js';
import type { SchemaIssue, Release } from '../fhir/index.js';
import type { Exchange, Finding, InvariantTally, KeyRequest, Level, Profile } from './types.js';

/**
 * - `writes`: sends POST/PUT to FHIR endpoints (excluded by the read-only profile).
 * - `waits`: must wait out a token lifetime or a rate window (excluded by quick).
 * - `exhausts-key-limit` / `exhausts-issuance-limit`: drives a limit to 429; scheduled last.
 * - `expiry-probe`: uses the token issued at the start of the run; scheduled at the very end.
 * - `early`: runs before anything else spends the key's window; `last`: reads what the whole run saw.
 * - `conditional`: judges only where the target's conformant choices give it something to judge (an
 *   upload contract of one level); it skips elsewhere, so the gate judges a requirement with it only
 *   when no other check can (src/engine/budget.ts).
 * The schedule (src/engine/plan.ts) derives each check's slot from these tags.
 */
export type CheckTag = 'writes' | 'waits' | 'exhausts-key-limit' | 'exhausts-issuance-limit' | 'expiry-probe' | 'early' | 'last' | 'conditional';

export interface CheckDefinition {
  /** Stable id `<area>.<slug>`, e.g. `pagination.next-absent-on-last-page`. */
  id: string;
  title: string;
  area: string;
  /** Requirement ids from suites/requirements.json this check verifies. */
  requirements: string[];
  /** MUST/SHOULD checks pass or fail; observation checks record and never fail. */
  level: Level;
  /** The spec sentence the check verifies, verbatim. */
  quote?: string;
  tags?: CheckTag[];
  /** Fixture keys the check needs; missing ones make it skip with a reason. */
  fixtures?: string[];
  /** Client roles the check needs besides `main`. */
  clients?: string[];
  /** Overall time budget, ms (default 120 s; waiting checks get more). */
  timeoutMs?: number;
  /**
   * Rate windows this check must wait out at least (e.g. 1.5 for a sliding-window
   * scenario); the run's lower bound in the pacing figures counts the largest that ran.
   */
  waitWindows?: number;
  /**
   * Requests the check plans to send (token requests included). Undeclared: the measured
   * estimate of suites/request-budget.json, else a default (src/engine/budget.ts). The
   * request budget of every report and the `gate` profile's selection use it.
   */
  requests?: number;
  /**
   * Its FHIR reads (GET through `ctx.fhir`) may be answered with an exchange another check
   * of the run made for the same request (src/engine/exchange-cache.ts); `share` on one
   * request overrides it.
   */
  shareReads?: boolean;
  /**
   * Its requests' point is not their token's exact scopes (it judges no scope rule, on purpose or
   * by the way): every `ctx.fhir` and `ctx.token` of it takes any usable token its key holds whose
   * scopes include the ones asked (TokenBroker.covering), so it costs no token request when the
   * key holds a wider one (the preflight's, of the client's declared scopes). A request may still
   * ask for the exact scopes with `coveringToken: false`. Set it with `coveringTokens(checks)` for
   * an area whose checks all qualify, or on the check; never on a check that judges scopes (suites/scopes, auth,
   * generated, errors' insufficient-scope samples).
   */
  coveringTokens?: boolean;
  /**
   * Work the check rests on that may start before its turn, beside the checks scheduled before
   * it: the rate-limit suite's key episodes on another organization's key, which run while the
   * main key is paced. `roles(config)`: the keys the work drives ([]: it cannot start early).
   * The executor calls `start` with a context of this check once no check still to run before it
   * declares one of those roles (`clients`), and holds back every other request on those keys
   * until the promise `start` returns settles (src/engine/executor.ts).
   * `afterTokens`: the work drives the token endpoint, not a key (the issuance episode, with `roles`
   * returning []): the executor starts it in the paced slot once every paced check still to run
   * takes covering tokens (`coveringTokens`) and none talks to the token endpoint itself (the token
   * lane's estimate): the others would ask for tokens the work holds up. The work keeps the token
   * endpoint to itself (TokenBroker.alone), so a token request meanwhile waits, never interferes.
   */
  startEarly?: { roles(config: ResolvedConfig): readonly string[]; start(ctx: CheckContext): Promise<unknown>; afterTokens?: boolean };
  /**
   * For a rule that governs several surfaces: the surfaces this check judges it on, as data
   * (docs/surfaces-by-rule.md is generated from it), and any published surface it leaves out, with why.
   */
  surfaces?: CheckSurfaces;
  run(ctx: CheckContext): Promise<void>;
}

/** Dimensions along which a rule can hold on one surface and break on another. */
export const SURFACE_DIMENSIONS = ['release', 'resource', 'keyKind', 'page', 'version', 'channel', 'parameters'] as const;
export type SurfaceDimension = (typeof SURFACE_DIMENSIONS)[number];

/** What a check covers along each dimension (plain words), and what it leaves out with the reason. */
export type CheckSurfaces = Partial<Record<SurfaceDimension, string>> & { leftOut?: string[] };

/**
 * What a check sees while it runs. Every request made through the context is
 * attributed to the check as evidence; assertions become typed findings.
 */
export interface CheckContext {
  readonly definition: CheckDefinition;
  readonly config: ResolvedConfig;
  readonly model: OperationModel;
  readonly profile: Profile;
  readonly runId: string;
  /** Token lifetime, window and issuance limit in force (spec defaults unless the config declares others). */
  readonly limits: { tokenLifetimeSec: number; windowSec: number; tokenIssuancePerMinute: number };
  readonly tokens: TokenBrokerApi;
  /** A fixture id from the config; the check skips when it is absent. */
  fixture(key: string): string;
  hasFixture(key: string): boolean;
  /** The client with this role; the check skips when the config has none. */
  client(role?: string): ResolvedClient;
  /** A cached access token for the role (default `main`) and scopes (any wider one the role holds when the check declares `coveringTokens`). */
  token(scopes: string[], role?: string): Promise<string>;
  /**
   * A raw request (no token unless `opts.token`). `share: true` with a token `token()` handed
   * out: a GET that may be answered with the exchange another check made for the same request.
   */
  request(opts: RequestOptions & { share?: boolean }): Promise<HttpResponse>;
  /**
   * An authenticated FHIR request with a token for these scopes. `share: true`: a GET that
   * may be answered with the exchange another check of the run made for the same request.
   * `coveringToken: true`: any usable token the key holds whose scopes include these (no token
   * request when one is held), for a request whose point is not its token's exact scopes;
   * default: the check's `coveringTokens`.
   */
  fhir(opts: RequestOptions & { scopes: string[]; role?: string; share?: boolean; coveringToken?: boolean }): Promise<HttpResponse>;
  /** The target's published operation, or a skip when it publishes none. */
  operation(resource: string, interaction: ModelOperation['interaction'], release?: 'R4' | 'R5'): ModelOperation;
  findOperation(resource: string, interaction: ModelOperation['interaction'], release?: 'R4' | 'R5'): ModelOperation | undefined;
  /** Fill `{id}` in a path template. */
  path(template: string, params?: Record<string, string>): string;
  /** Record what the target does on a point the spec leaves open. */
  observe(key: string, value: unknown, note?: string): void;
  /** Soft assertion: records a finding (outcome fail) and carries on. */
  check(condition: boolean, message: string, details?: Omit<Finding, 'message'>): boolean;
  /** Hard assertion failure. */
  fail(message: string, details?: Omit<Finding, 'message'>): never;
  skip(reason: string): never;
  /**
   * End the check as an observation: the target made a choice the spec leaves open, so the rule
   * this check judges never came into play (neither a pass nor a skip). Observe what it did first.
   */
  openChoice(reason: string): never;
  /** Add a created resource to the run's ledger. */
  created(resourceType: string, id: string, url?: string): void;
  /** HL7 FHIR JSON-schema issues of a resource ([] when valid). */
  validate(release: Release, resource: unknown): SchemaIssue[];
  /** Interruptible sleep that honours the run deadline. */
  sleep(ms: number): Promise<void>;
  /** Report progress of a long wait (live progress on stderr). */
  waiting(reason: string, ms: number): void;
  /** Shared state of the run (e.g. the expiry probe's token). */
  readonly shared: Map<string, unknown>;
  /** Add an exchange made outside the check (e.g. by the expiry probe's timer) to its evidence. */
  attach(exchange: Exchange): void;
  /**
   * Run-wide tallies: exchanges seen so far, generic-invariant violations, and the
   * completed requests the run made with each client role's token (the rate-limit
   * checks count a key's own traffic with them).
   */
  readonly run: {
    exchangesSeen(): number;
    invariant(requirementId: string): InvariantTally;
    keyRequests(role: string): readonly KeyRequest[];
    /** When the run's logs begin (ms): a key's window may hold requests from before then (discovery, an earlier run). */
    startedAt: number;
    /** Every completed token endpoint request of the run, oldest first. */
    tokenRequestLog(): readonly KeyRequest[];
  };
}

/** Marks each check of an area whose requests' point is not their token's exact scopes (CheckDefinition.coveringTokens). */
export function coveringTokens(checks: readonly CheckDefinition[]): CheckDefinition[] {
  return checks.map((c) => ({ ...c, coveringTokens: true }));
}

export function defineCheck(def: CheckDefinition): CheckDefinition {
  if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(def.id)) throw new Error(`check id "${def.id}" must look like area.slug`);
  if (def.requirements.length === 0) throw new Error(`check ${def.id} declares no requirement`);
  return def;
}

/** Why a profile excludes a check, or undefined when it runs. */
export function excludedBy(profile: Profile, check: Pick<CheckDefinition, 'tags'>): string | undefined {
  const tags = check.tags ?? [];
  if (profile === 'read-only' && tags.includes('writes')) return 'the read-only profile sends no POST or PUT to FHIR endpoints';
  if (profile === 'read-only' && (tags.includes('exhausts-key-limit') || tags.includes('exhausts-issuance-limit')))
    return 'the read-only profile does not exhaust rate limits';
  if (profile === 'quick' && tags.includes('waits')) return 'the quick profile skips checks that wait out a token lifetime or a rate window';
  if (profile === 'gate' && GATE_EXCLUDED_TAGS.some((t) => tags.includes(t)))
    return 'left to full: needs waiting/exhaustion (the gate profile runs no check that waits out a token lifetime or a rate window, or drives a limit to 429)';
  return undefined;
}

/** Tags of the checks the `gate` profile leaves to `full`. */
export const GATE_EXCLUDED_TAGS: readonly CheckTag[] = ['waits', 'exhausts-key-limit', 'exhausts-issuance-limit', 'expiry-probe'];
