/**
 * `npm run build` (also `prepack`): the package's runnable JavaScript in dist/.
 *
 * 1. dist/ is removed (no stale module of a deleted source can be packed);
 * 2. `tsc -p tsconfig.build.json` compiles src/ and suites/ to dist/src/ and dist/suites/;
 * 3. every other file under src/ and suites/ (JSON schemas, requirements.json, report assets) is
 *    copied beside them, so code that finds them relative to its own module finds them in dist/ too;
 * 4. the two FHIR schemas are extracted to dist/fhir-schemas/ (scripts/extract-fhir-schemas.ts);
 * 5. the run as one CommonJS script, dist/run.cjs (bin/run-cache.js `writeRunScript`), which the
 *    installed package's bin runs with a V8 code cache beside it (bin/run-script.js).
 *
 *   node --import tsx scripts/build.ts
 */
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
// @ts-expect-error plain JavaScript module of the bin, without types
import { writeRunScript } from '../bin/run-cache.js';
import { PROJECT_ROOT } from '../src/paths.js';
import { extractFhirSchemas } from './extract-fhir-schemas.js';

const DIST = join(PROJECT_ROOT, 'dist');
const started = performance.now();

rmSync(DIST, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
// Its diagnostics and this script's summary go to stderr: `npm pack --json` keeps a clean stdout.
execFileSync(process.execPath, [tsc, '-p', join(PROJECT_ROOT, 'tsconfig.build.json')], { stdio: ['ignore', process.stderr, process.stderr] });

let assets = 0;
for (const dir of ['src', 'suites']) {
  for (const entry of readdirSync(join(PROJECT_ROOT, dir), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || entry.name.endsWith('.ts')) continue;
    const from = join(entry.parentPath, entry.name);
    cpSync(from, join(DIST, relative(PROJECT_ROOT, from)));
    assets++;
  }
}

const schemas = extractFhirSchemas(join(DIST, 'fhir-schemas'));
await writeRunScript(PROJECT_ROOT, DIST);
console.error(
  `dist/: compiled src/ and suites/, ${assets} asset files, ` +
    schemas.map((s) => `${relative(PROJECT_ROOT, s.file)} ${(s.bytes / 1024).toFixed(0)} KiB`).join(', ') +
    `, run.cjs (${((performance.now() - started) / 1000).toFixed(1)} s)`,
);
