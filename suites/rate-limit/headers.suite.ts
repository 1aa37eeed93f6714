import { registerSuite } from '../../src/vitest/register.js';
import { headerChecks } from './checks.js';

// Runs early (see src/vitest/sequencer.ts): the header checks need a key with room.
await registerSuite(headerChecks);
