/** Writes docs/faults-by-check.md and docs/surfaces-by-rule.md from the fault catalog and the check catalog (the embedded reference's model). */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { FAULT_DOC_PATH, renderFaultsByCheck } from '../src/mutation/faults-by-check.js';
import { renderSurfacesByRule, SURFACE_DOC_PATH } from '../src/mutation/surfaces-by-rule.js';
import { PROJECT_ROOT } from '../src/paths.js';
import { FAULTS } from '../src/reference/faults/index.js';
import { referenceCatalog } from '../src/run/reference-model.js';

const checks = await referenceCatalog();
writeFileSync(resolve(PROJECT_ROOT, FAULT_DOC_PATH), renderFaultsByCheck(checks, FAULTS));
console.log(`wrote ${FAULT_DOC_PATH}`);
writeFileSync(resolve(PROJECT_ROOT, SURFACE_DOC_PATH), renderSurfacesByRule(checks, FAULTS));
console.log(`wrote ${SURFACE_DOC_PATH}`);
