/**
 * 429 HPB-00105 on every R4 MedicationRequest and Encounter operation (endpoint
 * tables) and on the R5 DocumentReference operations that mirror them. The operations are sent inside the suite's exhaustion episode, each
 * on the full key as the first refusal of a fresh block (operations.ts); this check
 * judges their answers: a 429 by its code, any other answer by whether the key was
 * certainly full when it arrived (judgeThrottled).
 */
import { type CheckContext, defineCheck } from '../../src/engine/index.js';
import { catalogCodeOf, expectError } from '../../src/service/index.js';
import { excessScenario, KEY_EPISODES_EARLY } from './scenarios.js';
import { THROTTLED_OPERATIONS } from './operations.js';

export const operationsCheck = defineCheck({
  id: 'rate-limit.operations-429',
  surfaces: {
    release: 'R4 and R5',
    resource: "R4 MedicationRequest and Encounter (read, search, create, update: the tables' rows); R5 DocumentReference (the same four, which mirror them)",
    keyKind: "the sandbox key the exhaustion episode drives to its limit: the second organization's (else extra, else main)",
    leftOut: [
      "the R5 $upload operation: its body is a document (its own size rules), and every further operation costs the driven key about one group's wait (~3 s at the spec's limits); the limiter a target puts in front of its R5 surface is judged by the four operations above",
      'DocumentReference on R4: not in the spec (its R4 operations are "not shown")',
    ],
  },
  title: 'MedicationRequest and Encounter (R4) and DocumentReference (R5) read, search, create and update answer 429 HPB-00105 while the key is over its limit',
  area: 'rate-limit',
  level: 'MUST',
  requirements: THROTTLED_OPERATIONS.map((t) => t.requirement),
  quote: '429 `HPB-00105`',
  tags: ['writes', 'exhausts-key-limit', 'waits'],
  fixtures: ['medicationRequest'],
  timeoutMs: 10 * 60_000,
  startEarly: KEY_EPISODES_EARLY,
  // The hold after the early retry, then a window spreading the key's requests before the operations.
  waitWindows: 2,
  async run(ctx: CheckContext) {
    const s = await excessScenario(ctx);
    if (!s.operations) ctx.skip(`the key was not refused within ${s.burst.hits.length + s.spaced.length} requests (see rate-limit.excess-gives-429)`);
    if (s.throttle) {
      const { plan, fillers, refusedFills, fills, startedAt, endedAt } = s.throttle;
      ctx.observe(
        'rate-limit.operations-429.phase',
        { fillers, refusedFills, fills, ms: endedAt - startedAt, tickMs: plan.tickMs, ticks: plan.ticks, budgetMs: plan.budgetMs },
        'requests spread over a window, then each operation on the refilled key once the previous Retry-After elapsed',
      );
    }
    const unpublished = s.operations.filter((a) => a.notSent !== undefined && !a.hit && !a.tries && !a.unjudged);
    if (unpublished.length === s.operations.length)
      ctx.skip(`no operation could be sent: ${s.operations.map((a) => `${a.requirement}: ${a.notSent}`).join('; ')}`);
    let failed = false;
    const unjudged: string[] = [];
    for (const a of s.operations) {
      if (unpublished.includes(a)) {
        ctx.observe(`rate-limit.operations-429.not-sent.${a.requirement}`, a.notSent);
        continue;
      }
      for (const h of [...(a.tries ?? []), ...(a.hit ? [a.hit] : [])]) {
        ctx.attach(h.res.exchange);
        const created = h.res.json as { id?: unknown } | undefined;
        if (h.res.status < 300 && h.res.exchange.request.method === 'POST' && typeof created?.id === 'string') {
          const url = new URL(h.res.exchange.request.url);
          ctx.created(url.pathname.split('/').at(-1)!, created.id, `${url.origin}${url.pathname}/${created.id}`);
        }
      }
      if (!a.hit || !a.verdict) {
        unjudged.push(`${a.requirement}: ${a.unjudged ?? 'not sent'}`);
        continue;
      }
      const res = a.hit.res;
      const code = catalogCodeOf(res);
      if (res.status !== 429) {
        const v = a.verdict;
        if (v.verdict === 'fail') {
          if (a.before) ctx.attach(a.before.res.exchange);
          ctx.check(false, v.message, {
            requirement: a.requirement,
            expected: v.expected,
            actual: { ...(v.actual as object), code },
            exchange: res.exchange.id,
          });
          failed = true;
        } else unjudged.push(v.verdict === 'inconclusive' ? v.message : `${a.requirement}: answered ${res.status}`);
        continue;
      }
      if (
        !ctx.check(code === 'HPB-00105', `${a.requirement}: answered ${res.status} ${code ?? ''} while the key is over its limit`.trim(), {
          requirement: a.requirement,
          expected: { status: 429, code: 'HPB-00105' },
          actual: { status: res.status, code },
          exchange: res.exchange.id,
        })
      ) {
        failed = true;
        continue;
      }
      expectError(res, { status: 429, code: 'HPB-00105', issueCode: 'throttled', requirement: a.requirement });
    }
    if (unjudged.length && !failed) ctx.skip(`not every operation could be judged on a full key: ${unjudged.join('; ')}`);
  },
});
