/**
 * The fault catalog: every `faults/<area>.ts` exports `faults: FaultDef[]`,
 * each planting one violation of one spec statement in the reference.
 */
import { readdirSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FaultDef } from './types.js';

export type { FaultDef, FaultResponse, FaultRequest } from './types.js';

const dir = dirname(fileURLToPath(import.meta.url));
// `.ts` from the sources, `.js` from the build (dist/).
const ext = extname(fileURLToPath(import.meta.url));
const files = readdirSync(dir)
  .filter((f) => f.endsWith(ext) && /^[a-z0-9-]+\.[jt]s$/.test(f) && f !== `index${ext}` && f !== `types${ext}`)
  .sort();
const modules = (await Promise.all(files.map((f) => import(pathToFileURL(join(dir, f)).href)))) as Array<{ faults?: FaultDef[] }>;

export const FAULTS: readonly FaultDef[] = modules.flatMap((m) => m.faults ?? []);

const seen = new Set<string>();
for (const f of FAULTS) {
  if (seen.has(f.name)) throw new Error(`fault "${f.name}" is defined twice in src/reference/faults/`);
  seen.add(f.name);
}

export function faultNames(): string[] {
  return FAULTS.map((f) => f.name);
}

/** Checks fault names at start-up; an unknown name is a clear error. */
export function resolveFaults(names: readonly string[]): FaultDef[] {
  return names.map((name) => {
    const fault = FAULTS.find((f) => f.name === name);
    if (!fault) throw new Error(`unknown fault "${name}"; run \`fhir-conformance faults\` for the catalog`);
    return fault;
  });
}
