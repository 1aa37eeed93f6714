/**
 * The algorithm each client signs its assertions with, settled against what the target publishes
 * before any token request: smart-configuration's `token_endpoint_auth_signing_alg_values_supported`
 * (RFC 8414). A client whose key leaves the choice open (an RSA key without `alg`) takes the first
 * algorithm of the target's list it can sign; a client whose key-given algorithm the list lacks
 * stops the run (exit 2) naming the field. An `alg` the config states wins, listed or not (the
 * user's word against an incomplete list). A target that publishes no list (or serves
 * smart-configuration only with a token) leaves each client with its preferred algorithm.
 */
import { chooseSigningAlg, publishedSigningAlgs } from '../auth/algorithms.js';
import type { ResolvedClient, ResolvedConfig } from '../config/index.js';
import { HttpClient } from '../http/client.js';
import { SERVICE_HTTP } from '../service/http.js';
import { PATHS } from '../service/paths.js';
import { SetupStop } from './preflight.js';

const FIELD = 'token_endpoint_auth_signing_alg_values_supported';
/** Longest the read of smart-configuration may take (less when timeouts.requestMs is shorter). */
const READ_TIMEOUT_MS = 10_000;

/** The config with each client's algorithm chosen against `published` (undefined: nothing published). Throws SetupStop(2) when a client has none in common. */
export function applySigningAlgs(config: ResolvedConfig, published: readonly string[] | undefined): ResolvedConfig {
  if (published === undefined) return config;
  const problems: string[] = [];
  const clients = config.clients.map((c, i): ResolvedClient => {
    if (c.algSource === 'config') return c;
    const alg = chooseSigningAlg(c.algs, published);
    if (alg === undefined) {
      const by = c.algSource === 'jwk' ? `the "alg" of clients[${i}].privateKey` : `its key (clients[${i}].privateKey)`;
      problems.push(
        `clients[${i}] (role ${c.role}, client "${c.clientId}") signs ${c.algs.join(', ')} (by ${by}), which the target's ${FIELD} (${published.join(', ')}) does not list`,
      );
      return c;
    }
    if (alg === c.alg) return c;
    return { ...c, alg, algSource: 'target', publicJwk: { ...c.publicJwk, alg } };
  });
  if (problems.length > 0) {
    throw new SetupStop(
      2,
      `Cannot run: ${problems.join('; ')}. Register a key whose algorithm the target lists (fhir-conformance init --alg ALG generates one), ` +
        `or, if the target accepts the algorithm all the same, state it as clients[].alg in ${config.source}.`,
    );
  }
  return { ...config, clients };
}

/**
 * Reads the target's published list (one GET of smart-configuration, not retried or paced) and
 * applies it. Returns the config and one progress line.
 */
export async function settleSigningAlgs(
  config: ResolvedConfig,
  opts: { deadline: number; counter?: { count: number } },
): Promise<{ config: ResolvedConfig; line: string }> {
  const http = new HttpClient({
    baseUrl: config.baseUrl,
    timeoutMs: Math.min(config.timeouts.requestMs, READ_TIMEOUT_MS),
    deadline: opts.deadline,
    protocol: SERVICE_HTTP,
  });
  let published: string[] | undefined;
  try {
    const res = await http.request({
      url: PATHS.smartConfiguration,
      headers: { accept: 'application/json' },
      retry: 'none',
      pace: false,
      skipInvariants: true,
    });
    published = res.status === 200 ? publishedSigningAlgs(res.json) : undefined;
  } catch {
    published = undefined;
  } finally {
    if (opts.counter) opts.counter.count += http.stats.requests;
    await http.close();
  }
  const settled = applySigningAlgs(config, published);
  const note = (c: ResolvedClient) =>
    c.algSource === 'target' ? " (from the target's list)" : published && !published.includes(c.alg) ? " (stated in the config; not in the target's list)" : '';
  const algs = settled.clients.map((c) => `${c.role} ${c.alg}${note(c)}`).join(', ');
  return { config: settled, line: `signing algorithms: ${algs}${published ? '' : ` (the target publishes no ${FIELD})`}` };
}
