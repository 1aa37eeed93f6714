#!/usr/bin/env node
// Entry point: registers the TypeScript loader, then hands over to the CLI.
import { register } from 'tsx/esm/api';
register();
// A closed pipe (`fhir-conformance faults | head`) is not an error.
for (const stream of [process.stdout, process.stderr]) stream.on('error', (e) => { if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0); else throw e; });
const { main } = await import('../src/cli.ts');
process.exitCode = await main(process.argv.slice(2));
