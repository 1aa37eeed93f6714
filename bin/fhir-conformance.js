#!/usr/bin/env node
// Entry point. An installed package has no src/: it runs the compiled JavaScript in dist/.
// A checkout (src/ present) runs the TypeScript sources through tsx, so edits take effect
// without a rebuild; FHIR_CONFORMANCE_DIST=1 makes a checkout run its build (`npm run build`).
import { existsSync } from 'node:fs';

// A closed pipe (`fhir-conformance faults | head`) is not an error.
for (const stream of [process.stdout, process.stderr]) stream.on('error', (e) => { if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0); else throw e; });

const source = new URL('../src/cli.ts', import.meta.url);
const built = new URL('../dist/src/cli.js', import.meta.url);
let entry = built;
if (existsSync(source) && process.env.FHIR_CONFORMANCE_DIST !== '1') {
  const { register } = await import('tsx/esm/api');
  register();
  entry = source;
} else if (!existsSync(built)) {
  process.stderr.write('fhir-conformance: dist/ is missing; run `npm run build` (or run from a checkout with src/ and its devDependencies)\n');
  process.exit(2);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
