import { registerSuite } from '../../src/vitest/register.js';
import checks from './checks.js';

// The checks that use the expiry probe run at the end of the run (expiry.suite.ts).
await registerSuite(checks.filter((c) => !c.tags?.includes('expiry-probe')));
