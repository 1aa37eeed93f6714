/**
 * One taxonomy (src/requirements/types.ts): requirement areas, suite folders
 * (suites/<area>/, checks `<area>.<slug>`) and fault files
 * (src/reference/faults/<area>.ts) use the same area names.
 */
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, SUITES_DIR } from '../../src/paths.js';
import type { FaultDef } from '../../src/reference/faults/types.js';
import { AREAS, CROSS_CUTTING_SUITES, REQUIREMENT_ONLY_AREAS, loadRequirements, suiteAreas } from '../../src/requirements/index.js';
import { referenceCatalog } from '../../src/run/reference-model.js';

const FAULT_DIR = resolve(PROJECT_ROOT, 'src/reference/faults');
/** Files of the fault folder that hold no faults: the catalog, the contracts, the shared response edits. */
const NOT_FAULT_FILES = ['index.ts', 'types.ts', 'edit.ts'];

const suiteFolders = readdirSync(SUITES_DIR, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();
const faultFiles = readdirSync(FAULT_DIR)
  .filter((f) => f.endsWith('.ts') && !NOT_FAULT_FILES.includes(f))
  .sort();

describe('one taxonomy', () => {
  it('every requirement area is a known area; requirement-only areas are known areas', () => {
    expect([...new Set(loadRequirements().map((r) => r.area))].filter((a) => !(AREAS as readonly string[]).includes(a))).toEqual([]);
    expect(Object.keys(REQUIREMENT_ONLY_AREAS).filter((a) => !(AREAS as readonly string[]).includes(a))).toEqual([]);
    expect(Object.keys(CROSS_CUTTING_SUITES).filter((a) => (AREAS as readonly string[]).includes(a))).toEqual([]);
  });

  it('the suite folders are the suite areas: every requirement area but the requirement-only ones, and the cross-cutting suites', () => {
    expect(suiteFolders).toEqual(suiteAreas());
  });

  it("a check's area is its suite folder and its id starts with it", async () => {
    const wrong = (await referenceCatalog())
      .filter((c) => c.area !== c.folder || !c.id.startsWith(`${c.folder}.`))
      .map((c) => `${c.folder}: ${c.id} (area ${c.area})`);
    expect(wrong).toEqual([]);
  }, 60_000);

  it('every fault file is named after a suite area and holds only faults of that area', async () => {
    expect(faultFiles.map((f) => f.replace(/\.ts$/, '')).filter((a) => !suiteAreas().includes(a))).toEqual([]);
    const wrong: string[] = [];
    for (const file of faultFiles) {
      const { faults = [] } = (await import(pathToFileURL(resolve(FAULT_DIR, file)).href)) as { faults?: FaultDef[] };
      for (const f of faults) if (f.area !== file.replace(/\.ts$/, '')) wrong.push(`${file}: ${f.name} (area ${f.area})`);
    }
    expect(wrong).toEqual([]);
  });

  it('the catalog lists every fault file, with the faults that file exports', async () => {
    const { FAULT_MODULES } = await import('../../src/reference/faults/index.js');
    expect(Object.keys(FAULT_MODULES).sort()).toEqual(faultFiles.map((f) => f.replace(/\.ts$/, '')));
    for (const file of faultFiles) {
      const { faults = [] } = (await import(pathToFileURL(resolve(FAULT_DIR, file)).href)) as { faults?: FaultDef[] };
      expect(FAULT_MODULES[file.replace(/\.ts$/, '')], file).toBe(faults);
    }
  });

  it("every fault names the checks it must fail, one of them in the fault's own area, all of them in the catalog", async () => {
    const { FAULTS } = await import('../../src/reference/faults/index.js');
    const ids = new Set((await referenceCatalog()).map((c) => c.id));
    const wrong: string[] = [];
    for (const f of FAULTS) {
      const checks = f.checks ?? [];
      if (checks.length === 0) wrong.push(`${f.name}: names no check`);
      if (checks.length && !checks.some((id) => id.startsWith(`${f.area}.`))) wrong.push(`${f.name}: area ${f.area}, checks ${checks.join(', ')}`);
      for (const id of checks) if (!ids.has(id)) wrong.push(`${f.name}: no check ${id}`);
    }
    expect(wrong).toEqual([]);
  }, 60_000);
});
