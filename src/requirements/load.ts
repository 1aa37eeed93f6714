/**
 * Loads and validates the requirements catalog (suites/requirements.json).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { ConformanceError } from '../errors.js';
import { keptSchemaValidator } from '../validator-cache.js';
import { requirementsFileSchema } from './schema.js';
import type { Requirement } from './types.js';

export const REQUIREMENTS_PATH = fileURLToPath(new URL('../../suites/requirements.json', import.meta.url));

const moduleRequire = createRequire(import.meta.url);
let fileValidator: ValidateFunction | undefined;
/** The catalog schema's validator, kept between processes (src/validator-cache.ts): compiling it took about 50 ms of every start. */
function validateFile(json: unknown): boolean {
  fileValidator ??= keptSchemaValidator('requirements', requirementsFileSchema, moduleRequire, { allErrors: true });
  return fileValidator(json);
}

let cached: Requirement[] | undefined;

/** The catalog, validated; read once per process. */
export function loadRequirements(): Requirement[] {
  if (!cached) {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(REQUIREMENTS_PATH, 'utf8'));
    } catch (e) {
      throw new ConformanceError('ERR_INTERNAL', `cannot read the requirements catalog ${REQUIREMENTS_PATH}: ${(e as Error).message}`, { cause: e });
    }
    cached = parseRequirements(json, REQUIREMENTS_PATH);
  }
  return cached;
}

export function requirementById(): Map<string, Requirement> {
  return new Map(loadRequirements().map((r) => [r.id, r]));
}

/** Validates a parsed catalog document; the error names the first bad entry by index and id. */
export function parseRequirements(json: unknown, source: string): Requirement[] {
  if (!validateFile(json)) {
    throw new ConformanceError('ERR_INTERNAL', `${source}: ${describeSchemaError(json, fileValidator?.errors?.[0])}`);
  }
  const reqs = (json as { requirements: Requirement[] }).requirements;
  const seen = new Set<string>();
  reqs.forEach((r, i) => {
    if (seen.has(r.id)) throw new ConformanceError('ERR_INTERNAL', `${source}: requirements[${i}] repeats the id "${r.id}"`);
    seen.add(r.id);
    if (r.id.split('.').some((part) => !/[a-z]/.test(part))) {
      throw new ConformanceError('ERR_INTERNAL', `${source}: requirements[${i}] (id "${r.id}") has a numeric part; ids are slugs, never numbers`);
    }
    const prefix = r.id.split('.')[0];
    if (prefix !== r.area) {
      throw new ConformanceError('ERR_INTERNAL', `${source}: requirements[${i}] (id "${r.id}") has area "${r.area}" but its id starts with "${prefix}"`);
    }
  });
  return reqs;
}

function describeSchemaError(json: unknown, err: ErrorObject | undefined): string {
  if (!err) return 'invalid requirements catalog';
  const m = /^\/requirements\/(\d+)(\/.*)?$/.exec(err.instancePath);
  if (!m) return `${err.instancePath || '(root)'} ${err.message ?? 'is invalid'}`;
  const index = Number(m[1]);
  const entry = (json as { requirements: unknown[] }).requirements[index] as { id?: unknown } | null;
  const id = entry && typeof entry.id === 'string' ? ` (id "${entry.id}")` : '';
  const field = m[2] ? ` ${m[2].slice(1)}` : '';
  const detail = err.keyword === 'not' ? 'must not carry a reason while testable is true' : (err.message ?? 'is invalid');
  const allowed = err.keyword === 'enum' ? `: ${(err.params as { allowedValues: unknown[] }).allowedValues.join(', ')}` : '';
  return `requirements[${index}]${id}${field} ${detail}${allowed}`;
}
