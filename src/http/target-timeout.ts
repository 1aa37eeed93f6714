/**
 * A request timeout that counts the time the process waited for the target, not the time its own
 * event loop was busy. A run does CPU work beside its requests (schema validation, a 32 MB upload
 * built and, against the embedded reference, also received in the same process); on a loaded
 * machine that can hold an answer that arrived in time unread for seconds. A plain timer then
 * blames the target for the process's own stall: the request ends as ERR_TIMEOUT (no verdict).
 *
 * Here the timeout ends when the event loop has spent `timeoutMs` idle (waiting for I/O: the
 * target's time) since the request left, or at `capMs` of wall time whatever the loop did, so a
 * target that never answers still ends the request.
 */
import { performance } from 'node:perf_hooks';

/** A timeout with this little of its idle time left has run out (the loop is never idle 100% of the time). */
const IDLE_TOLERANCE = 0.05;

export interface TargetTimeout {
  clear(): void;
}

export function targetTimeout(timeoutMs: number, capMs: number, onExpire: () => void): TargetTimeout {
  const from = performance.eventLoopUtilization();
  const t0 = performance.now();
  let timer: NodeJS.Timeout;
  const check = () => {
    const elapsed = performance.now() - t0;
    const owed = timeoutMs - performance.eventLoopUtilization(from).idle;
    if (owed <= timeoutMs * IDLE_TOLERANCE || elapsed >= capMs) {
      onExpire();
      return;
    }
    // The loop was busy for part of the time: wait for the target's share that is still owed.
    timer = setTimeout(check, Math.min(owed, capMs - elapsed));
  };
  timer = setTimeout(check, Math.min(timeoutMs, capMs));
  return { clear: () => clearTimeout(timer) };
}

/** The wall-clock bound of a request whose timeout is `timeoutMs` of the target's time. */
export function timeoutCapMs(timeoutMs: number): number {
  return 4 * timeoutMs;
}
