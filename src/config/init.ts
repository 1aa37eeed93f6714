/** `fhir-conformance init`: discover the token endpoint, generate a key pair, write a config skeleton. */
import { access, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import { ConformanceError } from '../errors.js';
import { SMART_CONFIGURATION_PATH, tokenEndpointFrom } from '../auth/token-url.js';
import { CONFIG_SCHEMA_URL, validateConfig, type RawConfig } from './validate.js';
import { fetch as undiciFetch } from 'undici';
import { createDispatcher, proxyFromEnv } from '../http/dispatcher.js';

export interface InitResult {
  configPath: string;
  keyPath: string;
  /** The public key set, written next to the private key (what `serve --client ID=FILE` registers). */
  publicJwksPath: string;
  /** Public key set to register with the target for the main client. */
  publicJwks: { keys: JWK[] };
  /** What the user still has to fill in, one line each. */
  missing: string[];
}

export const CLIENT_ID_PLACEHOLDER = 'REPLACE-WITH-CLIENT-ID';
const DISCOVERY_TIMEOUT_MS = 15_000;

async function discoverTokenUrl(baseUrl: string, fetchFn: typeof fetch): Promise<string> {
  const url = `${baseUrl}${SMART_CONFIGURATION_PATH}`;
  let res: Response;
  try {
    res = await fetchFn(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS) });
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).name;
    throw new ConformanceError('ERR_TARGET_UNREACHABLE', `cannot reach ${url} (${cause})`, {
      fix: 'check the base URL and that the target is running and reachable from here',
      cause: e,
    });
  }
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    body = undefined;
  }
  return tokenEndpointFrom(res.status, body, url);
}

/** fetch through the proxy the environment names (HTTPS_PROXY, HTTP_PROXY, NO_PROXY), as `run` does; plain fetch without one. */
function proxiedFetch(env: NodeJS.ProcessEnv): typeof fetch {
  const proxy = proxyFromEnv(env);
  if (!proxy) return fetch;
  const dispatcher = createDispatcher({ proxy }, DISCOVERY_TIMEOUT_MS);
  return ((url: string, init?: RequestInit) => undiciFetch(url, { ...(init as object), dispatcher })) as unknown as typeof fetch;
}

/** Refuses to overwrite: init never replaces an existing key or config. */
async function ensureAbsent(path: string): Promise<void> {
  const exists = await access(path).then(
    () => true,
    () => false,
  );
  if (exists) {
    throw new ConformanceError('ERR_USAGE', `${path} already exists; not overwriting it`, { fix: 'choose another output directory or move the file away' });
  }
}

export async function initConfig(opts: { baseUrl: string; outDir: string; fetch?: typeof fetch }): Promise<InitResult> {
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');
  if (!/^https?:\/\/\S+$/.test(baseUrl)) {
    throw new ConformanceError('ERR_USAGE', `base URL "${opts.baseUrl}" is not an http(s) URL`, { fix: 'pass e.g. https://staging.example.com' });
  }
  const tokenUrl = await discoverTokenUrl(baseUrl, opts.fetch ?? proxiedFetch(process.env));

  const { privateKey, publicKey } = await generateKeyPair('ES384', { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: 'ES384', use: 'sig' };

  const outDir = resolve(opts.outDir);
  const keyPath = join(outDir, 'keys', 'main.private.jwk.json');
  const publicJwksPath = join(outDir, 'keys', 'main.public.jwks.json');
  const publicJwks = { keys: [{ ...publicJwk, kid, alg: 'ES384', use: 'sig' }] };
  const configPath = join(outDir, 'target.json');
  const config: RawConfig = {
    $schema: relative(outDir, fileURLToPath(CONFIG_SCHEMA_URL)),
    baseUrl,
    tokenUrl,
    clients: [{ role: 'main', clientId: CLIENT_ID_PLACEHOLDER, kid, alg: 'ES384', privateKey: { file: relative(outDir, keyPath) } }],
    fixtures: {},
    profile: 'full',
  };
  validateConfig(config, configPath);

  await ensureAbsent(keyPath);
  await ensureAbsent(publicJwksPath);
  await ensureAbsent(configPath);
  await mkdir(dirname(keyPath), { recursive: true, mode: 0o700 });
  await writeFile(keyPath, `${JSON.stringify(privateJwk, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  await writeFile(publicJwksPath, `${JSON.stringify(publicJwks, null, 2)}\n`, { flag: 'wx' });
  await writeFile(configPath, `${JSON.stringify(config, null, 2)}\n`, { flag: 'wx' });

  return {
    configPath,
    keyPath,
    publicJwksPath,
    publicJwks,
    missing: [
      `clients[0].clientId: register the public JWKS with the target, then replace "${CLIENT_ID_PLACEHOLDER}" with the client id it assigns`,
      "fixtures: the ids of the target's fixture records (keys listed in docs/config.md); checks needing a missing fixture are skipped",
      'clients: a "second-org" client (another organization) for the isolation checks',
      'clients: a "production" client (production key) for the browser-origin checks',
    ],
  };
}
