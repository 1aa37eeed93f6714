import { registerSuite } from '../../src/vitest/register.js';
import { exhaustionChecks } from './checks.js';

await registerSuite(exhaustionChecks);
