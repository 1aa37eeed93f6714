/** docs/surfaces-by-rule.md is what `npm run gen:fault-docs` writes from today's catalogs. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderSurfacesByRule, SURFACE_DOC_PATH } from '../../src/mutation/surfaces-by-rule.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { FAULTS } from '../../src/reference/faults/index.js';
import { referenceCatalog } from '../../src/run/reference-model.js';

describe('docs/surfaces-by-rule.md', () => {
  it("is up to date (run `npm run gen:fault-docs` after changing a check's surfaces or a fault)", async () => {
    const expected = renderSurfacesByRule(await referenceCatalog(), FAULTS);
    expect(readFileSync(resolve(PROJECT_ROOT, SURFACE_DOC_PATH), 'utf8')).toBe(expected);
  }, 60_000);

  it('renders one row per check that declares its surfaces, with its faults', () => {
    const doc = renderSurfacesByRule(
      [
        { id: 'a.one', area: 'a', requirements: ['r.1'], surfaces: { release: 'R4, R5', leftOut: ['vread (not published)'] } },
        { id: 'a.two', area: 'a', requirements: ['r.2'] },
      ],
      [{ name: 'f-one', area: 'a', violates: ['r.1'], symptom: 's', checks: ['a.one'] }],
    );
    expect(doc).toContain('1 checks declare their surfaces.');
    expect(doc).toContain('| `a.one` | r.1 | R4, R5 |  |  |  |  |  |  | vread (not published) | `f-one` |');
    expect(doc).not.toContain('a.two');
  });
});
