/**
 * A fault plants ONE violation of one spec statement in the reference server.
 * Response-level faults rewrite responses (`transformResponse`, applied by the
 * HTTP core); logic-level faults are checked with `faults.has(name)` where the
 * rule lives. `violates` names requirement ids of suites/requirements.json.
 */
import type { OperationDef } from '../../service/api.js';

export interface FaultResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface FaultRequest {
  method: string;
  path: string;
  op?: OperationDef;
}

export interface FaultDef {
  name: string;
  /** The suite area expected to catch it. */
  area: string;
  /** Requirement ids it violates. */
  violates: string[];
  /** What a client observes. */
  symptom: string;
  /**
   * Ids of the checks that must end as `fail` when this fault is planted (one hop from a
   * fault to the checks that catch it). The mutation test requires every one of them to fail.
   */
  checks?: string[];
  /**
   * Checks run beside `checks` in the fault's own run, not required to fail: those whose requests
   * reach the planted violation for a run-wide rule (an invariants.* check judges every exchange of
   * the run, and on its own sends only a few reads).
   */
  alongside?: string[];
  /**
   * Conformant choices (reference modes) the fault is planted under, when the violation lives on a
   * surface only some choices have (a type-level `$upload` naming its patient). Modes given to the
   * reference explicitly win over these.
   */
  modes?: Record<string, string | number>;
  transformResponse?: (res: FaultResponse, req: FaultRequest) => FaultResponse;
}
