/** Target config: load, validate, resolve keys, and a redacted view for reports. */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { KeyObject, webcrypto } from 'node:crypto';
import type { JWK } from 'jose';
import { ConformanceError } from '../errors.js';
import type { Profile } from '../engine/types.js';
import { FIXTURE_KEYS } from './fixture-keys.js';
import { loadClientKey, type AlgSource, type SigningAlg } from './keys.js';
import { loadTls, type TlsSources } from './tls.js';
import { proxyFromEnv, redactProxyUrl, type NetworkSettings, type ProxySettings, type TlsSettings } from '../http/dispatcher.js';
import type { InProcessTarget } from '../http/in-process.js';
import { effectiveLimits, limitDeviations, SPEC_DEFAULT_KEY_RATE_PER_MINUTE, type Limits } from './limits.js';
import { configError, validateConfig, type ClientRole, type DocumentReferenceDeclarations, type KeyKind, type KeySource, type RawConfig } from './validate.js';

export { FIXTURE_KEYS } from './fixture-keys.js';
export type { AlgSource, SigningAlg } from './keys.js';
export { SPEC_LIMITS, type Limits } from './limits.js';
export { validateConfig, CONFIG_SCHEMA, type RawConfig, type ClientRole, type KeyKind, type KeySource } from './validate.js';
export type { DocumentReferenceDeclarations, DocumentType, UploadContract, UploadLevel, UploadPayload } from './validate.js';

export interface ResolvedClient {
  role: ClientRole;
  clientId: string;
  kid: string;
  /** The algorithm assertions are signed with (the run settles it against the target's published list: settleSigningAlgs). */
  alg: SigningAlg;
  /** Every algorithm the client may sign with, the preferred first: `[alg]` unless an RSA key leaves the choice open. */
  algs: SigningAlg[];
  /** Where the algorithm came from: the config's `alg`, the private JWK's `alg`, the kind of key, or the target's published list. */
  algSource: AlgSource | 'target';
  privateKey: webcrypto.CryptoKey | KeyObject;
  /** Public JWK with kid, alg and use. */
  publicJwk: JWK;
  rateLimitPerMinute: number;
  jwksUri?: string;
  /** Sandbox or production; undefined when the config does not say (checks must not assume). */
  keyKind?: KeyKind;
  /** The key's grant as provisioned; undefined when the config does not say. */
  scopes?: string[];
  /** Where the key came from (file path or env name; never the key itself). */
  keySource: KeySource;
}

export interface ResolvedConfig {
  baseUrl: string;
  tokenUrl?: string;
  clients: ResolvedClient[];
  fixtures: Record<string, string>;
  limits: Limits;
  /** One readable line per declared limit that differs from the spec's default. */
  deviations: string[];
  /** The organization's declared request ceiling per window; absent: unknown (the spec does not show it). */
  organization?: { requestsPerMinute: number };
  /**
   * `exclusive`: no other client sends token requests from the suite's source address during the run.
   * `trustedProxy`: the target sits behind a proxy that sets the forwarding headers itself.
   */
  sourceAddress?: { exclusive: boolean; trustedProxy?: boolean };
  profile: Profile;
  timeouts: { requestMs: number; runMs: number };
  jwksHosting?: { host: string; port: number; path: string };
  redactPhi: boolean;
  /** Declared $upload contract and document size maximum (`{}` when none is declared). */
  documentReference: DocumentReferenceDeclarations;
  /** Config file path, or 'embedded'. */
  source: string;
  /** The `tls` block, read (certificates, the client key and passphrase: secrets, never in reports). */
  tls?: TlsSettings;
  /** Where each TLS piece came from (what reports show). */
  tlsSources?: TlsSources;
  /** The proxy variables of the environment the config was loaded in (none for the embedded reference). */
  proxy?: ProxySettings;
  /** The embedded reference answered in this process instead of over its socket (`--transport in-process`); never in reports. */
  inProcess?: InProcessTarget;
}

/** What every HttpClient of a run is given: the TLS settings and the proxy. */
export function networkOf(config: Pick<ResolvedConfig, 'tls' | 'proxy' | 'inProcess'>): NetworkSettings | undefined {
  if (!config.tls && !config.proxy && !config.inProcess) return undefined;
  return {
    ...(config.tls ? { tls: config.tls } : {}),
    ...(config.proxy ? { proxy: config.proxy } : {}),
    ...(config.inProcess ? { inProcess: config.inProcess } : {}),
  };
}

export interface ConfigOverrides {
  profile?: Profile;
  baseUrl?: string;
  /** Recorded as `source` (default: 'embedded'; loadConfig passes the file path). */
  source?: string;
  /**
   * The environment: `tls` blocks' `env` sources, and the proxy variables (HTTPS_PROXY, HTTP_PROXY,
   * NO_PROXY). loadConfig passes process.env; without it no proxy applies (the embedded reference).
   */
  env?: NodeJS.ProcessEnv;
}

const DEFAULT_TIMEOUTS = { requestMs: 15_000, runMs: 3_600_000 };
const SINGLE_ROLES: readonly ClientRole[] = ['main', 'second-org', 'production'];

function stripTrailingSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

function checkRoles(clients: RawConfig['clients'], source: string): void {
  const firstIndex = new Map<ClientRole, number>();
  clients.forEach((c, i) => {
    const prev = firstIndex.get(c.role);
    if (prev !== undefined && SINGLE_ROLES.includes(c.role)) {
      throw configError(
        [
          {
            field: `clients[${i}].role`,
            message: `repeats role "${c.role}" (already clients[${prev}])`,
            fix: `keep one "${c.role}" client; use "extra" for additional ones`,
          },
        ],
        source,
      );
    }
    if (prev === undefined) firstIndex.set(c.role, i);
  });
  if (!firstIndex.has('main')) {
    throw configError([{ field: 'clients', message: 'has no client with role "main"', fix: 'set "role": "main" on the primary client' }], source);
  }
}

/** The declared key kind; role "production" is a production key unless declared otherwise (refused). */
function keyKindOf(c: RawConfig['clients'][number]): { keyKind?: KeyKind } {
  const keyKind = c.keyKind ?? (c.role === 'production' ? 'production' : undefined);
  return keyKind ? { keyKind } : {};
}

/** Role "production" is a production key by definition: it may not be declared a sandbox key. */
function checkKeyKinds(clients: RawConfig['clients'], source: string): void {
  clients.forEach((c, i) => {
    if (c.role === 'production' && c.keyKind === 'sandbox') {
      throw configError(
        [
          {
            field: `clients[${i}].keyKind`,
            message: 'is "sandbox" on the client with role "production"',
            fix: 'give a production key the role "production", or a sandbox key another role',
          },
        ],
        source,
      );
    }
  });
}

function checkFixtureKeys(fixtures: Record<string, string>, source: string): void {
  const unknown = Object.keys(fixtures).filter((k) => !FIXTURE_KEYS.includes(k));
  if (unknown.length === 0) return;
  throw configError(
    unknown.map((k) => ({
      field: `fixtures.${k}`,
      message: 'is not a known fixture key',
      fix: `use one of the keys of fixtures/reference/fixture-ids.json except orgA/orgB (e.g. ${FIXTURE_KEYS.slice(0, 3).join(', ')})`,
    })),
    source,
  );
}

/** The declared upload level must agree with the path (`{id}` = instance level); it is filled in from the path. */
function checkDocumentReference(declared: DocumentReferenceDeclarations | undefined, source: string): DocumentReferenceDeclarations {
  if (!declared?.upload) return { ...declared };
  const upload = declared.upload;
  const [pathPart, query = ''] = upload.path.split(/\?(.*)/s, 2) as [string, string?];
  const stray = [
    ...[...pathPart.matchAll(/\{([^}]*)\}/g)].filter((m) => m[1] !== 'id').map((m) => `${m[0]} in the path`),
    ...[...query.matchAll(/\{([^}]*)\}/g)].filter((m) => !['patient', 'type', 'category'].includes(m[1]!)).map((m) => `${m[0]} in the query`),
  ];
  if (stray.length) {
    throw configError(
      [
        {
          field: 'documentReference.upload.path',
          message: `has the placeholder ${stray.join(', ')}`,
          fix: "use {id} in the path (the instance level) and {patient}, {type} or {category} in the query (the fixture patient's id, the document's type and category tokens)",
        },
      ],
      source,
    );
  }
  const pathLevel = pathPart.includes('{id}') ? 'instance' : 'type';
  if (upload.level !== undefined && upload.level !== pathLevel) {
    throw configError(
      [
        {
          field: 'documentReference.upload.level',
          message: `is "${upload.level}" but the path ${upload.path} is ${pathLevel}-level`,
          fix: pathLevel === 'instance' ? 'set "level": "instance", or drop {id} from the path' : 'set "level": "type", or put {id} in the path',
        },
      ],
      source,
    );
  }
  if (pathLevel === 'instance' && upload.payload === 'document-reference') {
    throw configError(
      [
        {
          field: 'documentReference.upload.payload',
          message: 'is "document-reference", which creates a document: a type-level form',
          fix: 'use a path without {id}, or another payload',
        },
      ],
      source,
    );
  }
  return { ...declared, upload: { ...upload, level: pathLevel } };
}

function checkCertification(profile: Profile, deviations: ReturnType<typeof limitDeviations>, source: string): void {
  if (profile !== 'certification' || deviations.length === 0) return;
  throw configError(
    deviations.map((d) => ({
      field: `limits.${d.field}`,
      message: `declares a deviation (${d.line}), which the certification profile refuses`,
      fix: `remove limits.${d.field} or run another profile`,
    })),
    source,
  );
}

/** Validates a parsed config and resolves its keys; file paths are relative to `baseDir`. */
export async function resolveConfig(raw: unknown, baseDir: string, overrides: ConfigOverrides = {}): Promise<ResolvedConfig> {
  const source = overrides.source ?? 'embedded';
  const cfg = validateConfig(raw, source);
  checkRoles(cfg.clients, source);
  checkKeyKinds(cfg.clients, source);
  checkFixtureKeys(cfg.fixtures ?? {}, source);
  const profile = overrides.profile ?? cfg.profile ?? 'full';
  const documentReference = checkDocumentReference(cfg.documentReference, source);
  const limits = effectiveLimits(cfg.limits);
  const deviations = limitDeviations(limits);
  checkCertification(profile, deviations, source);

  const hostedJwksUri = cfg.jwksHosting ? `http://${cfg.jwksHosting.host}:${cfg.jwksHosting.port}${cfg.jwksHosting.path}` : undefined;
  const clients: ResolvedClient[] = [];
  for (const [i, c] of cfg.clients.entries()) {
    const key = await loadClientKey(c.privateKey, c.alg, c.kid, baseDir, `clients[${i}]`);
    clients.push({
      role: c.role,
      clientId: c.clientId,
      kid: key.kid,
      alg: key.algs[0]!,
      algs: key.algs,
      algSource: key.algSource,
      privateKey: key.privateKey,
      publicJwk: key.publicJwk,
      rateLimitPerMinute: c.rateLimitPerMinute ?? SPEC_DEFAULT_KEY_RATE_PER_MINUTE,
      jwksUri: c.jwksUri ?? hostedJwksUri,
      ...keyKindOf(c),
      ...(c.scopes ? { scopes: [...c.scopes] } : {}),
      keySource: c.privateKey,
    });
  }

  const tls = await loadTls(cfg.tls, baseDir, overrides.env ?? process.env);
  const proxy = overrides.env ? proxyFromEnv(overrides.env) : undefined;
  checkProxy(proxy, source);

  return {
    baseUrl: stripTrailingSlash(overrides.baseUrl ?? cfg.baseUrl),
    tokenUrl: cfg.tokenUrl,
    clients,
    fixtures: { ...cfg.fixtures },
    limits,
    deviations: deviations.map((d) => d.line),
    ...(cfg.organization ? { organization: { requestsPerMinute: cfg.organization.requestsPerMinute } } : {}),
    ...(cfg.sourceAddress
      ? {
          sourceAddress: {
            exclusive: cfg.sourceAddress.exclusive === true,
            ...(cfg.sourceAddress.trustedProxy !== undefined ? { trustedProxy: cfg.sourceAddress.trustedProxy } : {}),
          },
        }
      : {}),
    profile,
    timeouts: { ...DEFAULT_TIMEOUTS, ...cfg.timeouts },
    jwksHosting: cfg.jwksHosting,
    redactPhi: cfg.redactPhi ?? false,
    documentReference,
    source,
    ...(tls ? { tls: tls.settings, tlsSources: tls.sources } : {}),
    ...(proxy ? { proxy } : {}),
  };
}

/** A proxy variable that is not an http(s) URL: refused naming the variable (its value, which may hold credentials, is never echoed). */
function checkProxy(proxy: ProxySettings | undefined, source: string): void {
  const vars = [
    ['HTTPS_PROXY', proxy?.httpsProxy],
    ['HTTP_PROXY', proxy?.httpProxy],
  ] as const;
  for (const [name, value] of vars) {
    if (value === undefined) continue;
    let ok = false;
    try {
      ok = ['http:', 'https:'].includes(new URL(value).protocol);
    } catch {
      ok = false;
    }
    if (!ok)
      throw configError(
        [
          {
            field: name,
            message: 'is not an http(s) URL (environment variable; upper or lower case)',
            fix: `set ${name} to http://[USER:PASSWORD@]proxy.example:3128, or unset it`,
          },
        ],
        source,
      );
  }
}

/** Reads, validates and resolves a config file. */
export async function loadConfig(path: string, overrides: Omit<ConfigOverrides, 'source'> = {}): Promise<ResolvedConfig> {
  const file = resolve(path);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    const reason = (e as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConformanceError('ERR_CONFIG_INVALID', `cannot read config file ${file} (${reason})`, {
      field: '(file)',
      fix: 'pass the path of a readable JSON config file (see fixtures/example-target.json)',
    });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ConformanceError('ERR_CONFIG_INVALID', `config file ${file} is not valid JSON: ${(e as Error).message}`, {
      field: '(file)',
      fix: 'fix the JSON syntax (comments and trailing commas are not allowed)',
    });
  }
  return resolveConfig(raw, dirname(file), { env: process.env, ...overrides, source: file });
}

/** The config as it may appear in reports: no key material, only where keys come from. */
export function redactedConfig(c: ResolvedConfig): unknown {
  return {
    source: c.source,
    baseUrl: c.baseUrl,
    ...(c.tokenUrl ? { tokenUrl: c.tokenUrl } : {}),
    clients: c.clients.map((cl) => ({
      role: cl.role,
      clientId: cl.clientId,
      kid: cl.kid,
      alg: cl.alg,
      privateKey: '[redacted]',
      keySource: cl.keySource,
      rateLimitPerMinute: cl.rateLimitPerMinute,
      ...(cl.jwksUri ? { jwksUri: cl.jwksUri } : {}),
      keyKind: cl.keyKind ?? 'unknown',
      ...(cl.scopes ? { scopes: cl.scopes } : {}),
    })),
    ...(c.jwksHosting ? { jwksHosting: c.jwksHosting } : {}),
    fixtures: c.fixtures,
    limits: c.limits,
    ...(c.organization ? { organization: c.organization } : {}),
    ...(c.sourceAddress ? { sourceAddress: c.sourceAddress } : {}),
    deviations: c.deviations,
    profile: c.profile,
    timeouts: c.timeouts,
    redactPhi: c.redactPhi,
    ...(c.documentReference.upload || c.documentReference.maxBytes !== undefined ? { documentReference: c.documentReference } : {}),
    ...(c.tlsSources ? { tls: redactedTls(c.tlsSources) } : {}),
    ...(c.proxy ? { proxy: redactedProxy(c.proxy) } : {}),
    ...(c.inProcess ? { transport: 'in-process' } : {}),
  };
}

/** The TLS sources with the key and passphrase marked redacted (their source is still shown). */
function redactedTls(t: TlsSources): unknown {
  return {
    ...t,
    ...(t.key ? { key: '[redacted]', keySource: t.key } : {}),
    ...(t.passphrase ? { passphrase: '[redacted]', passphraseSource: t.passphrase } : {}),
  };
}

/** The proxy variables with any credentials replaced. */
function redactedProxy(p: ProxySettings): unknown {
  return {
    ...(p.httpsProxy ? { httpsProxy: redactProxyUrl(p.httpsProxy) } : {}),
    ...(p.httpProxy ? { httpProxy: redactProxyUrl(p.httpProxy) } : {}),
    ...(p.noProxy ? { noProxy: p.noProxy } : {}),
  };
}
