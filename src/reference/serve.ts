/** `fhir-conformance serve`: starts the reference server and prints how to target it. */
import { createResources } from './resources/index.js';
import { startReferenceServer } from './server.js';
import type { ReferenceServer } from './server.js';
import type { ReferenceOptions } from './types.js';

export const DEFAULT_SERVE_PORT = 4780;

export async function serve(opts: ReferenceOptions & { print?: (line: string) => void }): Promise<ReferenceServer> {
  const { print = (line: string) => console.log(line), ...options } = opts;
  const server = await startReferenceServer({ ...options, port: options.port ?? DEFAULT_SERVE_PORT }, createResources);
  const faults = server.options.faults.length ? ` (faults: ${server.options.faults.join(', ')})` : '';
  print(`Reference FHIR server listening on ${server.url}${faults}`);
  print('Target config (JSON, absolute key paths):');
  print(JSON.stringify(server.targetConfig(), null, 2));
  print('Try:');
  print(`  curl -s -H 'Accept: application/fhir+json' ${server.url}/fhir/R4/metadata`);
  return server;
}
