/** Public API of the embedded reference server. */
import { createResources } from './resources/index.js';
import { startReferenceServer } from './server.js';
import type { ReferenceServer } from './server.js';
import type { ReferenceOptions } from './types.js';

export async function createReferenceServer(opts: ReferenceOptions = {}): Promise<ReferenceServer> {
  return startReferenceServer(opts, createResources);
}

export { serve, DEFAULT_SERVE_PORT } from './serve.js';
export { FAULTS, faultNames } from './faults/index.js';
export type { FaultDef } from './faults/index.js';
export type { ReferenceServer, TargetConfig } from './server.js';
export type { Resources, ResourceInit } from './resources/index.js';
export { DEFAULT_LIMITS, DEFAULT_MODES } from './types.js';
export type { ReferenceOptions, ReferenceLimits, ReferenceModes } from './types.js';
export type { AuditRecord } from './audit.js';
