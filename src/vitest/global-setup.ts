/**
 * vitest globalSetup (main process): starts the embedded reference when no
 * config is given, discovers the target's operation model from what it
 * publishes, and provides the run spec to the suites.
 */
import { dirname, resolve } from 'node:path';
import { readFile } from 'node:fs/promises';
import type { TestProject } from 'vitest/node';
import { createReferenceServer, type ReferenceServer } from '../reference/index.js';
import { resolveConfig, redactedConfig } from '../config/index.js';
import { HttpClient } from '../http/client.js';
import { discover } from '../discovery/index.js';
import { describeError } from '../errors.js';
import { PROJECT_ROOT } from '../paths.js';
import { embeddedLimits, embeddedTargetConfig } from './embedded.js';
import { collectChecks } from '../engine/catalog.js';
import { preflight, renderPreflight } from '../engine/preflight.js';
import { publicJwks, serveJwks, type JwksServer } from '../auth/jwks.js';
import { getRunState, setRunState, PROVIDE_KEY, type RunState } from './handoff.js';
import type { RunSpec } from '../engine/runtime.js';
import type { Profile } from '../engine/types.js';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let state = getRunState();
  if (!state) {
    state = newRunState({ configPath: process.env.FHIR_CONFORMANCE_CONFIG });
    setRunState(state);
  }
  const opts = state.options;
  const profile = opts.profile ?? 'full';
  let server: ReferenceServer | undefined;
  let jwks: JwksServer | undefined;
  try {
    const setup = await prepare(state, profile);
    server = setup.server;
    jwks = setup.jwks;
    project.provide(PROVIDE_KEY, setup.spec);
  } catch (e) {
    // Nothing can run: the reporter writes a report saying why (exit 3).
    state.setupError = describeError(e);
    project.provide(PROVIDE_KEY, { ...emptySpec(state, profile), setupError: state.setupError });
  }

  return async () => {
    await jwks?.close();
    await server?.close();
  };
}

async function prepare(state: RunState, profile: Profile): Promise<{ spec: RunSpec; server?: ReferenceServer; jwks?: JwksServer }> {
  const opts = state.options;
  let server: ReferenceServer | undefined;
  let rawConfig: unknown;
  let configDir: string;

  if (opts.configPath) {
    const path = resolve(opts.configPath);
    rawConfig = JSON.parse(await readFile(path, 'utf8'));
    configDir = dirname(path);
  } else {
    const certification = profile === 'certification';
    const limits = certification ? {} : embeddedLimits(opts.reference?.limits);
    server = await createReferenceServer({ ...opts.reference, port: 0, limits });
    rawConfig = embeddedTargetConfig(server, limits);
    configDir = PROJECT_ROOT;
    state.embedded = true;
  }

  const config = await resolveConfig(rawConfig, configDir, { profile }).catch(async (e: unknown) => {
    await server?.close();
    throw e;
  });
  state.baseUrl = config.baseUrl;
  state.redactedConfig = redactedConfig(config);
  state.deviations = config.deviations;

  // The run's deadline covers discovery too.
  const deadline = Date.now() + config.timeouts.runMs;
  const http = new HttpClient({ baseUrl: config.baseUrl, timeoutMs: config.timeouts.requestMs, deadline });
  try {
    state.model = await discover(http);
  } catch (e) {
    state.setupError = `discovery failed: ${describeError(e)}`;
    state.model = { operations: [], divergences: [], problems: [state.setupError], hashes: {} };
  } finally {
    await http.close();
  }

  const spec: RunSpec = {
    runId: state.runId,
    profile,
    rawConfig,
    configDir,
    embedded: state.embedded,
    model: jsonSafe(state.model),
    deadline,
    startedAt: state.startedAt,
    ...(opts.requirements ? { requirements: opts.requirements } : {}),
  };
  state.spec = spec;

  if (opts.progress !== false) {
    const lines = renderPreflight(preflight(await collectChecks(spec.model), config));
    for (const l of lines) process.stderr.write(`preflight: ${l}\n`);
  }
  // Targets that fetch client keys from a URL get them from the suite itself.
  const jwks = config.jwksHosting ? await serveJwks(config.jwksHosting, publicJwks(config.clients)) : undefined;
  return { spec, server, jwks };
}

function emptySpec(state: RunState, profile: Profile): RunSpec {
  return {
    runId: state.runId,
    profile,
    rawConfig: null,
    configDir: PROJECT_ROOT,
    embedded: state.embedded,
    model: { operations: [], divergences: [], problems: [], hashes: {} },
    deadline: Date.now(),
    startedAt: state.startedAt,
  };
}

export function newRunState(options: RunState['options']): RunState {
  const startedAt = new Date();
  const stamp = startedAt.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return {
    options,
    runId: `${stamp}-${Math.random().toString(36).slice(2, 8)}`,
    startedAt: startedAt.toISOString(),
    deviations: [],
    embedded: false,
    results: [],
    interrupted: false,
  };
}

/** Copy without cycles (dereferenced OpenAPI schemas may have them) so the model can cross to workers. */
function jsonSafe<T>(value: T): T {
  const ancestors = new Set<object>();
  const clone = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    if (ancestors.has(v)) return { $circular: true };
    ancestors.add(v);
    const out = Array.isArray(v) ? v.map(clone) : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clone(x)]));
    ancestors.delete(v);
    return out;
  };
  return clone(value) as T;
}
