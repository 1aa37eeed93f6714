/**
 * Generic invariants, checked on every exchange of the run by the HTTP layer
 * (src/service/invariants.ts) and reported here, last, one check per invariant:
 * the evidence is the first violating exchanges.
 */
import { type CheckContext, type CheckDefinition, type CheckSurfaces, defineCheck } from '../../src/engine/index.js';
import { PATHS, FHIR_BODY_REQUIREMENT, INVARIANTS } from '../../src/service/index.js';

const RUN_WIDE = [
  ...INVARIANTS,
  {
    id: 'fhir-json-resources',
    title: 'successful FHIR responses are valid FHIR resources in JSON (HL7 schema of the release)',
    requirements: [FHIR_BODY_REQUIREMENT],
  },
];

/** Every exchange of the run: the surface probes and the generated checks reach every published surface. */
const RUN_WIDE_SURFACES: CheckSurfaces = {
  release: 'every exchange of the run: each published release',
  resource: 'each published resource family (the surface probes and generated.* reach every operation)',
  keyKind: 'every key the run uses (main, extra, second-org, production)',
  channel: 'every request: reads, searches, writes, errors, token endpoint',
  page: 'every page any check fetches',
  version: 'every version any check writes or reads',
};

export const checks: CheckDefinition[] = RUN_WIDE.map((inv) =>
  defineCheck({
    id: `invariants.${inv.id}`,
    title: `every exchange of the run: ${inv.title}`,
    area: 'invariants',
    tags: ['last'],
    level: 'MUST',
    requirements: inv.requirements,
    surfaces: RUN_WIDE_SURFACES,
    async run(ctx) {
      // Run (almost) on its own (--only, --requirements), it samples a few exchanges first.
      if (ctx.run.exchangesSeen() < MIN_SAMPLE) await sample(ctx);
      const seen = ctx.run.exchangesSeen();
      if (seen === 0) throw new Error('no response was received in this run, so no exchange could be examined');
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

const MIN_SAMPLE = 5;

/** A small sample of every kind of exchange: discovery, success, search, and errors. */
async function sample(ctx: CheckContext): Promise<void> {
  const read = ['system/MedicationRequest.rs'];
  await ctx.request({ url: PATHS.metadata.R4, headers: { accept: 'application/fhir+json' } });
  await ctx.request({ url: '/fhir/R4/MedicationRequest/00000000-0000-4000-8000-000000000000', headers: { accept: 'application/fhir+json' } });
  await ctx.fhir({ url: '/fhir/R4/MedicationRequest/00000000-0000-4000-8000-000000000000', scopes: read });
  if (ctx.hasFixture('medicationRequest')) await ctx.fhir({ url: `/fhir/R4/MedicationRequest/${ctx.fixture('medicationRequest')}`, scopes: read });
  if (ctx.hasFixture('patient')) await ctx.fhir({ url: `/fhir/R4/MedicationRequest?patient=${ctx.fixture('patient')}&_count=5`, scopes: read });
}

export default checks;
