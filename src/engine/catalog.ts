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
 * The suites' modules of the run's one-script bundle (bin/run-cache.js registers each suite's checks
 * module by the URL it has in the bundle's layout: a folder it lacks has none); undefined when the
 * code runs as separate modules.
 */
function bundledModules(): Map<string, unknown> | undefined {
  const modules = (globalThis as Record<symbol, unknown>)[Symbol.for('fhir-conformance.modules')];
  return modules instanceof Map ? (modules as Map<string, unknown>) : undefined;
}

/** Every check of the suites, generated ones from the target's operation model; folders in name order. */
export async function collectChecks(model: OperationModel): Promise<CatalogCheck[]> {
  const folders = (await readdir(SUITES_DIR, { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  const all: CatalogCheck[] = [];
  const bundled = bundledModules();
  for (const folder of folders) {
    let mod: { default?: ChecksExport };
    const href = pathToFileURL(resolve(SUITES_DIR, folder, `checks${MODULE_EXT}`)).href;
    if (bundled) {
      if (!bundled.has(href)) continue; // a folder without checks
      mod = bundled.get(href) as { default?: ChecksExport };
    } else {
      try {
        mod = (await import(href)) as { default?: ChecksExport };
      } catch (e) {
        if ((e as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' && String(e).includes(`${folder}/checks${MODULE_EXT}`)) continue;
        throw e;
      }
    }
    if (mod.default) for (const c of materialize(mod.default, model)) all.push({ ...c, folder });
  }
  return all;
}
