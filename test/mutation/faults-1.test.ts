import { faultShard } from './faults.js';

faultShard(0, 2);
