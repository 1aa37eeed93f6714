/**
 * What a check sees while it runs. Every request made through the context is
 * attributed to the check as evidence; assertions become typed findings.
 */
import { CheckFailure, SkipSignal } from '../errors.js';
import type { HttpResponse, RequestOptions } from '../http/types.js';
import type { TokenBrokerApi } from '../auth/types.js';
import type { ResolvedClient, ResolvedConfig } from '../config/index.js';
import type { ModelOperation, OperationModel } from '../discovery/index.js';
import type { SchemaIssue, Release } from '../fhir/index.js';
import type { CheckDefinition } from './check.js';
import type { Exchange, Finding, LedgerEntry, Observation, Profile } from './types.js';
import type { InvariantTally, KeyRequest } from './runtime.js';

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
  /** A cached access token for the role (default `main`) and scopes. */
  token(scopes: string[], role?: string): Promise<string>;
  /** A raw request (no token unless `opts.token`). */
  request(opts: RequestOptions): Promise<HttpResponse>;
  /** An authenticated FHIR request with a token for these scopes. */
  fhir(opts: RequestOptions & { scopes: string[]; role?: string }): Promise<HttpResponse>;
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
  readonly run: { exchangesSeen(): number; invariant(requirementId: string): InvariantTally; keyRequests(role: string): readonly KeyRequest[] };
}

/** Collects what one check produced. */
export class CheckRecorder {
  readonly evidence: Exchange[] = [];
  readonly findings: Finding[] = [];
  readonly observations: Observation[] = [];
  readonly created: LedgerEntry[] = [];
  requests = 0;

  addExchange(ex: Exchange): void {
    this.requests++;
    // Keep evidence bounded: the first 40 and the last 10 exchanges.
    if (this.evidence.length < 50) this.evidence.push(ex);
    else this.evidence.splice(40, 1), this.evidence.push(ex);
  }
}

export function failureFrom(e: CheckFailure): Finding {
  return { message: e.message, ...e.details };
}

export function throwSkip(reason: string): never {
  throw new SkipSignal(reason);
}
