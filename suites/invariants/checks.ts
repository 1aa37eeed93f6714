/**
 * Generic invariants, checked on every exchange of the run by the HTTP layer
 * (src/http/invariants.ts) and reported here, last, one check per invariant:
 * the evidence is the first violating exchanges.
 */
import { defineCheck, type CheckDefinition } from '../../src/engine/check.js';
import { INVARIANTS } from '../../src/http/invariants.js';

export const checks: CheckDefinition[] = INVARIANTS.map((inv) =>
  defineCheck({
    id: `invariants.${inv.id}`,
    title: `every exchange of the run: ${inv.title}`,
    area: 'invariants',
    level: 'MUST',
    requirements: inv.requirements,
    async run(ctx) {
      const seen = ctx.run.exchangesSeen();
      if (seen === 0) ctx.skip('no exchange was made in this run');
      for (const req of inv.requirements) {
        const tally = ctx.run.invariant(req);
        for (const v of tally.violations) {
          ctx.attach(v.exchange);
          ctx.check(false, v.finding.message, v.finding);
        }
        if (tally.violationCount > tally.violations.length)
          ctx.check(false, `… and ${tally.violationCount - tally.violations.length} more exchanges break this rule`, { requirement: req });
      }
      ctx.observe('exchanges-examined', seen);
    },
  }),
);

export default checks;
