/**
 * Generic invariants, checked on every exchange of the run by the HTTP layer
 * (src/service/invariants.ts) and reported here, last, one check per invariant:
 * the evidence is the first violating exchanges.
 */
import { type CheckContext, type CheckDefinition, type CheckSurfaces, defineCheck } from '../../src/engine/index.js';
import {
  CORRELATION_ID_DISTINCT_REQUIREMENT,
  ENCOUNTER_CLASS_REQUIREMENT,
  ENCOUNTER_STATUS_REQUIREMENT,
  PATHS,
  FHIR_BODY_REQUIREMENT,
  INVARIANTS,
  META_VERSION_ID_REQUIREMENT,
  surfaceLabel,
  surfaceProbeUrl,
  surfacesOf,
} from '../../src/service/index.js';

/**
 * The run-wide rules, one check each. `tallied`: the requirements its findings cite, when fewer than
 * it names (correlation-id-present names the audit sentence, whose repeats correlation-id-distinct reports).
 */
const RUN_WIDE: Array<{ id: string; title: string; requirements: string[]; tallied?: string[] }> = [
  ...INVARIANTS.map((inv) => (inv.id === 'correlation-id-present' ? { ...inv, tallied: ['headers.correlation-id-every-response'] } : inv)),
  {
    id: 'fhir-json-resources',
    title: 'successful FHIR responses are valid FHIR resources in JSON (HL7 schema of the release)',
    requirements: [FHIR_BODY_REQUIREMENT],
  },
  {
    id: 'correlation-id-distinct',
    title: 'no two authenticated requests, nor two token requests, are answered with the same X-Correlation-Id (one audit record per request)',
    requirements: [CORRELATION_ID_DISTINCT_REQUIREMENT, 'headers.correlation-id-every-response'],
    tallied: [CORRELATION_ID_DISTINCT_REQUIREMENT],
  },
  {
    id: 'encounter-shape',
    title:
      'every R4 Encounter a successful answer holds (read, search entry) that no run of the suite wrote has a status among planned, in-progress, finished, cancelled and a class Coding with system, code and display',
    requirements: [ENCOUNTER_STATUS_REQUIREMENT, ENCOUNTER_CLASS_REQUIREMENT],
  },
  {
    id: 'meta-version-id',
    title: 'every resource of a published type in a successful answer (read, create, update, search entry) carries meta.versionId',
    requirements: [META_VERSION_ID_REQUIREMENT],
  },
];

/** Every exchange of the run: the surface probes and the generated checks reach every published surface. */
const RUN_WIDE_SURFACES: CheckSurfaces = {
  release: 'every exchange of the run: each published release',
  resource: 'each published resource family: one sampled 404 on each (from the operation model), besides the surface probes and generated.*',
  keyKind: 'every key the run uses, and one sampled exchange with a key of the other declared kind',
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
      const sampled = await sampleSurfaces(ctx);
      const seen = ctx.run.exchangesSeen();
      if (seen === 0) throw new Error('no response was received in this run, so no exchange could be examined');
      for (const req of inv.tallied ?? inv.requirements) {
        const tally = ctx.run.invariant(req);
        for (const v of tally.violations) {
          ctx.attach(v.exchange);
          ctx.check(false, v.finding.message, v.finding);
        }
        if (tally.violationCount > tally.violations.length)
          ctx.check(false, `… and ${tally.violationCount - tally.violations.length} more exchanges break this rule`, { requirement: req });
      }
      ctx.observe('exchanges-examined', seen);
      ctx.observe('surfaces', { sampled });
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

const NO_SUCH_ID = '00000000-0000-4000-8000-000000000000';

/**
 * One authenticated exchange (a 404) on every published surface (release and resource family, from the
 * operation model) and one with a key of each declared kind besides main's, whatever else ran: a rule of
 * every exchange may break on one surface or for one kind of key only. Shared reads of fixed URLs: the
 * first invariants check sends them, the others reuse its exchanges. Any token the key holds whose
 * scopes include the surface's serves (no token request after the issuance episode exhausted the window).
 */
async function sampleSurfaces(ctx: CheckContext): Promise<string[]> {
  const reached: string[] = [];
  for (const s of surfacesOf(ctx.model)) {
    if (!s.probe.scope) continue;
    const url = s.probe.interaction === 'read' ? ctx.path(s.probe.path, { id: NO_SUCH_ID }) : surfaceProbeUrl(s);
    await ctx.fhir({ url, scopes: [s.probe.scope], share: true, coveringToken: true });
    reached.push(surfaceLabel(s));
  }
  const mainKind = ctx.config.clients.find((c) => c.role === 'main')?.keyKind ?? 'sandbox';
  const other = ctx.config.clients.find((c) => (c.keyKind ?? 'sandbox') !== mainKind);
  if (other) {
    await ctx.fhir({
      role: other.role,
      url: `/fhir/R4/MedicationRequest/${NO_SUCH_ID}`,
      scopes: ['system/MedicationRequest.rs'],
      share: true,
      coveringToken: true,
    });
    reached.push(`${other.keyKind ?? 'sandbox'} key (${other.role})`);
  }
  return reached;
}

export default checks;
