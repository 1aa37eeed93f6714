/** Locations inside the installed package. */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const SUITES_DIR = resolve(PROJECT_ROOT, 'suites');
export const FIXTURES_DIR = resolve(PROJECT_ROOT, 'fixtures');
export const SPEC_PATH = resolve(PROJECT_ROOT, '..', 'shared', 'spec', 'service-interface-spec.md');
