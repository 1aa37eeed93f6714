import { registerSuite } from '../../src/vitest/register.js';
import checks from './checks.js';

// Scheduled with the token-lifetime checks (see src/vitest/sequencer.ts): they use the token issued when the run started.
await registerSuite(checks.filter((c) => c.tags?.includes('expiry-probe')));
