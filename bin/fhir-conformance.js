#!/usr/bin/env node
// Entry point. An installed package has no src/: it runs the compiled JavaScript in dist/.
// A checkout (src/ present) runs its sources transpiled into a run cache (bin/run-cache.js:
// node_modules/.cache/fhir-conformance/run/, remade file by file when a source changes), so edits
// take effect without a build; FHIR_CONFORMANCE_TSX=1 runs the TypeScript sources through tsx
// instead, FHIR_CONFORMANCE_DIST=1 runs the checkout's build (`npm run build`). The run cache's modules, and
// the build's (dist/run.cjs), run as one script with a V8 code cache (bin/run-script.js);
// FHIR_CONFORMANCE_ESM=1 runs them as ES modules.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// A closed pipe (`fhir-conformance faults | head`) is not an error.
for (const stream of [process.stdout, process.stderr]) stream.on('error', (e) => { if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0); else throw e; });

const source = new URL('../src/cli.ts', import.meta.url);
const built = new URL('../dist/src/cli.js', import.meta.url);
let entry = built;
let script;
if (existsSync(source) && process.env.FHIR_CONFORMANCE_DIST !== '1') {
  entry = undefined;
  if (process.env.FHIR_CONFORMANCE_TSX !== '1') {
    try {
      const { prepareRunCache } = await import('./run-cache.js');
      const dir = await prepareRunCache(fileURLToPath(new URL('..', import.meta.url)));
      // The run's modules as one script, its compiled code kept between processes (bin/run-script.js).
      if (process.env.FHIR_CONFORMANCE_ESM !== '1' && existsSync(`${dir}/run.cjs`)) script = `${dir}/run.cjs`;
      entry = new URL(`file://${dir}/src/cli.js`);
    } catch (e) {
      // No cache (an unwritable node_modules, esbuild missing): the sources through tsx, as before.
      if (process.env.FHIR_CONFORMANCE_DEBUG) process.stderr.write(`fhir-conformance: run cache unavailable (${e.message}); using tsx\n`);
    }
  }
  if (entry === undefined) {
    const { register } = await import('tsx/esm/api');
    register();
    entry = source;
  }
} else if (!existsSync(built)) {
  process.stderr.write('fhir-conformance: dist/ is missing; run `npm run build` (or run from a checkout with src/ and its devDependencies)\n');
  process.exit(2);
} else {
  // The build's run script (scripts/build.ts), run with a code cache beside it as a checkout's is.
  const distScript = fileURLToPath(new URL('../dist/run.cjs', import.meta.url));
  if (process.env.FHIR_CONFORMANCE_ESM !== '1' && existsSync(distScript)) script = distScript;
}
let run;
if (script !== undefined) {
  try {
    const { loadScript } = await import('./run-script.js');
    run = loadScript(script, process.argv.slice(2));
  } catch (e) {
    // A script that does not load (nothing ran yet): the bundle's ES modules, as before.
    if (process.env.FHIR_CONFORMANCE_DEBUG) process.stderr.write(`fhir-conformance: run script unusable (${e.message}); ES modules\n`);
  }
}
if (run !== undefined) {
  process.exitCode = await run();
} else {
  const { main } = await import(entry.href);
  process.exitCode = await main(process.argv.slice(2));
}
