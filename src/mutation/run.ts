/**
 * Mutation testing of the suite: run it against the reference with one fault
 * planted (each check it names must fail; one that names none must fail a check
 * naming a requirement it violates) and against the clean reference in every
 * alternative-conformant mode (it must report zero fail and zero error). Fault
 * runs are in-process; mode runs are in-process or child processes of the CLI
 * (the whole product path), both through runConformance.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PROJECT_ROOT } from '../paths.js';
import type { FaultDef } from '../reference/faults/types.js';
import type { ReferenceLimits, ReferenceModes } from '../reference/types.js';
import type { CheckResult, Profile } from '../engine/types.js';
import { runInProcess } from '../run/in-process.js';
import { EMBEDDED_LIMITS } from '../run/embedded.js';

const CLI = resolve(PROJECT_ROOT, 'bin/fhir-conformance.js');

export interface RunSummary {
  exitCode: number;
  checks: Array<Pick<CheckResult, 'id' | 'outcome' | 'requirements' | 'message'> & Partial<Pick<CheckResult, 'observations'>>>;
  durationMs: number;
  stderr: string;
}

export interface FaultRun extends RunSummary {
  fault: string;
  area: string;
  violates: string[];
  detected: boolean;
  /** Failing checks that name a violated requirement. */
  detectedBy: string[];
  /** Checks the fault declares it must fail that did not fail. */
  missedChecks: string[];
  /** Runs it took (runFault: more than one when a run was inconclusive), with each one's outcome for the named checks. */
  attempts?: Array<{ ms: number; outcomes: string }>;
}

export interface ModeRun extends RunSummary {
  label: string;
  failures: string[];
  errors: string[];
}

/** Runs the CLI against the embedded reference and reads its report. */
export async function runCli(args: string[], timeoutMs = 300_000): Promise<RunSummary> {
  const dir = await mkdtemp(join(tmpdir(), 'fhirc-mut-'));
  const t0 = Date.now();
  try {
    const { code, stderr } = await new Promise<{ code: number; stderr: string }>((done) => {
      execFile(
        process.execPath,
        [CLI, 'run', '--quiet', '--report-dir', dir, ...args],
        { cwd: PROJECT_ROOT, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
        (err, _out, errOut) => {
          const c = err && typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : err ? -1 : 0;
          done({ code: c, stderr: String(errOut) });
        },
      );
    });
    let checks: RunSummary['checks'] = [];
    try {
      const doc = JSON.parse(await readFile(join(dir, 'latest', 'report.json'), 'utf8')) as { checks: CheckResult[] };
      checks = doc.checks.map((c) => ({ id: c.id, outcome: c.outcome, requirements: c.requirements, message: c.message, observations: c.observations }));
    } catch {
      // no report: the summary's exit code and stderr say why
    }
    return { exitCode: code, checks, durationMs: Date.now() - t0, stderr: stderr.slice(-2000) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Limits for fault runs: ceilings low enough that a burst fills a window even
 * on a loaded machine (two shards run at once), so exhaustion checks never
 * skip for slowness and hide a fault.
 */
export const MUTATION_LIMITS: Partial<ReferenceLimits> = {
  ...EMBEDDED_LIMITS,
  perKeyPerWindow: 150,
  tokenIssuancePerWindow: 30,
  tokenWindowMs: 10_000,
};

/**
 * For the rate-limit and issuance-limit faults: a longer window with a small ceiling,
 * so the window checks fill it and watch it slide even when the machine is slow. The
 * config declares one window for both limits, so the issuance window is the same.
 */
export const RATE_LIMIT_MUTATION_LIMITS: Partial<ReferenceLimits> = {
  ...MUTATION_LIMITS,
  perKeyPerWindow: 60,
  windowMs: 12_000,
  tokenWindowMs: 12_000,
  // Past the count its headers give, an issuance burst goes one request at a time (none may
  // retry sooner than a Retry-After): a small limit keeps that part short on a loaded machine.
  tokenIssuancePerWindow: 15,
  // Episode tokens must outlive the longer windows.
  tokenLifetimeSec: 90,
};

/** Areas whose faults run under RATE_LIMIT_MUTATION_LIMITS. */
export const WINDOW_AREAS: ReadonlySet<string> = new Set(['rate-limit', 'issuance-limit']);

/**
 * Plants the fault in a fresh reference and runs, in-process, the checks it names (`checks`: its
 * verdict is whether each of them fails), or, for a fault that names none, the checks that name a
 * requirement it violates (the same run path as a CLI run, src/run/in-process.ts). Only the named
 * checks: the others naming a violated requirement cannot change the verdict, and against a 5xx
 * fault each of them waits out the spec's back-off (missing-token-503 ran 23 checks for 143 s).
 */
export async function runFault(fault: FaultDef, profile: Profile = 'full'): Promise<FaultRun> {
  const first = await runFaultOnce(fault, profile);
  // A timing check may skip as inconclusive on a loaded machine (a burst that could not
  // fill a window even when re-sent faster), or end in error (a request that got no answer
  // in time): one more run before calling the fault undetected.
  // The window areas get two more runs: their episodes are the most sensitive to a loaded machine.
  const tries = WINDOW_AREAS.has(fault.area) ? 3 : 2;
  let run = first;
  let durationMs = first.durationMs;
  const attempt = (r: FaultRun) => ({ ms: r.durationMs, outcomes: r.checks.map((c) => `${c.id}: ${c.outcome}`).join(', ') });
  const attempts = [attempt(first)];
  for (let i = 1; i < tries && !run.detected && run.checks.some((c) => c.outcome === 'skip' || c.outcome === 'error'); i++) {
    run = await runFaultOnce(fault, profile);
    durationMs += run.durationMs;
    attempts.push(attempt(run));
  }
  return { ...run, durationMs, attempts };
}

/**
 * A fault run's deadline (a hang guard). Under a fresh clone's load (four test workers on two cores, a
 * shard's window faults at once) runs of the faults naming rate-limit.operations-429 took 300 s and
 * more: the in-process default of 5 minutes cut them in error, and each was run again (125-166 s more).
 */
const FAULT_RUN_DEADLINE_MS = 600_000;

async function runFaultOnce(fault: FaultDef, profile: Profile): Promise<FaultRun> {
  const t0 = Date.now();
  let checks: RunSummary['checks'] = [];
  let stderr = '';
  try {
    const limits = WINDOW_AREAS.has(fault.area) ? RATE_LIMIT_MUTATION_LIMITS : MUTATION_LIMITS;
    const selection = fault.checks?.length ? { requirements: [], ids: [...fault.checks, ...(fault.alongside ?? [])] } : { requirements: fault.violates };
    const results = await runInProcess('all', { faults: [fault.name], ...selection, profile, limits, deadlineMs: FAULT_RUN_DEADLINE_MS });
    checks = [...results.values()].map((c) => ({ id: c.id, outcome: c.outcome, requirements: c.requirements, message: c.message }));
  } catch (e) {
    stderr = e instanceof Error ? e.message : String(e);
  }
  const detectedBy = checks.filter((c) => c.outcome === 'fail' && c.requirements.some((q) => fault.violates.includes(q))).map((c) => c.id);
  // A fault that names its checks is detected only when each of them fails.
  const missedChecks = (fault.checks ?? []).filter((id) => !checks.some((c) => c.id === id && c.outcome === 'fail'));
  const detected = fault.checks ? missedChecks.length === 0 : detectedBy.length > 0;
  const exitCode = checks.some((c) => c.outcome === 'fail') ? 1 : checks.some((c) => c.outcome === 'error') || stderr ? 3 : 0;
  return {
    exitCode,
    checks,
    durationMs: Date.now() - t0,
    stderr,
    fault: fault.name,
    area: fault.area,
    violates: fault.violates,
    detected,
    detectedBy,
    missedChecks,
  };
}

/** Deterministic shard of the catalog: shard i of n. */
export function shard<T extends { name: string }>(items: readonly T[], i: number, n: number): T[] {
  return items.filter((_x, k) => k % n === i);
}

export interface ModeSpec {
  label: string;
  /** quick unless the mode changes something only waiting checks see. */
  profile?: Profile;
  modes?: Partial<ReferenceModes>;
  limits?: Partial<ReferenceLimits>;
}

/** The clean reference and one run per alternative-conformant choice. */
export const ALTERNATIVE_MODES: ModeSpec[] = [
  { label: 'clean', profile: 'full' },
  { label: 'createStatus=200', modes: { createStatus: 200 } },
  { label: 'updateStatus=201', modes: { updateStatus: 201 } },
  // Any 2xx is success ("not shown"), for DocumentReference too: 202 with the resource (and Location on create).
  { label: 'createStatus=202, updateStatus=202', modes: { createStatus: 202, updateStatus: 202 } },
  { label: 'countOver100=reject', modes: { countOver100: 'reject' } },
  { label: 'cursorEncoding=handle', modes: { cursorEncoding: 'handle' } },
  { label: 'etag=strong', modes: { etag: 'strong' } },
  { label: 'tokenResponseExtras=false', modes: { tokenResponseExtras: false } },
  { label: 'tieBreak=uuid-desc', modes: { tieBreak: 'uuid-desc' } },
  { label: 'signedPrescriptionCode=HPB-00103', modes: { signedPrescriptionCode: 'HPB-00103' } },
  { label: 'validationStatus=400', modes: { validationStatus: 400 } },
  { label: 'unknownDocumentCode=HPB-00102', modes: { unknownDocumentCode: 'HPB-00102' } },
  { label: 'uploadPath=$binary-upload', modes: { uploadPath: '$binary-upload' } },
  { label: 'r5Capability=none', modes: { r5Capability: 'none' } },
  { label: 'r5Capability=bare', modes: { r5Capability: 'bare' } },
  { label: 'uploadContract=type-parameters', modes: { uploadContract: 'type-parameters' } },
  { label: 'uploadContract=instance-binary', modes: { uploadContract: 'instance-binary' } },
  { label: 'uploadContract=instance-parameters, r5Capability=none', modes: { uploadContract: 'instance-parameters', r5Capability: 'none' } },
  { label: 'uploadContract=type-document-reference, r5Capability=bare', modes: { uploadContract: 'type-document-reference', r5Capability: 'bare' } },
  { label: 'documentMaxBytes=3 MiB', limits: { documentMaxBytes: 3 * 1024 * 1024 } },
  { label: 'issuanceWindow=clock', modes: { issuanceWindow: 'clock' } },
  { label: 'excessScope=narrow', modes: { excessScope: 'narrow' } },
  { label: 'patientBlockOn=create', modes: { patientBlockOn: 'create' } },
  // Every request before Retry-After doubles the wait: the suite must send none but the one early retry it judges. The
  // token endpoint's early retry moves its reset by one second only, the least whole-second headers show.
  {
    label: 'prematureRetry=extend-steep, issuancePrematureRetry=plus-second',
    profile: 'full',
    modes: { prematureRetry: 'extend-steep', issuancePrematureRetry: 'plus-second' },
  },
  { label: 'mainKeyKind=production', modes: { mainKeyKind: 'production' } },
  { label: 'tokenEndpointForm=trailing-slash', modes: { tokenEndpointForm: 'trailing-slash' } },
  { label: 'tokenRequestParsing=lenient', modes: { tokenRequestParsing: 'lenient' } },
  { label: 'openapiMediaType=text/plain', modes: { openapiMediaType: 'text/plain' } },
  { label: 'issueCodes=processing', modes: { issueCodes: 'processing' } },
  { label: 'genericErrors=plain-text', modes: { genericErrors: 'plain-text' } },
  // The token endpoint's early-retry penalty kept per client: only the refused client's own retry moves the reset.
  {
    label: 'rateLimitReset=window-free, issuancePrematureRetry=same-client',
    profile: 'full',
    modes: { rateLimitReset: 'window-free', issuancePrematureRetry: 'same-client' },
  },
  { label: 'retryAfter=plus-one', profile: 'full', modes: { retryAfter: 'plus-one' } },
  // The key held only for its wait, announced rounded up to whole seconds: a request in the announced wait's last
  // fraction of a second is served (the early retry is judged only clearly before that).
  { label: 'retryAfter=rounded-up', profile: 'full', modes: { retryAfter: 'rounded-up' } },
  // A key's window fuller than the client's own count for up to a second (whole-second times), a reset that names
  // the moment the whole window is free, a Retry-After a second longer: what a client that paces by its own count and
  // waits for the reset pays whole windows for (issue 27; `npm run bench` runs the gate against it at the spec's limits).
  {
    label: 'keyWindowAccounting=coarse, rateLimitReset=window-free, retryAfter=plus-one',
    profile: 'full',
    modes: { keyWindowAccounting: 'coarse', rateLimitReset: 'window-free', retryAfter: 'plus-one' },
  },
  // The keys used by another client just before the run (a CI gate re-run): their windows start three tenths full.
  { label: 'keyWindowAtStart=earlier-run', modes: { keyWindowAtStart: 'earlier-run' } },
  { label: 'orderBy=resource-time', modes: { orderBy: 'resource-time' } },
  { label: 'orderBy=last-updated', modes: { orderBy: 'last-updated' } },
  { label: 'orderDirection=descending', modes: { orderDirection: 'descending' } },
  { label: 'diagnosisOrder=reversed', modes: { diagnosisOrder: 'reversed' } },
  // The documents whose authentication is "not stated" want a bearer: discovery and the checks read them with the main client's token.
  { label: 'discoveryAuth=required', modes: { discoveryAuth: 'required' } },
  { label: 'attachmentStorage=url', modes: { attachmentStorage: 'url' } },
  { label: 'registrationWindowDays=3650', limits: { registrationWindowDays: 3650 } },
  // Server-owned content that differs from what the client wrote (docs/comparison.md): round trips compare meaning.
  { label: 'narrative=regenerate, referenceDisplay=inject', modes: { narrative: 'regenerate', referenceDisplay: 'inject' } },
  { label: 'instantFormat=offset, jsonLayout=pretty', modes: { instantFormat: 'offset', jsonLayout: 'pretty' } },
  { label: 'instantFormat=utc-millis', modes: { instantFormat: 'utc-millis' } },
  // Bodies as bytes differ, meaning the same: pretty-printed alone, and gzipped (Content-Encoding) whenever the client accepts it.
  { label: 'jsonLayout=pretty', modes: { jsonLayout: 'pretty' } },
  { label: 'contentEncoding=gzip', modes: { contentEncoding: 'gzip' } },
  // DocumentReference mirrored on R4 with writes, an extra published type: its writes carry bodies derived from what it publishes.
  { label: 'r4DocumentReference=writes', modes: { r4DocumentReference: 'writes' } },
  // The same with a published request schema that names only resourceType: the bodies come from the HL7 FHIR R4 schema.
  { label: 'r4DocumentReference=writes-untyped', modes: { r4DocumentReference: 'writes-untyped' } },
  // Another resource type the spec does not name, published with read, create and update (OpenAPI and CapabilityStatement):
  // the generated checks write it with a body derived from the HL7 FHIR R4 schema, and derive its invalid variants from the same.
  { label: 'r4Observation=writes', modes: { r4Observation: 'writes' } },
  // The same type published through a servers-relative OpenAPI document ($ref'd request bodies, path-level parameters).
  { label: 'r4Observation=writes, openapiForm=servers-relative', modes: { r4Observation: 'writes', openapiForm: 'servers-relative' } },
  {
    label: 'other limits',
    profile: 'full',
    limits: { windowMs: 3000, tokenLifetimeSec: 7, tokenWindowMs: 4000, perKeyPerWindow: 700, tokenIssuancePerWindow: 60 },
  },
  // The main client's key in each family of algorithms the spec leaves open (ES256 is the clean reference's): the
  // negative token matrix (alg none, HS256 with the public key, a foreign key, ...) runs in that algorithm.
  { label: 'mainKeyAlg=RS256', modes: { mainKeyAlg: 'RS256' } },
  { label: 'mainKeyAlg=PS384', modes: { mainKeyAlg: 'PS384' } },
  { label: 'mainKeyAlg=ES384', modes: { mainKeyAlg: 'ES384' } },
  { label: 'mainKeyAlg=ES512', modes: { mainKeyAlg: 'ES512' } },
  { label: 'mainKeyAlg=EdDSA', modes: { mainKeyAlg: 'EdDSA' } },
  // The OpenAPI document as another generator writes it: relative servers with a variable, $ref'd components, path-level extensions.
  { label: 'openapiForm=servers-relative', modes: { openapiForm: 'servers-relative' } },
  // $upload at type level with the patient in the query, published in the R5 CapabilityStatement's documentation and OperationDefinition.
  { label: 'uploadContract=type-query-raw', modes: { uploadContract: 'type-query-raw' } },
  { label: 'uploadContract=type-query-binary', modes: { uploadContract: 'type-query-binary' } },
  // The same $upload known from the OpenAPI document alone (per-path servers, a Binary body, a required patient query parameter).
  {
    label: 'openapiForm=servers-relative, uploadContract=type-query-binary, r5Capability=none',
    modes: { openapiForm: 'servers-relative', uploadContract: 'type-query-binary', r5Capability: 'none' },
  },
  // The token's content is not shown: a JWS with only registered claims, the grant kept on the server.
  { label: 'accessTokenClaims=minimal', modes: { accessTokenClaims: 'minimal' } },
  // Tokens that are not JWTs: a JWS over a random handle the server looks up (jwks.json still verifies it); no claim to read.
  { label: 'accessTokenFormat=opaque', modes: { accessTokenFormat: 'opaque' } },
  // A token request's resource parameter (RFC 8707) ignored: no token for one release only, no other audience to try.
  { label: 'resourceIndicator=ignored', modes: { resourceIndicator: 'ignored' } },
  // A stale If-Match on Encounter and DocumentReference refused with HTTP's 412 (the 409 HPB-00103 is stated for MedicationRequest).
  { label: 'staleIfMatchOtherTypes=412', modes: { staleIfMatchOtherTypes: 412 } },
  // A write naming no record of the caller's (none anywhere, or another organization's): 404 HPB-00102, or not resolved at all (accepted).
  { label: 'unresolvedReference=not-found', modes: { unresolvedReference: 'not-found' } },
  { label: 'unresolvedReference=unchecked', modes: { unresolvedReference: 'unchecked' } },
];

/** The CLI arguments of a mode run (`--mode key=value`, `--limit key=value`, as a user would type them). */
export function modeArgs(spec: ModeSpec): string[] {
  const args = ['--profile', spec.profile ?? 'quick'];
  for (const [k, v] of Object.entries(spec.modes ?? {})) args.push('--mode', `${k}=${String(v)}`);
  for (const [k, v] of Object.entries(spec.limits ?? {})) args.push('--limit', `${k}=${String(v)}`);
  return args;
}

/**
 * One mode run: through the CLI (a child process: argument parsing, report files, exit code) or
 * in-process (runConformance without report files: the same run path, and the run's own exit code,
 * without paying a process start-up and the module compilation per mode).
 */
export async function runMode(spec: ModeSpec, via: 'cli' | 'in-process' = 'cli'): Promise<ModeRun> {
  const r = via === 'cli' ? await runCli(modeArgs(spec)) : await runModeInProcess(spec);
  return {
    ...r,
    label: spec.label,
    failures: r.checks.filter((c) => c.outcome === 'fail').map((c) => `${c.id}: ${c.message ?? ''}`),
    errors: r.checks.filter((c) => c.outcome === 'error').map((c) => `${c.id}: ${c.message ?? ''}`),
  };
}

async function runModeInProcess(spec: ModeSpec): Promise<RunSummary> {
  const t0 = Date.now();
  try {
    const { runConformance } = await import('../run/index.js');
    const run = await runConformance(
      {
        profile: spec.profile ?? 'quick',
        reference: { faults: [], modes: spec.modes ?? {}, limits: spec.limits ?? {} },
        progress: false,
        verdict: false,
        writeReports: false,
      },
      () => {},
    );
    const checks = run.results.map((c) => ({ id: c.id, outcome: c.outcome, requirements: c.requirements, message: c.message, observations: c.observations }));
    return { exitCode: run.exitCode, checks, durationMs: Date.now() - t0, stderr: run.setupError ?? '' };
  } catch (e) {
    return { exitCode: -1, checks: [], durationMs: Date.now() - t0, stderr: e instanceof Error ? (e.stack ?? e.message) : String(e) };
  }
}

/** Runs `fn` over `items` with at most `concurrency` at a time, keeping order. */
export async function mapPool<T, R>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return out;
}

/** Detected / all, per area. */
export function mutationScore(runs: FaultRun[]): { detected: number; total: number; byArea: Record<string, { detected: number; total: number }> } {
  const byArea: Record<string, { detected: number; total: number }> = {};
  for (const r of runs) {
    const a = (byArea[r.area] ??= { detected: 0, total: 0 });
    a.total++;
    if (r.detected) a.detected++;
  }
  return { detected: runs.filter((r) => r.detected).length, total: runs.length, byArea };
}
