/**
 * Runs checks in-process against a fresh embedded reference (optionally with
 * planted faults, alternative modes or other limits) through the real engine,
 * HTTP client and token broker, without vitest. The verdicts are those a CLI
 * run gives; used by the mutation tests and the suites' own tests.
 */
import { createReferenceServer } from '../reference/index.js';
import type { ReferenceLimits, ReferenceModes } from '../reference/types.js';
import { HttpClient } from '../http/client.js';
import { discover } from '../discovery/index.js';
import { EMBEDDED_LIMITS, embeddedTargetConfig } from '../vitest/embedded.js';
import { PROJECT_ROOT } from '../paths.js';
import { Runtime } from './runtime.js';
import { executeCheck } from './execute.js';
import { collectChecks, materialize, type ChecksExport } from './catalog.js';
import type { CheckResult, Profile } from './types.js';

export interface InProcessOptions {
  faults?: string[];
  modes?: Partial<ReferenceModes>;
  /** Reference limits (default: the embedded run's short windows). */
  limits?: Partial<ReferenceLimits>;
  profile?: Profile;
  /** Only checks whose id matches. */
  only?: RegExp;
  /** Only checks naming one of these requirement ids. */
  requirements?: readonly string[];
  /** Also these checks, by id, whatever requirements they name. */
  ids?: readonly string[];
  /** Target config members laid over the embedded reference's (e.g. `documentReference` declarations). */
  config?: Record<string, unknown>;
  /** Run deadline from now, ms (default 5 minutes). */
  deadlineMs?: number;
}

/** Executes the selected checks one after another; returns their results by id, in run order. */
export async function runInProcess(checks: ChecksExport | 'all', opts: InProcessOptions = {}): Promise<Map<string, CheckResult>> {
  const limits = opts.limits ?? EMBEDDED_LIMITS;
  const server = await createReferenceServer({ host: '127.0.0.1', port: 0, limits, faults: opts.faults ?? [], modes: opts.modes });
  let rt: Runtime | undefined;
  try {
    const http = new HttpClient({ baseUrl: server.url });
    const model = await discover(http).finally(() => http.close());
    const profile = opts.profile ?? 'full';
    rt = await Runtime.create({
      runId: `in-process-${Date.now()}`,
      profile,
      rawConfig: { ...embeddedTargetConfig(server, limits), ...opts.config },
      configDir: PROJECT_ROOT,
      embedded: true,
      model,
      deadline: Date.now() + (opts.deadlineMs ?? 300_000),
      startedAt: new Date().toISOString(),
    });
    const all = checks === 'all' ? await collectChecks(model, { ordered: true }) : materialize(checks, model);
    const selected = all.filter(
      (c) =>
        opts.ids?.includes(c.id) ||
        ((!opts.only || opts.only.test(c.id)) && (!opts.requirements || c.requirements.some((r) => opts.requirements!.includes(r)))),
    );
    const results = new Map<string, CheckResult>();
    for (const check of selected) results.set(check.id, await executeCheck(check, rt));
    return results;
  } finally {
    await rt?.close();
    await server.close();
  }
}

/** `id: outcome (message)` lines, for readable assertion failures. */
export function describeResults(results: Map<string, CheckResult>): string[] {
  return [...results.values()].map((r) => `${r.id}: ${r.outcome}${r.message ? ` (${r.message.slice(0, 200)})` : ''}`);
}

/** The lines of checks that neither passed nor observed: empty on a conforming target. */
export function nonConforming(results: Map<string, CheckResult>): string[] {
  return describeResults(results).filter((line) => !/: (pass|observation)\b/.test(line));
}
