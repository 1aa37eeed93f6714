/**
 * The run's preflight: before any check, can this run work at all?
 *   1. the config names real clients (not init's placeholder id);
 *   2. the target answers: at least one discovery document comes back as JSON
 *      with a status below 500;
 *   3. each configured client gets a token.
 * When one of these cannot hold, the run stops at once (within PREFLIGHT_BUDGET_MS)
 * with one paragraph saying what to fix: exit 2 for the user's own set-up (a
 * placeholder client id, an assertion the token endpoint refuses), exit 3 for a
 * target that cannot be reached or is down. Anything the target answers that a
 * check can judge (a wrong document, a token endpoint that answers junk, FHIR
 * endpoints that misbehave) does not stop the run: that is what the suite is for.
 */
import { networkOf, type ResolvedClient, type ResolvedConfig } from '../config/index.js';
import { CLIENT_ID_PLACEHOLDER } from '../config/init.js';
import { ConformanceError } from '../errors.js';
import { HttpClient } from '../http/client.js';
import { SERVICE_HTTP } from '../service/http.js';
import { PATHS } from '../service/paths.js';
import { scopeOf } from '../service/scopes.js';
import type { HttpResponse } from '../http/types.js';
import type { Runtime } from '../engine/runtime.js';
import { redactString, registerSecret } from '../redact.js';
import { brokerOptionsOf, clientKey, declaredScopes, TokenBroker } from '../auth/broker.js';
import { SERVICE_BINDING } from '../service/run.js';
import { classifyNetworkFailure, networkFix } from './network-advice.js';

/** The whole preflight (documents, then tokens) ends within this. */
export const PREFLIGHT_BUDGET_MS = 25_000;
/** Longest one preflight request may take (less when timeouts.requestMs is shorter). */
const PROBE_TIMEOUT_MS = 12_000;
/** The documents a target publishes without a token (spec "Discovery"). */
export const PROBE_PATHS = [PATHS.openapi, PATHS.metadata.R4, PATHS.smartConfiguration] as const;
/** A scope every client of the service reads with (the spec's own example). */
const PROBE_SCOPE = scopeOf('MedicationRequest', 'rs');

/**
 * The scopes of a client's preflight token: the ones the config declares it holds (clients[].scopes),
 * so the run's checks that judge no scope use this one token (CheckDefinition.coveringTokens);
 * PROBE_SCOPE when it declares none. A read-only run asks for the read scopes only (declaredScopes).
 */
export function probeScopes(client: { scopes?: readonly string[] }, readOnly = false): string[] {
  return declaredScopes(client, readOnly) ?? [PROBE_SCOPE];
}

/** The run cannot work: the exit code and one paragraph of what to fix. */
export class SetupStop extends Error {
  constructor(
    readonly exitCode: 2 | 3,
    message: string,
  ) {
    super(message);
    this.name = 'SetupStop';
  }
}

/** Client ids that are still init's placeholder (or look like one): stop before any request. */
export function checkClientIds(config: Pick<ResolvedConfig, 'clients' | 'source'>): void {
  const placeholders = config.clients
    .map((c, i) => ({ c, i }))
    .filter(({ c }) => c.clientId === CLIENT_ID_PLACEHOLDER || /^REPLACE[-_ ]|^<.*>$|^(TODO|CHANGE[-_ ]?ME)\b/i.test(c.clientId));
  if (placeholders.length === 0) return;
  const which = placeholders.map(({ c, i }) => `clients[${i}] (role "${c.role}") still has the client id "${c.clientId}"`).join('; ');
  throw new SetupStop(
    2,
    `Cannot run: ${which} in ${config.source}. ` +
      'Register the public key set that `fhir-conformance init` printed (keys/main.public.jwks.json) with the target, ' +
      'then put the client id the target assigned into the config. ' +
      'Against the local reference: `fhir-conformance serve --client YOUR-ID=keys/main.public.jwks.json` registers it.',
  );
}

type Probe = { path: string; res: HttpResponse; usable: boolean } | { path: string; error: ConformanceError };

/** Step 2: the target answers. Returns one progress line; throws SetupStop(3) when nothing usable comes back. */
export async function probeTarget(config: ResolvedConfig, opts: { deadline: number; counter?: { count: number } }): Promise<string> {
  const timeoutMs = Math.min(config.timeouts.requestMs, PROBE_TIMEOUT_MS);
  // Bounded by the probe timeout (all three in parallel), and by the run's own deadline.
  const http = new HttpClient({ baseUrl: config.baseUrl, timeoutMs, deadline: opts.deadline, protocol: SERVICE_HTTP, network: networkOf(config) });
  let probes: Probe[];
  try {
    probes = await Promise.all(
      PROBE_PATHS.map(async (path): Promise<Probe> => {
        try {
          const res = await http.request({
            url: path,
            headers: { accept: 'application/fhir+json, application/json' },
            retry: 'none',
            pace: false,
            skipInvariants: true,
          });
          return { path, res, usable: res.status < 500 && res.json !== undefined && !res.bodyTruncated };
        } catch (e) {
          return { path, error: e instanceof ConformanceError ? e : new ConformanceError('ERR_PROTOCOL', String(e)) };
        }
      }),
    );
  } finally {
    if (opts.counter) opts.counter.count += http.stats.requests;
    await http.close();
  }
  if (probes.some((p) => 'res' in p && p.usable)) {
    return `target answers at ${config.baseUrl} (${probes.map((p) => `${p.path} ${'res' in p ? p.res.status : p.error.code}`).join(', ')})`;
  }
  const advice = networkAdvice(config, probes);
  if (advice) throw new SetupStop(advice.exitCode, advice.text);
  throw new SetupStop(3, unreachableParagraph(config, probes, timeoutMs));
}

/**
 * Every probe failed for one TLS or proxy reason the config (or the proxy URL) can fix: the
 * paragraph names the field. Exit 2 for proxy credentials (the user's set-up, like a refused
 * assertion), 3 for the rest (the target cannot be reached as configured).
 */
function networkAdvice(config: ResolvedConfig, probes: Probe[]): { exitCode: 2 | 3; text: string } | undefined {
  const errors = probes.flatMap((p) => ('error' in p ? [p.error] : []));
  if (errors.length !== probes.length || errors.length === 0) return undefined;
  const kinds = errors.map((e) => classifyNetworkFailure(e, config.baseUrl));
  const kind = kinds[0];
  if (kind === undefined || kinds.some((k) => k !== kind)) return undefined;
  const first = errors[0]!;
  const text = `Cannot run: ${redactString(first.message)} (every discovery document of ${config.baseUrl}, baseUrl in ${config.source}). ${networkFix(kind, config, first)}`;
  return { exitCode: kind === 'proxy-auth' ? 2 : 3, text };
}

function unreachableParagraph(config: ResolvedConfig, probes: Probe[], timeoutMs: number): string {
  const where = `${config.baseUrl} (baseUrl in ${config.source})`;
  const errors = probes.flatMap((p) => ('error' in p ? [p.error] : []));
  if (errors.length === probes.length) {
    const first = errors[0]!;
    const same = errors.every((e) => e.code === first.code);
    const what = redactString(first.message);
    if (same && first.code === 'ERR_TARGET_UNREACHABLE')
      return `Cannot run: the target is unreachable: ${what}. Nothing answers at ${where}. Check the scheme, host and port of baseUrl, that the service is running, and that this machine may reach it (VPN, firewall, proxy).`;
    if (same && first.code === 'ERR_DNS')
      return `Cannot run: ${what}. Check the host name in ${where} for typos, and that this machine's DNS (or VPN) knows it.`;
    if (same && first.code === 'ERR_TLS')
      return `Cannot run: ${what}. Check that ${where} is the service's HTTPS address; if it uses a certificate of a private CA, set tls.ca in ${config.source} to that CA's certificate.`;
    if (same && first.code === 'ERR_TIMEOUT')
      return `Cannot run: the target accepted connections at ${where} but gave no complete answer within ${seconds(timeoutMs)} to any discovery document (${what}). The service looks hung or down (a load balancer with no healthy backend does this). Check its health; if it is only slow, raise timeouts.requestMs.`;
    if (same && first.code === 'ERR_DEADLINE')
      return `Cannot run: the run deadline (timeouts.runMs in ${config.source}) passed before the target answered any discovery document. Raise timeouts.runMs.`;
    if (same && first.code === 'ERR_PROTOCOL')
      return `Cannot run: the target does not speak HTTP as expected at ${where}: ${what}. Check that baseUrl points at the service's HTTP(S) port and scheme.`;
    return `Cannot run: no discovery document could be fetched from ${where}: ${probes.map((p) => `GET ${p.path}: ${'error' in p ? redactString(p.error.message) : ''}`).join('; ')}. Check baseUrl and that the service is up.`;
  }
  const answers = probes.map((p) => `GET ${p.path}: ${'error' in p ? redactString(p.error.message) : describeAnswer(p.res)}`).join('; ');
  const all5xx = probes.every((p) => 'res' in p && p.res.status >= 500);
  return all5xx
    ? `Cannot run: the target at ${where} answers, but only with server errors (${answers}). The service looks down. Check its health and try again when it answers.`
    : `Cannot run: the target at ${where} answers, but not as the service: no discovery document came back as JSON (${answers}). It looks down, or baseUrl points at something else (a gateway's error page, a web site, a redirect): check baseUrl and the service's health.`;
}

/** `502 text/html`, `200 application/fhir+json, body over the 2 MiB cap`, `302 to /x`. */
function describeAnswer(res: HttpResponse): string {
  const type = (res.headers['content-type'] ?? 'no content type').split(';')[0]!.trim();
  const parts = [`${res.status} ${type}`];
  if (res.bodyTruncated) parts.push('body over the size cap');
  else if (res.status >= 300 && res.status < 400 && res.headers.location) parts.push(`redirect to ${redactString(res.headers.location).slice(0, 120)}`);
  else if (res.json === undefined) parts.push('not JSON');
  return parts.join(', ');
}

/**
 * Step 3: each configured client gets a token. A 401 for a client is the user's
 * set-up (client id, registered key, token URL): SetupStop(2) naming the client.
 * No answer from the token endpoint for any client: SetupStop(3). Any other answer
 * (a 400, a token response without access_token) is for the auth checks to judge.
 */
export async function probeTokens(rt: Runtime, opts: { startedAt: number }): Promise<string> {
  const config = rt.config;
  const left = () => opts.startedAt + PREFLIGHT_BUDGET_MS - Date.now();
  const results = await Promise.all(
    config.clients.map(async (client, index) => {
      const timeoutMs = Math.max(1000, Math.min(config.timeouts.requestMs, PROBE_TIMEOUT_MS, left()));
      const scopes = probeScopes(client, config.profile === 'read-only');
      try {
        return { client, index, scopes, res: await rt.tokens.request(client.clientId, { scopes, timeoutMs }) };
      } catch (e) {
        return { client, index, scopes, error: e instanceof ConformanceError ? e : new ConformanceError('ERR_PROTOCOL', String(e)) };
      }
    }),
  );
  const tokenUrl = results.find((r) => r.res)?.res?.exchange.request.url ?? config.tokenUrl ?? 'the token endpoint';
  const refused = results.filter((r) => r.res?.status === 401);
  if (refused.length > 0) {
    const lines = refused.map((r) => `${clientName(r.client, r.index)}: ${tokenAnswer(r.res!)}`);
    throw new SetupStop(
      2,
      `Cannot run: the token endpoint ${redactString(tokenUrl)} refused the client assertion of ${lines.join('; ')}. ` +
        `For ${refused.length === 1 ? 'that client' : 'each'}, check in ${config.source}: the clientId is the id the target assigned; ` +
        'the registered public key is the one of the configured private key (same kid and alg); ' +
        `tokenUrl is the endpoint the target names (it is the assertion's aud); and, when the target fetches your keys from a jwks_uri, that it can reach it.`,
    );
  }
  const down = results.filter((r) => r.error || (r.res && r.res.status >= 500));
  if (down.length === results.length && results.length > 0) {
    const first = down[0]!;
    const what = first.error ? redactString(first.error.message) : tokenAnswer(first.res!);
    // The token endpoint may be another host (another CA, a client certificate, the proxy's reach): name the fix.
    const kind = first.error ? classifyNetworkFailure(first.error, tokenUrl) : undefined;
    if (kind && first.error && down.every((r) => r.error && classifyNetworkFailure(r.error, tokenUrl) === kind))
      throw new SetupStop(
        kind === 'proxy-auth' ? 2 : 3,
        `Cannot run: the token endpoint ${redactString(tokenUrl)} could not be reached (${what}). ${networkFix(kind, config, first.error)}`,
      );
    throw new SetupStop(
      3,
      `Cannot run: the token endpoint ${redactString(tokenUrl)} issued no token to any client (${what}). ` +
        `The discovery documents answered, so the target is up but its token endpoint is not: check tokenUrl in ${config.source} (or the token_endpoint the target publishes) and the token service's health.`,
    );
  }
  const ok = results.filter((r) => r.res && r.res.status < 300 && typeof (r.res.json as { access_token?: unknown } | undefined)?.access_token === 'string');
  // The run uses these tokens instead of spending another token request on each (the issuance limit is 20 a minute).
  // Under the name the run's requests know the client by (a second `extra` client: its client id).
  for (const r of ok) rt.tokens.adopt(clientKey(config.clients, r.client), r.scopes, r.res!);
  return `tokens issued for ${ok.length} of ${results.length} client(s)${ok.length ? ` (${ok.map((r) => r.client.role).join(', ')})` : ''}`;
}

/** A token of the main client for discovery, and the token response it came from (for the run's broker to adopt). */
export interface DiscoveryBearer {
  bearer(): Promise<string | undefined>;
  issued(): { scopes: string[]; res: HttpResponse } | undefined;
}

/**
 * A bearer for the discovery documents a target may protect (their authentication is "not
 * stated"): one token of the main client, requested through `http` only when a document answers
 * 401/403 without one (never for a target that serves them openly). The token URL is the
 * config's, else the one smart-configuration names, else the spec's `POST /auth/token` on the base.
 * Nothing to be had (no main client, a refusal): undefined, and discovery reports the 401.
 */
export function discoveryBearer(config: ResolvedConfig, http: HttpClient): DiscoveryBearer {
  let pending: Promise<string | undefined> | undefined;
  let issued: HttpResponse | undefined;
  const issue = async (): Promise<string | undefined> => {
    try {
      const tokenUrl = config.tokenUrl ?? (await SERVICE_BINDING.tokenUrl(http, config.baseUrl));
      const broker = new TokenBroker({ http, tokenUrl, ...brokerOptionsOf(config) });
      const res = await broker.request('main', { scopes: [PROBE_SCOPE] });
      const token = res.status < 300 ? (res.json as { access_token?: unknown } | undefined)?.access_token : undefined;
      if (typeof token !== 'string' || token === '') return undefined;
      registerSecret(token);
      issued = res;
      return token;
    } catch (e) {
      if (e instanceof ConformanceError && e.code === 'ERR_INTERRUPTED') throw e;
      return undefined;
    }
  };
  return {
    bearer: () => (pending ??= issue()),
    issued: () => (issued ? { scopes: [PROBE_SCOPE], res: issued } : undefined),
  };
}

function clientName(c: ResolvedClient, i: number): string {
  return `client "${c.clientId}" (clients[${i}], role ${c.role}, kid ${c.kid}, ${c.alg})`;
}

/** `401, HPB-00106: Authentication failed ...` from a token response. */
function tokenAnswer(res: HttpResponse): string {
  const body = res.json as { issue?: Array<{ diagnostics?: unknown; code?: unknown }>; error?: unknown; error_description?: unknown } | undefined;
  const issue = Array.isArray(body?.issue) ? body.issue[0] : undefined;
  const detail =
    typeof issue?.diagnostics === 'string'
      ? issue.diagnostics
      : typeof body?.error === 'string'
        ? [body.error, body.error_description].filter((v) => typeof v === 'string').join(': ')
        : res.text;
  const line = redactString(String(detail)).replace(/\s+/g, ' ').trim().slice(0, 160);
  return `HTTP ${res.status}${line ? ` "${line}"` : ''}`;
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}
