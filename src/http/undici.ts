/**
 * The parts of undici a run uses, loaded from their own files. undici's index loads every part of
 * the package (fetch, WebSocket, cookies, caches, mocks): about 130 ms of every process on the
 * 2-core machine, against about 40 ms for these alone (README, "Speed"). undici publishes no
 * exports map, so its files can be required. Like the index, this installs the request API
 * (`request`, `connect`...: lib/api) on every dispatcher; the proxy agent tunnels with `connect`.
 * Should a release of undici move these files, the index is loaded instead
 * (test/http/undici.test.ts asserts the files give what the index gives).
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const moduleRequire = createRequire(import.meta.url);

/**
 * undici's `lib/<file>`, when it loads and `usable` accepts it. `literal` requires the same file by
 * a literal path: the run script (bin/run-cache.js: a checkout's bundle directory, dist/run.cjs) is
 * CommonJS and its bundler follows such a `require` into undici's files, so they load with the
 * script's code cache (about 0.1 s of every start). In an ES module (FHIR_CONFORMANCE_ESM=1, the
 * tests) there is no `require`: the file is required at run time from its path, as before.
 */
function fromFile<T>(file: string, literal: () => unknown, usable: (exported: unknown) => boolean): T | undefined {
  let exported: unknown;
  try {
    exported = literal();
  } catch {
    try {
      exported = moduleRequire(`undici/lib/${file}`);
    } catch {
      return undefined; // moved in this release of undici
    }
  }
  return usable(exported) ? (exported as T) : undefined;
}

const isFunction = (v: unknown) => typeof v === 'function';
const api = fromFile<Record<string, unknown>>(
  'api/index.js',
  () => require('undici/lib/api/index.js'),
  (v) => isFunction((v as { request?: unknown } | null)?.request),
);
const Dispatcher = fromFile<typeof Undici.Dispatcher>('dispatcher/dispatcher.js', () => require('undici/lib/dispatcher/dispatcher.js'), isFunction);
const agent = fromFile<typeof Undici.Agent>('dispatcher/agent.js', () => require('undici/lib/dispatcher/agent.js'), isFunction);
const envHttpProxyAgent = fromFile<typeof Undici.EnvHttpProxyAgent>(
  'dispatcher/env-http-proxy-agent.js',
  () => require('undici/lib/dispatcher/env-http-proxy-agent.js'),
  isFunction,
);

const index = (): typeof Undici => moduleRequire('undici') as typeof Undici;
const byFile = api !== undefined && Dispatcher !== undefined && agent !== undefined && envHttpProxyAgent !== undefined;
// What the index does on load (`Object.assign(Dispatcher.prototype, api)`), else the index itself.
if (byFile) Object.assign(Dispatcher.prototype, api);

export const Agent: typeof Undici.Agent = byFile ? agent : index().Agent;
export const EnvHttpProxyAgent: typeof Undici.EnvHttpProxyAgent = byFile ? envHttpProxyAgent : index().EnvHttpProxyAgent;
