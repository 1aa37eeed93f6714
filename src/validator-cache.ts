/**
 * Compiled JSON-schema validators kept between processes: ajv's standalone code, one CommonJS
 * module per validator, under a key the caller derives from everything the code depends on
 * (schema, ajv version, options). Compiling the FHIR types and the OpenAPI 3.0 schema took
 * about 2 s of every run; loading their code takes a few tens of milliseconds.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type Options, type ValidateFunction } from 'ajv';
import { PROJECT_ROOT } from './paths.js';

/**
 * Where the modules are kept: FHIR_CONFORMANCE_CACHE, `off` for no cache, else
 * `node_modules/.cache/fhir-conformance/validators` under the package root.
 */
export function validatorCacheDir(): string | undefined {
  const dir = process.env.FHIR_CONFORMANCE_CACHE;
  if (dir === 'off') return undefined;
  return dir || join(PROJECT_ROOT, 'node_modules', '.cache', 'fhir-conformance', 'validators');
}

/**
 * The exports of the standalone module kept under `name` (a file name), or undefined when none is
 * kept or it does not load. `require` resolves the code's imports (ajv's runtime helpers) as the
 * compiling ajv would.
 */
export function keptModule(name: string, require: (id: string) => unknown, dir: string | undefined = validatorCacheDir()): unknown {
  if (dir === undefined) return undefined;
  let code: string;
  try {
    code = readFileSync(join(dir, `${name}.cjs`), 'utf8');
  } catch {
    return undefined; // not kept yet
  }
  const module = { exports: {} as unknown };
  try {
    new Function('require', 'module', 'exports', code)(require, module, module.exports);
  } catch {
    return undefined; // a damaged file: compiled again and written over
  }
  return module.exports;
}

/** Keeps `code` under `name` for the next process; a cache that cannot be written is left alone. */
export function keepModule(name: string, code: string, dir: string | undefined = validatorCacheDir()): void {
  if (dir === undefined) return;
  const file = join(dir, `${name}.cjs`);
  try {
    mkdirSync(dir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, code);
    renameSync(tmp, file);
  } catch {
    // no cache: the next process compiles again
  }
}

/**
 * The validator kept under `name` (a file name, the key in it), else `compile()`'s, whose
 * standalone code is then written for the next process. `require` resolves the code's imports
 * (ajv's runtime helpers) as the compiling ajv would. A cache that cannot be written is left alone.
 */
export function cachedValidator<F extends (...args: never[]) => unknown>(
  name: string,
  require: (id: string) => unknown,
  compile: () => { validate: F; code: () => string },
  dir: string | undefined = validatorCacheDir(),
): F {
  const kept = keptModule(name, require, dir) as { default?: unknown } | undefined;
  const validate = kept?.default ?? kept;
  if (typeof validate === 'function') return validate as F;
  const compiled = compile();
  if (dir !== undefined) keepModule(name, compiled.code(), dir);
  return compiled.validate;
}

/**
 * The validator of a fixed JSON schema, kept like `cachedValidator` under `name` and a key made of
 * the schema, the ajv version, the ajv options and the plugins' names; ajv (with `plugins` applied)
 * compiles it only on a miss.
 */
export function keptSchemaValidator<T>(
  name: string,
  schema: object,
  require: (id: string) => unknown,
  options: Options,
  plugins: ReadonlyArray<(ajv: Ajv) => unknown> = [],
): ValidateFunction<T> {
  const version = (require('ajv/package.json') as { version: string }).version;
  const key = createHash('sha256')
    .update(`${version}\0${JSON.stringify(options)}\0${plugins.map((p) => p.name).join(',')}\0${JSON.stringify(schema)}`)
    .digest('hex')
    .slice(0, 16);
  return cachedValidator<ValidateFunction<T>>(`${name}-${key}`, require, () => {
    const ajv = new Ajv({ ...options, code: { ...options.code, source: true } });
    for (const plugin of plugins) plugin(ajv);
    const validate = ajv.compile<T>(schema);
    const standalone = require('ajv/dist/standalone/index.js') as (a: Ajv, v: ValidateFunction<T>) => string;
    return { validate, code: () => standalone(ajv, validate) };
  });
}
