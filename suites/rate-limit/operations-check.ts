/**
 * 429 HPB-00105 on every R4 MedicationRequest and Encounter operation (endpoint
 * tables). The operations are sent inside the suite's exhaustion episode while
 * the throttle key is refused; this check judges their answers.
 */
import { type CheckContext, defineCheck } from '../../src/engine/index.js';
import { catalogCodeOf, expectError } from '../../src/service/index.js';
import { excessScenario } from './scenarios.js';
import { THROTTLED_OPERATIONS } from './operations.js';

export const operationsCheck = defineCheck({
  id: 'rate-limit.operations-429',
  title: 'MedicationRequest and Encounter read, search, create and update answer 429 HPB-00105 while the key is over its limit',
  area: 'rate-limit',
  level: 'MUST',
  requirements: THROTTLED_OPERATIONS.map((t) => t.requirement),
  quote: '429 `HPB-00105`',
  tags: ['writes', 'exhausts-key-limit', 'waits'],
  fixtures: ['medicationRequest'],
  timeoutMs: 10 * 60_000,
  async run(ctx: CheckContext) {
    const s = await excessScenario(ctx);
    if (!s.operations) ctx.skip(`the key was not refused within ${s.burst.hits.length + s.spaced.length} requests (see rate-limit.excess-gives-429)`);
    const sent = s.operations.filter((a) => a.hit);
    if (sent.length === 0) ctx.skip(`no operation could be sent: ${s.operations.map((a) => `${a.requirement}: ${a.notSent}`).join('; ')}`);
    for (const a of s.operations) {
      if (!a.hit) {
        ctx.observe(`rate-limit.operations-429.not-sent.${a.requirement}`, a.notSent);
        continue;
      }
      const res = a.hit.res;
      ctx.attach(res.exchange);
      const created = res.json as { id?: unknown } | undefined;
      if (res.status < 300 && res.exchange.request.method === 'POST' && typeof created?.id === 'string')
        ctx.created(new URL(res.exchange.request.url).pathname.split('/').at(-1)!, created.id);
      const code = catalogCodeOf(res);
      if (!ctx.check(res.status === 429 && code === 'HPB-00105', `${a.requirement}: answered ${res.status} ${code ?? ''} while the key is over its limit`.trim(), {
        requirement: a.requirement,
        expected: { status: 429, code: 'HPB-00105' },
        actual: { status: res.status, code },
        exchange: res.exchange.id,
      })) continue;
      expectError(res, { status: 429, code: 'HPB-00105', issueCode: 'throttled', requirement: a.requirement });
    }
  },
});
