/**
 * The release's validators kept between processes as one module (src/fhir/compiler.ts): each type
 * a process compiles is added to the module, a later process (a new compiler) takes every kept type
 * from it without compiling, its validators judge as the compiled ones do (errors and nested
 * resources), and a damaged module is compiled again and written over.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ReleaseCompiler } from '../../src/fhir/compiler.js';
import { loadReleaseSchema } from '../../src/fhir/schema-source.js';
import { medicationRequest, searchsetBundle } from './samples.js';

let dir: string;
let previous: string | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fhirc-validators-'));
  previous = process.env.FHIR_CONFORMANCE_CACHE;
  process.env.FHIR_CONFORMANCE_CACHE = dir;
});
afterEach(() => {
  if (previous === undefined) delete process.env.FHIR_CONFORMANCE_CACHE;
  else process.env.FHIR_CONFORMANCE_CACHE = previous;
  rmSync(dir, { recursive: true, force: true });
});

const modules = () => readdirSync(dir).filter((f) => f.startsWith('fhir-R4-') && f.endsWith('.cjs'));
const exportedTypes = (file: string) => [...readFileSync(join(dir, file), 'utf8').matchAll(/exports\.(\w+) = /g)].map((m) => m[1]).sort();

describe('FHIR validators kept as one module per release', () => {
  it('keeps every type a process compiled in one module, which the next process uses as compiled', () => {
    const schema = loadReleaseSchema('R4');
    const first = new ReleaseCompiler(schema);
    const bad = { ...medicationRequest(), status: 42 };
    const compiledBad = first.check('MedicationRequest')(bad);
    first.check('Bundle');
    expect(modules()).toHaveLength(1);
    const file = modules()[0]!;
    expect(exportedTypes(file)).toEqual(['Bundle', 'MedicationRequest']);

    // A later process: a new compiler, whose ajv is never made for kept types.
    const second = new ReleaseCompiler(schema);
    const keptBad = second.check('MedicationRequest')(bad);
    expect(keptBad.errors.map((e) => e.instancePath)).toEqual(compiledBad.errors.map((e) => e.instancePath));
    expect(keptBad.errors.length).toBeGreaterThan(0);
    expect(second.check('MedicationRequest')(medicationRequest()).errors).toEqual([]);
    const bundle = searchsetBundle([medicationRequest()]);
    const nested = second.check('Bundle')(bundle).nested;
    expect(nested.length).toBeGreaterThan(0);
    expect(nested[0]!.pointer).toBe('/entry/0/resource');
    expect((second as unknown as { ajvInstance?: unknown }).ajvInstance).toBeUndefined();

    // A type the module lacks is compiled and added beside the kept ones.
    second.check('OperationOutcome');
    expect(exportedTypes(file)).toEqual(['Bundle', 'MedicationRequest', 'OperationOutcome']);
  });

  it('a damaged module is compiled again and written over', () => {
    const schema = loadReleaseSchema('R4');
    new ReleaseCompiler(schema).check('OperationOutcome');
    const file = modules()[0]!;
    writeFileSync(join(dir, file), 'this is not javascript {');
    const again = new ReleaseCompiler(schema);
    expect(again.check('OperationOutcome')({ resourceType: 'OperationOutcome', issue: 'x' }).errors.length).toBeGreaterThan(0);
    expect(exportedTypes(file)).toEqual(['OperationOutcome']);
  });
});
