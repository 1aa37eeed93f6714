/** `fhir-conformance serve`: starts the reference server and prints how to target it. */
import { writeFile } from 'node:fs/promises';
import { createResources } from './resources/index.js';
import { startReferenceServer } from './server.js';
import type { ReferenceServer } from './server.js';
import type { ReferenceOptions } from './types.js';

export const DEFAULT_SERVE_PORT = 4780;

export interface ServeOptions extends ReferenceOptions {
  print?: (line: string) => void;
  /** The target config to print (default: the server's own, at the limits it runs under as the spec's). */
  targetConfig?: (server: ReferenceServer) => object;
  /** Also write the target config to this file (before the server reports itself ready). */
  configOut?: string;
  /** curl's options to reach the server (`--cacert ...` for `serve --tls`). */
  curlArgs?: string;
}

export async function serve(opts: ServeOptions): Promise<ReferenceServer> {
  const { print = (line: string) => console.log(line), targetConfig, configOut, curlArgs, ...options } = opts;
  const server = await startReferenceServer({ ...options, port: options.port ?? DEFAULT_SERVE_PORT }, createResources);
  const faults = server.options.faults.length ? ` (faults: ${server.options.faults.join(', ')})` : '';
  print(`Reference FHIR server listening on ${server.url}${faults}`);
  for (const c of options.extraClients ?? []) {
    const keys = c.jwksUri
      ? `keys fetched from ${c.jwksUri}`
      : `${c.jwks?.keys.length ?? 0} public key(s), kid ${c.jwks?.keys.map((k) => k.kid ?? '?').join(', ')}`;
    print(
      `Registered client "${c.clientId}": ${keys}; organization ${c.org ?? 'org-a'}, ${c.keyKind ?? 'sandbox'} key${c.scopes ? `, scopes ${c.scopes.join(' ')}` : ", the fixture clients' scopes"}`,
    );
  }
  if (options.extraClients?.length) {
    print('In your own config: set the client id to the one registered above, and copy "fixtures" (and "limits", if any) from the config below.');
  }
  const config = JSON.stringify(targetConfig ? targetConfig(server) : server.targetConfig(), null, 2);
  if (configOut) {
    try {
      await writeFile(configOut, `${config}\n`);
    } catch (e) {
      await server.close();
      throw e;
    }
    print(`Wrote the target config to ${configOut}`);
  }
  print('Target config (JSON, absolute key paths):');
  print(config);
  print('Try:');
  print(`  curl -s${curlArgs ? ` ${curlArgs}` : ''} -H 'Accept: application/fhir+json' ${server.url}/fhir/R4/metadata`);
  return server;
}
