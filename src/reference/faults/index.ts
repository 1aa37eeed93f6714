/**
 * The fault catalog: every `faults/<area>.ts` exports `faults: FaultDef[]`,
 * each planting one violation of one spec statement in the reference.
 */
import type { FaultDef } from './types.js';
import { faults as auth } from './auth.js';
import { faults as discovery } from './discovery.js';
import { faults as documentReference } from './document-reference.js';
import { faults as encounter } from './encounter.js';
import { faults as errors } from './errors.js';
import { faults as general } from './general.js';
import { faults as generated } from './generated.js';
import { faults as headers } from './headers.js';
import { faults as invariants } from './invariants.js';
import { faults as issuanceLimit } from './issuance-limit.js';
import { faults as mediaType } from './media-type.js';
import { faults as medicationRequest } from './medication-request.js';
import { faults as pagination } from './pagination.js';
import { faults as rateLimit } from './rate-limit.js';
import { faults as scopes } from './scopes.js';
import { faults as tenancy } from './tenancy.js';
import { faults as tokenLifetime } from './token-lifetime.js';
import { faults as versioning } from './versioning.js';

export type { FaultDef, FaultResponse, FaultRequest } from './types.js';

/**
 * Every area's faults, in file-name order. Listed, not read from the directory: a run bundles its
 * modules into one script (bin/run-cache.js), which a computed import would leave out;
 * test/architecture/taxonomy.test.ts asserts the list names every faults file.
 */
export const FAULT_MODULES: Readonly<Record<string, readonly FaultDef[]>> = {
  auth,
  discovery,
  'document-reference': documentReference,
  encounter,
  errors,
  general,
  generated,
  headers,
  invariants,
  'issuance-limit': issuanceLimit,
  'media-type': mediaType,
  'medication-request': medicationRequest,
  pagination,
  'rate-limit': rateLimit,
  scopes,
  tenancy,
  'token-lifetime': tokenLifetime,
  versioning,
};

export const FAULTS: readonly FaultDef[] = Object.values(FAULT_MODULES).flat();

const seen = new Set<string>();
for (const f of FAULTS) {
  if (seen.has(f.name)) throw new Error(`fault "${f.name}" is defined twice in src/reference/faults/`);
  seen.add(f.name);
}

export function faultNames(): string[] {
  return FAULTS.map((f) => f.name);
}

/** Checks fault names at start-up; an unknown name is a clear error. */
export function resolveFaults(names: readonly string[]): FaultDef[] {
  return names.map((name) => {
    const fault = FAULTS.find((f) => f.name === name);
    if (!fault) throw new Error(`unknown fault "${name}"; run \`fhir-conformance faults\` for the catalog`);
    return fault;
  });
}
