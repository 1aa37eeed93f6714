/**
 * src/engine/catalog.ts: the suites' checks, from each folder's checks module; in the run's
 * one-script bundle (bin/run-cache.js), from the modules the script registered, by their URL.
 */
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { collectChecks } from '../../src/engine/catalog.js';
import type { OperationModel } from '../../src/discovery/model.js';
import { MODULE_EXT, SUITES_DIR } from '../../src/paths.js';

const REGISTRY = Symbol.for('fhir-conformance.modules');
const model = { operations: [] } as unknown as OperationModel;
afterEach(() => {
  delete (globalThis as Record<symbol, unknown>)[REGISTRY];
});

describe('collectChecks', () => {
  it("imports every suite folder's checks module when no bundle registered any", async () => {
    const folders = new Set((await collectChecks(model)).map((c) => c.folder));
    expect(folders.has('auth')).toBe(true);
    expect(folders.has('pagination')).toBe(true);
  });

  it("takes a registered folder's module from the bundle's registry, and skips a folder the bundle has no module for", async () => {
    const folders = readdirSync(SUITES_DIR, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
    expect(folders).toContain('auth');
    const href = pathToFileURL(resolve(SUITES_DIR, 'auth', `checks${MODULE_EXT}`)).href;
    const check = { id: 'auth.from-the-registry', title: 'registered', area: 'auth', requirements: [], run: async () => {} };
    (globalThis as Record<symbol, unknown>)[REGISTRY] = new Map([[href, { default: [check] }]]);
    const checks = await collectChecks(model);
    expect(checks.map((c) => `${c.folder}:${c.id}`)).toEqual(['auth:auth.from-the-registry']);
  });
});
