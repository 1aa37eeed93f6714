/** A round-trip comparison judged inside a check: fails with each differing path as expected/actual. */
import type { CheckContext } from '../engine/context.js';
import type { HttpResponse } from '../http/types.js';
import { describeDifferences, type Comparison } from './compare.js';

/**
 * Fails the check unless the comparison found no difference of meaning; with `observeKey`, display
 * texts the server replaced are recorded as an observation (a legitimate normalization).
 */
export function checkSameMeaning(ctx: CheckContext, c: Comparison, what: string, requirement: string, res: HttpResponse, observeKey?: string): void {
  ctx.check(c.differences.length === 0, `${what}: ${describeDifferences(c.differences)}`, {
    requirement,
    expected: c.differences.map((d) => ({ [d.path]: d.expected })),
    actual: c.differences.map((d) => ({ [d.path]: d.actual })),
    exchange: res.exchange.id,
  });
  if (observeKey && c.displays.length > 0) ctx.observe(observeKey, c.displays, 'display texts the server replaced (a legitimate normalization)');
}
