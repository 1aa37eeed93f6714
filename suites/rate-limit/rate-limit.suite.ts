import { registerSuite } from '../../src/vitest/register.js';
import checks from './checks.js';

await registerSuite(checks);
