import { faultShard } from './faults.js';

faultShard(1, 2);
