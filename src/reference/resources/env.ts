/** What every resource handler module is built with. */
import type { ReferenceLimits, ReferenceModes } from '../types.js';
import type { PagingEnv } from './pagination.js';
import type { Store } from './store.js';

export interface ResourceEnv {
  store: Store;
  limits: ReferenceLimits;
  modes: ReferenceModes;
  /** Planted faults; a rule is switched off where it lives with `if (!env.faults.has('<name>'))`. */
  faults: ReadonlySet<string>;
  paging: PagingEnv;
}
