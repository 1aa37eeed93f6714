/**
 * Compiled JSON-schema validators kept between processes: ajv's standalone code, one CommonJS
 * module per validator, under a key the caller derives from everything the code depends on
 * (schema, ajv version, options). Compiling the FHIR types and the OpenAPI 3.0 schema took
 * about 2 s of every run; loading their code takes a few tens of milliseconds.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Script } from 'node:vm';
import type { Ajv, Options, ValidateFunction } from 'ajv';
import { PROJECT_ROOT } from './paths.js';

const ownRequire = createRequire(import.meta.url);

/**
 * ajv, required where something is compiled (a cache miss, a target's request schema, a report read),
 * never at start: a run whose validators are all kept does not load it (about 55 ms of every start).
 */
export function ajvModule(): typeof import('ajv') {
  return ownRequire('ajv') as typeof import('ajv');
}

/** ajv-formats' plugin, required on first use like ajv (its index loads all of ajv). */
export function addFormats(ajv: Ajv): unknown {
  return (ownRequire('ajv-formats') as typeof import('ajv-formats')).default(ajv);
}

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
  const file = join(dir, `${name}.cjs`);
  let code: string;
  try {
    code = readFileSync(file, 'utf8');
  } catch {
    return undefined; // not kept yet
  }
  const module = { exports: {} as unknown };
  try {
    const script = compiledScript(file, code);
    (script.runInThisContext() as (r: typeof require, m: typeof module, e: unknown) => void)(require, module, module.exports);
  } catch {
    return undefined; // a damaged file: compiled again and written over
  }
  return module.exports;
}

/**
 * The module's code as a script, from V8's code cache of it when one is kept beside it (named
 * after the code's digest: V8 checks a cache against the source's length only). A module loaded
 * without a usable cache has one written when the process exits, holding every validator the
 * process ran compiled: the next process neither parses nor compiles them (README, "Speed").
 */
function compiledScript(file: string, code: string): Script {
  // V8 also rejects a cache made under other flags: those of the process are part of the name.
  const flags = [...processFlags(), process.env.NODE_OPTIONS ?? ''].join(' ');
  const cacheFile = `${file}.${createHash('sha256').update(code).update('\0').update(flags).digest('hex').slice(0, 16)}.v8`;
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // none yet
  }
  const script = new Script(`(function (require, module, exports) {${code}\n})`, { filename: file, ...(cachedData ? { cachedData } : {}) });
  if (cachedData === undefined || script.cachedDataRejected) keepCodeCacheAtExit(script, cacheFile);
  return script;
}

/** The process's command-line flags, without the code of -e/-p (bin/run-script.js processFlags). */
function processFlags(): string[] {
  const out: string[] = [];
  const args = process.execArgv;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (['-e', '--eval', '-p', '--print'].includes(arg)) i++;
    else if (!/^--(eval|print)=/.test(arg)) out.push(arg);
  }
  return out;
}

const pendingCaches = new Map<string, Script>();

function keepCodeCacheAtExit(script: Script, cacheFile: string): void {
  if (pendingCaches.size === 0) process.once('exit', keepCodeCachesNow);
  pendingCaches.set(cacheFile, script);
}

/** Writes the code cache of every module this process loaded without a usable one (at its exit). */
function keepCodeCachesNow(): void {
  for (const [cacheFile, script] of pendingCaches) {
    try {
      writeWhole(cacheFile, script.createCachedData());
    } catch {
      // no cache: the next process compiles again
    }
  }
  pendingCaches.clear();
}

/** Writes `file` under a temporary name, then renames it: a reader sees the old file or the whole new one. */
export function writeWhole(file: string, data: string | Buffer): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, data);
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** Keeps `code` under `name` for the next process; a cache that cannot be written is left alone. */
export function keepModule(name: string, code: string, dir: string | undefined = validatorCacheDir()): void {
  if (dir === undefined) return;
  const file = join(dir, `${name}.cjs`);
  try {
    mkdirSync(dir, { recursive: true });
    writeWhole(file, code);
    // The code caches of the code it replaces.
    for (const f of readdirSync(dir)) if (f.startsWith(`${name}.cjs.`) && f.endsWith('.v8')) rmSync(join(dir, f), { force: true });
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
    const ajv = new (ajvModule().Ajv)({ ...options, code: { ...options.code, source: true } });
    for (const plugin of plugins) plugin(ajv);
    const validate = ajv.compile<T>(schema);
    const standalone = require('ajv/dist/standalone/index.js') as (a: Ajv, v: ValidateFunction<T>) => string;
    return { validate, code: () => standalone(ajv, validate) };
  });
}
