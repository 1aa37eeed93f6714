/** The fixture keys a config may name: those of fixtures/reference/fixture-ids.json, minus the org ids. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { FIXTURES_DIR } from '../paths.js';

const FIXTURE_IDS_PATH = resolve(FIXTURES_DIR, 'reference', 'fixture-ids.json');
const ORG_KEYS = new Set(['orgA', 'orgB']);

export const FIXTURE_KEYS: readonly string[] = Object.freeze(
  Object.keys(JSON.parse(readFileSync(FIXTURE_IDS_PATH, 'utf8')) as Record<string, string>).filter((k) => !ORG_KEYS.has(k)),
);
