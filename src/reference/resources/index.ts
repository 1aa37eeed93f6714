/**
 * The reference server's resources: the store loaded from fixtures and one
 * handler per operationId of OPERATIONS (src/service/api.ts). The HTTP core routes,
 * authenticates and renders any FhirError a handler throws.
 */
import { OPERATIONS } from '../../service/api.js';
import type { Handler, ReferenceLimits, ReferenceModes } from '../types.js';
import { createCursorCodec } from './cursor.js';
import { documentReferenceHandlers } from './document-reference.js';
import { encounterHandlers } from './encounter.js';
import type { ResourceEnv } from './env.js';
import { medicationRequestHandlers } from './medication-request.js';
import { observationHandlers } from './observation.js';
import { loadFixtures, Store } from './store.js';
import { uploadHandler } from './upload.js';

export interface ResourceInit {
  fixturesDir: string;
  limits: ReferenceLimits;
  modes: ReferenceModes;
  faults: ReadonlySet<string>;
  now: () => number;
}

export interface Resources {
  /** One per operationId in OPERATIONS. */
  handlers: Record<string, Handler>;
  /** Deep copy of all stored data. */
  snapshot(): unknown;
}

export async function createResources(init: ResourceInit): Promise<Resources> {
  const store = new Store(await loadFixtures(init.fixturesDir));
  const env: ResourceEnv = {
    store,
    limits: init.limits,
    modes: init.modes,
    faults: init.faults,
    paging: { modes: init.modes, cursors: createCursorCodec(init.modes.cursorEncoding), snapshotSeq: () => store.snapshotSeq(), faults: init.faults },
  };
  const handlers: Record<string, Handler> = {
    ...medicationRequestHandlers(env),
    ...encounterHandlers(env),
    ...documentReferenceHandlers(env),
    ...documentReferenceHandlers(env, 'R4'),
    'DocumentReference.upload': uploadHandler(env),
    ...observationHandlers(env),
  };
  const missing = OPERATIONS.filter((op) => !handlers[op.operationId]).map((op) => op.operationId);
  if (missing.length > 0) throw new Error(`no resource handler for ${missing.join(', ')}`);
  return { handlers, snapshot: () => store.snapshot() };
}
