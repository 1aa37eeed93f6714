/**
 * FHIR schema validation figures: cold load and compile of the default types per release, validation
 * time per resource for a Bundle of 100 MedicationRequests, and peak RSS.
 * Usage: node --import tsx bench/fhir-schema.ts [R4|R5 ...]   (releases in the order measured; default R4 R5)
 */
import { createFhirValidator, DEFAULT_TYPES } from '../src/fhir/index.js';
import type { Release } from '../src/fhir/index.js';
import { readReleaseSchema, schemaFile } from '../src/fhir/schema-source.js';
import { medicationRequest, searchsetBundle } from '../test/fhir/samples.js';

const BUNDLE_SIZE = 100;
const ROUNDS = 200;

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const ms = (value: number) => `${value.toFixed(0)} ms`;

const releases = (process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['R4', 'R5']) as Release[];
console.log(`node ${process.version}; RSS at start ${mb(process.memoryUsage().rss)}`);

const validator = createFhirValidator();
for (const release of releases) {
  const { loadMs } = readReleaseSchema(release, schemaFile(release));
  const firstType = DEFAULT_TYPES[release][0];
  let started = performance.now();
  validator.validate(release, { resourceType: firstType });
  const firstMs = performance.now() - started;
  started = performance.now();
  for (const type of DEFAULT_TYPES[release].slice(1)) validator.validate(release, { resourceType: type });
  const restMs = performance.now() - started;
  console.log(
    `${release}: read+parse+normalize ${ms(loadMs)}; compile ${firstType} ${ms(firstMs)}, ` +
      `the other ${DEFAULT_TYPES[release].length - 1} types ${ms(restMs)}; ` +
      `total cold ${ms(loadMs + firstMs + restMs)}; RSS ${mb(process.memoryUsage().rss)}`,
  );
}

if (releases.includes('R4')) {
  const bundle = searchsetBundle(Array.from({ length: BUNDLE_SIZE }, (_, i) => medicationRequest(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`)));
  const issues = validator.validate('R4', bundle);
  if (issues.length > 0) throw new Error(`benchmark bundle is invalid: ${JSON.stringify(issues[0])}`);
  const started = performance.now();
  for (let round = 0; round < ROUNDS; round++) validator.validate('R4', bundle);
  const perResourceUs = ((performance.now() - started) * 1000) / (ROUNDS * (BUNDLE_SIZE + 1));
  console.log(`R4 Bundle of ${BUNDLE_SIZE} MedicationRequests: ${perResourceUs.toFixed(1)} µs per resource (${ROUNDS} rounds, Bundle counted as a resource)`);
}

console.log(`peak RSS ${mb(process.resourceUsage().maxRSS * 1024)}`);
