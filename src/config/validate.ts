/** JSON Schema validation of a raw config; every problem names the field and the fix. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { ConformanceError } from '../errors.js';
import { addFormats, keptSchemaValidator } from '../validator-cache.js';
import type { Profile } from '../engine/types.js';
import type { Limits } from './limits.js';
import type { SigningAlg } from '../auth/algorithms.js';

export type ClientRole = 'main' | 'second-org' | 'production' | 'extra';
export type KeySource = { file: string } | { env: string };
/** Sandbox or production key (spec: Authentication > Using a token). */
export type KeyKind = 'sandbox' | 'production';

/** A config file's content after schema validation. */
export interface RawConfig {
  $schema?: string;
  baseUrl: string;
  tokenUrl?: string;
  clients: {
    role: ClientRole;
    clientId: string;
    kid?: string;
    /** Omitted: the private JWK's `alg`, else what the key and the target's published list allow. */
    alg?: SigningAlg;
    privateKey: KeySource;
    rateLimitPerMinute?: number;
    jwksUri?: string;
    keyKind?: KeyKind;
    scopes?: string[];
  }[];
  jwksHosting?: { host: string; port: number; path: string };
  fixtures?: Record<string, string>;
  limits?: Partial<Limits>;
  /** The organization's request ceiling (spec: not shown); with it, paced requests spread over the organization's keys. */
  organization?: { requestsPerMinute: number };
  /** Declared: no other client sends token requests from the suite's source address during the run. */
  sourceAddress?: { exclusive?: boolean; trustedProxy?: boolean };
  profile?: Profile;
  timeouts?: { requestMs?: number; runMs?: number };
  redactPhi?: boolean;
  documentReference?: DocumentReferenceDeclarations;
  /** TLS settings for every request (src/config/tls.ts): files or environment variables, never inline. */
  tls?: {
    ca?: KeySource;
    cert?: KeySource;
    key?: KeySource;
    passphrase?: KeySource;
    servername?: string;
    minVersion?: 'TLSv1.2' | 'TLSv1.3';
  };
}

/** What the config declares where the spec shows nothing about DocumentReference (docs/config.md). */
export interface DocumentReferenceDeclarations {
  upload?: UploadContract;
  maxBytes?: number;
}

export type UploadLevel = 'instance' | 'type';
export type UploadPayload = 'raw' | 'binary' | 'parameters' | 'document-reference';
export type DocumentType = 'application/pdf' | 'image/png' | 'image/jpeg' | 'text/plain';

export interface UploadContract {
  /** Path template relative to baseUrl; `{id}` for the instance level; a query may follow, `{patient}` in it for the fixture patient's id. */
  path: string;
  level?: UploadLevel;
  payload?: UploadPayload;
  parameterName?: string;
  contentType?: DocumentType;
}

export const CONFIG_SCHEMA_URL = new URL('./config.schema.json', import.meta.url);
export const CONFIG_SCHEMA: Record<string, unknown> = JSON.parse(readFileSync(CONFIG_SCHEMA_URL, 'utf8'));

const moduleRequire = createRequire(import.meta.url);
let configValidator: ValidateFunction<RawConfig> | undefined;

/**
 * The config schema's validator: ajv's standalone code kept between processes (src/validator-cache.ts),
 * compiled on a miss. Compiling it took about 60 ms of every start.
 */
function validateSchema(raw: unknown): raw is RawConfig {
  configValidator ??= keptSchemaValidator<RawConfig>('config', CONFIG_SCHEMA, moduleRequire, { allErrors: true, strict: true }, [addFormats]);
  return configValidator(raw);
}

/** `/clients/1/alg` -> `clients[1].alg`. */
export function fieldPath(pointer: string, child?: string): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  return parts.reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '') || '(root)';
}

function quoteList(values: readonly unknown[]): string {
  const q = values.map((v) => JSON.stringify(v));
  return q.length === 1 ? q[0]! : `${q.slice(0, -1).join(', ')} or ${q[q.length - 1]}`;
}

interface Problem {
  field: string;
  message: string;
  fix: string;
}

function describe(e: ErrorObject): Problem {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required': {
      const field = fieldPath(e.instancePath, String(p.missingProperty));
      return { field, message: 'is required', fix: `add "${String(p.missingProperty)}"` };
    }
    case 'additionalProperties': {
      const name = String(p.additionalProperty);
      const field = fieldPath(e.instancePath, name);
      if (/^\/tls\/(ca|cert|key|passphrase)$/.test(e.instancePath)) {
        return {
          field,
          message: 'is not allowed: certificates, keys and passphrases are never inlined in the config',
          fix: 'use {"file": "path/to/file.pem"} or {"env": "VARIABLE_NAME"}',
        };
      }
      if (/\/privateKey$/.test(e.instancePath)) {
        return {
          field,
          message: 'is not allowed: key material is never inlined in the config',
          fix: 'use {"file": "path/to/key.jwk.json"} or {"env": "VARIABLE_NAME"}',
        };
      }
      return { field, message: 'is not a known field', fix: `remove "${name}" (check the spelling against src/config/config.schema.json)` };
    }
    case 'enum':
      return { field: fieldPath(e.instancePath), message: 'has a value that is not allowed', fix: `use ${quoteList(p.allowedValues as unknown[])}` };
    case 'type':
      if (/^\/tls\/(ca|cert|key|passphrase)$/.test(e.instancePath))
        return {
          field: fieldPath(e.instancePath),
          message: 'must be an object naming where it is read from (never the PEM or passphrase itself)',
          fix: 'use {"file": "path/to/file.pem"} or {"env": "VARIABLE_NAME"}',
        };
      return { field: fieldPath(e.instancePath), message: `must be ${String(p.type)}`, fix: `give a value of type ${String(p.type)}` };
    case 'minProperties':
    case 'maxProperties':
      return {
        field: fieldPath(e.instancePath),
        message: 'must name exactly one key source',
        fix: /^\/tls\//.test(e.instancePath)
          ? 'use {"file": "path/to/file.pem"} or {"env": "VARIABLE_NAME"}'
          : 'use {"file": "path/to/key.jwk.json"} or {"env": "VARIABLE_NAME"}',
      };
    case 'format':
    case 'pattern':
      if (/(Url|Uri)$/.test(e.instancePath)) {
        return { field: fieldPath(e.instancePath), message: 'is not an http(s) URL', fix: 'give an absolute URL starting with http:// or https://' };
      }
      return {
        field: fieldPath(e.instancePath),
        message: `does not match ${String(p.pattern ?? p.format)}`,
        fix: `give a value matching ${String(p.pattern ?? p.format)}`,
      };
    case 'minimum':
    case 'maximum':
      return {
        field: fieldPath(e.instancePath),
        message: `must be ${String(p.comparison)} ${String(p.limit)}`,
        fix: `give a value ${String(p.comparison)} ${String(p.limit)}`,
      };
    case 'minItems':
      return { field: fieldPath(e.instancePath), message: `must have at least ${String(p.limit)} item(s)`, fix: 'add a client with "role": "main"' };
    case 'minLength':
      return { field: fieldPath(e.instancePath), message: 'must not be empty', fix: 'give a non-empty value' };
    default:
      return { field: fieldPath(e.instancePath), message: e.message ?? 'is invalid', fix: 'see src/config/config.schema.json' };
  }
}

function depth(field: string): number {
  return field.split(/[.[]/).length;
}

/** ERR_CONFIG_INVALID naming the first problem's field and fix; the message lists every problem. */
export function configError(problems: Problem[], source: string): ConformanceError {
  const first = problems[0]!;
  const lines = problems.map((p) => `${p.field} ${p.message} (fix: ${p.fix})`);
  return new ConformanceError('ERR_CONFIG_INVALID', `invalid config ${source}: ${lines.join('; ')}`, { field: first.field, fix: first.fix });
}

/** Validates the shape of a raw config against config.schema.json. */
export function validateConfig(raw: unknown, source = ''): RawConfig {
  if (validateSchema(raw)) return raw;
  const seen = new Set<string>();
  const problems = (configValidator?.errors ?? [])
    .filter((e) => e.keyword !== 'if')
    .map(describe)
    .filter((p) => !seen.has(p.field + p.message) && seen.add(p.field + p.message))
    // The deepest field is the most specific (e.g. `privateKey.kty` before `privateKey`).
    .sort((a, b) => depth(b.field) - depth(a.field));
  throw configError(problems, source);
}
