/**
 * The catalog of checks, outside vitest: every `suites/<area>/checks.ts`
 * exports either a list of checks or a function of the target's operation
 * model (generated checks). Used for the coverage matrix and project tests.
 */
import { readdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SUITES_DIR } from '../paths.js';
import type { OperationModel } from '../discovery/index.js';
import type { CheckDefinition } from './check.js';
import { areaRank } from '../vitest/sequencer.js';

export type ChecksExport = readonly CheckDefinition[] | ((model: OperationModel) => readonly CheckDefinition[]);

export function materialize(exp: ChecksExport, model: OperationModel): readonly CheckDefinition[] {
  return typeof exp === 'function' ? exp(model) : exp;
}

/**
 * Every check, generated ones from the given model (default: the embedded
 * reference's). `ordered` sorts areas as the scheduler runs them.
 */
export async function collectChecks(model?: OperationModel, opts: { ordered?: boolean } = {}): Promise<CheckDefinition[]> {
  const m = model ?? (await referenceModel());
  const areas = (await readdir(SUITES_DIR, { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort((a, b) => (opts.ordered ? areaRank(a) - areaRank(b) : 0) || a.localeCompare(b));
  const all: CheckDefinition[] = [];
  for (const area of areas) {
    let mod: { default?: ChecksExport };
    try {
      mod = (await import(pathToFileURL(resolve(SUITES_DIR, area, 'checks.ts')).href)) as { default?: ChecksExport };
    } catch (e) {
      if ((e as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' && String(e).includes(`${area}/checks.ts`)) continue;
      throw e;
    }
    if (mod.default) all.push(...materialize(mod.default, m));
  }
  return all;
}

async function referenceModel(): Promise<OperationModel> {
  const { createReferenceServer } = await import('../reference/index.js');
  const { HttpClient } = await import('../http/client.js');
  const { discover } = await import('../discovery/index.js');
  const server = await createReferenceServer({ port: 0 });
  const http = new HttpClient({ baseUrl: server.url });
  try {
    return await discover(http);
  } finally {
    await http.close();
    await server.close();
  }
}
