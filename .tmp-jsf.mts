import { generate } from 'json-schema-faker';
import { loadReleaseSchema } from './src/fhir/schema-source.ts';
const t0 = Date.now();
const s = loadReleaseSchema('R4');
console.log('load', Date.now() - t0, Object.keys(s));
const defs = (s as any).definitions;
for (const type of ['DocumentReference', 'Observation']) {
  const t1 = Date.now();
  const out = await generate({ $ref: `#/definitions/${type}`, definitions: defs } as any, { seed: 42, optionalsProbability: 0 } as any);
  console.log(type, Date.now() - t1, JSON.stringify(out).slice(0, 600));
}
