/**
 * Turns check definitions into vitest tests. Each test runs its check through
 * the engine and stores the CheckResult in `task.meta.conformance`, where the
 * reporter reads it. Vitest's own pass/fail/skip mirror the outcome.
 */
import { inject, test } from 'vitest';
import { Runtime } from '../engine/runtime.js';
import { executeCheck } from '../engine/execute.js';
import type { CheckDefinition } from '../engine/check.js';
import { materialize, type ChecksExport } from '../engine/catalog.js';
import { PROVIDE_KEY } from './handoff.js';
import { announceWait } from './progress.js';

let runtimePromise: Promise<Runtime> | undefined;

/** The worker's runtime, created once and shared by every suite file. */
export function runtime(): Promise<Runtime> {
  runtimePromise ??= Runtime.create(inject(PROVIDE_KEY)).then((rt) => {
    rt.onWait = (w) => announceWait(w.reason, w.ms, w.client);
    return rt;
  });
  return runtimePromise;
}

const DEFAULT_TIMEOUT_MS = 120_000;

export function registerChecks(checks: readonly CheckDefinition[]): void {
  for (const check of checks) {
    const timeout = (check.timeoutMs ?? DEFAULT_TIMEOUT_MS) + 30_000;
    test(`${check.id} — ${check.title}`, { timeout, meta: { checkId: check.id } }, async ({ task, skip }) => {
      const rt = await runtime();
      const result = await executeCheck(check, rt);
      task.meta.conformance = result;
      task.meta.runStats = rt.runStats();
      if (result.outcome === 'skip') skip(result.message);
      if (result.outcome === 'fail' || result.outcome === 'error') {
        const err = new Error(`${result.outcome}: ${result.message ?? ''}`);
        err.stack = err.message; // the report carries the evidence; no stack noise
        throw err;
      }
    });
  }
}

/** Register a suite's checks (a list, or a function of the target's operation model). */
export async function registerSuite(checks: ChecksExport): Promise<void> {
  if (inject(PROVIDE_KEY).setupError) return;
  const rt = await runtime();
  const wanted = rt.spec.requirements;
  const all = materialize(checks, rt.spec.model);
  registerChecks(wanted ? all.filter((c) => c.requirements.some((r) => wanted.includes(r))) : all);
}
