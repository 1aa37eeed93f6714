/**
 * Refreshes the packaged copy of the spec, spec/service-interface-spec.md,
 * from its source of truth, ../shared/spec/service-interface-spec.md.
 * Run: npm run sync-spec
 */
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { SHARED_SPEC_PATH, SPEC_PATH } from '../src/requirements/spec.js';

if (!existsSync(SHARED_SPEC_PATH)) {
  console.error(`sync-spec: no spec at ${SHARED_SPEC_PATH}; nothing to copy`);
  process.exit(1);
}
const same = existsSync(SPEC_PATH) && readFileSync(SPEC_PATH).equals(readFileSync(SHARED_SPEC_PATH));
if (same) {
  console.log(`sync-spec: ${SPEC_PATH} is up to date`);
} else {
  copyFileSync(SHARED_SPEC_PATH, SPEC_PATH);
  console.log(`sync-spec: copied ${SHARED_SPEC_PATH} to ${SPEC_PATH}`);
}
