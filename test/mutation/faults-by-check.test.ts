/** docs/faults-by-check.md is what `npm run gen:fault-docs` writes from today's catalogs. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAULT_DOC_PATH, renderFaultsByCheck } from '../../src/mutation/faults-by-check.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { FAULTS } from '../../src/reference/faults/index.js';
import { referenceCatalog } from '../../src/run/reference-model.js';

describe('docs/faults-by-check.md', () => {
  it('is up to date (run `npm run gen:fault-docs` after changing a fault or a check)', async () => {
    const expected = renderFaultsByCheck(await referenceCatalog(), FAULTS);
    expect(readFileSync(resolve(PROJECT_ROOT, FAULT_DOC_PATH), 'utf8')).toBe(expected);
  }, 60_000);

  it('names only checks of the catalog', async () => {
    expect(renderFaultsByCheck(await referenceCatalog(), FAULTS)).not.toContain('## Checks named by faults but not in the catalog');
  }, 60_000);
});

describe('faults planted under chosen modes', () => {
  it('name modes and values the reference knows (FaultDef.modes), and at least one fault uses them', async () => {
    const { resolveModes } = await import('../../src/reference/types.js');
    const withModes = FAULTS.filter((f) => f.modes);
    expect(withModes.map((f) => f.name)).toContain('tenancy-upload-foreign-patient');
    for (const f of withModes) expect(() => resolveModes(f.modes), f.name).not.toThrow();
  });
});
