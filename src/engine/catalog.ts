/**
 * The catalog of checks: every `suites/<area>/checks.ts` exports (default) either a
 * list of checks or a function of the target's operation model (generated checks).
 * Each check carries the suite folder it came from, for the schedule (plan.ts).
 */
import { readdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MODULE_EXT, SUITES_DIR } from '../paths.js';
import type { OperationModel } from '../discovery/model.js';
import type { CheckDefinition } from './check.js';
import type { CatalogCheck } from './plan.js';

export type ChecksExport = readonly CheckDefinition[] | ((model: OperationModel) => readonly CheckDefinition[]);

export function materialize(exp: ChecksExport, model: OperationModel): readonly CheckDefinition[] {
  return typeof exp === 'function' ? exp(model) : exp;
}

/**
 * A module the run's one-script bundle holds (bin/run-cache.js registers its suites' modules by the
 * URL they have in the bundle's layout); undefined when the code runs as separate modules.
 */
function bundledModule(href: string): unknown {
  const modules = (globalThis as Record<symbol, unknown>)[Symbol.for('fhir-conformance.modules')];
  return modules instanceof Map ? modules.get(href) : undefined;
}

/** Every check of the suites, generated ones from the target's operation model; folders in name order. */
export async function collectChecks(model: OperationModel): Promise<CatalogCheck[]> {
  const folders = (await readdir(SUITES_DIR, { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  const all: CatalogCheck[] = [];
  for (const folder of folders) {
    let mod: { default?: ChecksExport };
    try {
      const href = pathToFileURL(resolve(SUITES_DIR, folder, `checks${MODULE_EXT}`)).href;
      mod = (bundledModule(href) ?? (await import(href))) as { default?: ChecksExport };
    } catch (e) {
      if ((e as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' && String(e).includes(`${folder}/checks${MODULE_EXT}`)) continue;
      throw e;
    }
    if (mod.default) for (const c of materialize(mod.default, model)) all.push({ ...c, folder });
  }
  return all;
}
