/** The fixture keys a config may name: those of fixtures/reference/fixture-ids.json, minus the org ids. */
import { readFileSync } from 'node:fs';

const FIXTURE_IDS_URL = new URL('../../fixtures/reference/fixture-ids.json', import.meta.url);
const ORG_KEYS = new Set(['orgA', 'orgB']);

export const FIXTURE_KEYS: readonly string[] = Object.freeze(
  Object.keys(JSON.parse(readFileSync(FIXTURE_IDS_URL, 'utf8')) as Record<string, string>).filter((k) => !ORG_KEYS.has(k)),
);
