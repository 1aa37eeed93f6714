/**
 * Locations inside the installed package. The code runs either from the sources
 * (`<root>/src/paths.ts`, through tsx or vitest) or from the build
 * (`<root>/dist/src/paths.js`), or from a checkout's run cache (bin/run-cache.js,
 * `<root>/node_modules/.cache/fhir-conformance/run/src/paths.js`, or its bundle's
 * `bundles/<key>/src/paths.js`); all resolve to the same package root.
 */
import { dirname, extname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
/** Extension of this project's modules as they run: `.ts` from the sources, `.js` from `dist/`. */
export const MODULE_EXT = extname(fileURLToPath(import.meta.url)) === '.ts' ? '.ts' : '.js';
/**
 * A checkout's run cache (bin/run-cache.js): `<root>/node_modules/.cache/fhir-conformance/run/src`,
 * or a bundle of it, `<root>/node_modules/.cache/fhir-conformance/bundles/<key>/src`.
 */
const RUN_CACHE = /[\\/]node_modules[\\/]\.cache[\\/]fhir-conformance[\\/](?:run|bundles[\\/][^\\/]+)[\\/]src$/;
/** The package root (where package.json, bin/ and fixtures/ are). */
export const PROJECT_ROOT = MODULE_EXT === '.ts' ? resolve(HERE, '..') : RUN_CACHE.test(HERE) ? HERE.replace(RUN_CACHE, '') : resolve(HERE, '../..');
/** The root of the running code: the package root, or `<root>/dist` for the build. */
export const CODE_ROOT = resolve(HERE, '..');
export const SUITES_DIR = resolve(CODE_ROOT, 'suites');
export const FIXTURES_DIR = resolve(PROJECT_ROOT, 'fixtures');
/** The copy of the service interface specification shipped with the package (what the tool reads). */
export const SPEC_PATH = resolve(PROJECT_ROOT, 'spec', 'service-interface-spec.md');
/** The source of truth beside the project (absent where the package is installed elsewhere). */
export const SHARED_SPEC_PATH = resolve(PROJECT_ROOT, '..', 'shared', 'spec', 'service-interface-spec.md');
