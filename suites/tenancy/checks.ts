/**
 * Tenancy (spec: What the service does: "Every resource belongs to the caller's
 * organization. An id that does not exist in the caller's organization gives
 * 404."). Both directions: the second organization's client against the main
 * organization's fixtures, and the main client against the `otherOrg*` fixtures.
 */
import { type CheckDefinition, defineCheck, coveringTokens } from '../../src/engine/index.js';
import { bundleResources, catalogCodeOf, expectError, idOf, isObject, referencedId, searchUrl } from '../../src/service/index.js';
import { channelChecks } from './channel-checks.js';
import { referenceCheck } from './reference-check.js';
import { uploadPatientCheck } from './upload-patient-check.js';
import { attributeSearchCheck } from './attribute-search-check.js';
import { DIRECTIONS, FIXTURES, ownerRead, ownersAmong, scope, skipUnverified } from './support.js';

const area = 'tenancy';

/** The search parameters that reach a record through a reference or its id (those the search publishes; `patient` always). */
const REFERENCE_PARAMS = ['patient', 'subject', 'encounter', '_id'] as const;

export const checks: CheckDefinition[] = coveringTokens([
  defineCheck({
    id: 'tenancy.foreign-read-404',
    surfaces: {
      release: 'R4, R5',
      resource: 'MedicationRequest (R4), Encounter (R4), DocumentReference (R5), from the tenancy fixtures',
      keyKind: 'sandbox keys of two organizations (main, second-org), both directions',
      channel: 'read',
      leftOut: ['vread and history: the spec publishes neither (not in the operation model)'],
    },
    title: "reading another organization's MedicationRequest, Encounter or DocumentReference gives 404",
    area,
    level: 'MUST',
    requirements: ['tenancy.foreign-id-404'],
    quote: "An id that does not exist in the caller's organization gives 404.",
    clients: ['second-org'],
    fixtures: FIXTURES,
    async run(ctx) {
      const unverified: string[] = [];
      for (const d of DIRECTIONS) {
        for (const t of d.targets) {
          // The other organization's read first: a record it gets is a leak whatever its owner gets.
          const op = ctx.operation(t.resource, 'read', t.release);
          const res = await ctx.fhir({ scopes: scope(t, 'rs'), role: d.prober, url: ctx.path(op.path, { id: ctx.fixture(t.fixture) }) });
          expectError(res, { status: 404, requirement: 'tenancy.foreign-id-404' });
          ctx.observe(`tenancy.read.${t.resource}.${d.prober}`, catalogCodeOf(res));
          // A 404 proves nothing unless the owner reads the record.
          const own = await ownerRead(ctx, d, t);
          if (typeof own === 'string') unverified.push(own);
        }
      }
      skipUnverified(ctx, unverified);
    },
  }),
  defineCheck({
    id: 'tenancy.foreign-update-404',
    surfaces: {
      release: 'R4, R5',
      resource: 'MedicationRequest (R4), Encounter (R4), DocumentReference (R5), from the tenancy fixtures',
      keyKind: 'main and second-org, both directions',
      channel: 'update without If-Match',
      leftOut: ['$upload at instance level: document-reference.upload-foreign-instance-404 (it needs the upload contract of that suite)'],
    },
    title: "updating another organization's MedicationRequest, Encounter or DocumentReference gives 404",
    area,
    level: 'MUST',
    requirements: ['tenancy.foreign-id-404'],
    quote: "An id that does not exist in the caller's organization gives 404.",
    tags: ['writes'],
    clients: ['second-org'],
    fixtures: FIXTURES,
    async run(ctx) {
      const unverified: string[] = [];
      for (const d of DIRECTIONS) {
        for (const t of d.targets) {
          // The body is the record exactly as its owner reads it: a faulty server that accepts it changes nothing.
          const own = await ownerRead(ctx, d, t);
          if (typeof own === 'string') {
            unverified.push(own);
            continue;
          }
          const { meta: _meta, ...body } = own;
          const op = ctx.operation(t.resource, 'update', t.release);
          const res = await ctx.fhir({ scopes: scope(t, 'cru'), role: d.prober, method: 'PUT', url: ctx.path(op.path, { id: ctx.fixture(t.fixture) }), body });
          expectError(res, { status: 404, requirement: 'tenancy.foreign-id-404' });
        }
      }
      skipUnverified(ctx, unverified);
    },
  }),
  defineCheck({
    id: 'tenancy.foreign-search-empty',
    surfaces: {
      release: 'R4, R5',
      resource: 'MedicationRequest (R4), Encounter (R4), DocumentReference (R5), from the tenancy fixtures',
      keyKind: 'main and second-org, both directions',
      channel: 'search',
      parameters: 'each published reference parameter alone: patient, subject, encounter, _id',
    },
    title: "searches never return another organization's records",
    area,
    level: 'MUST',
    requirements: ['tenancy.resources-belong-to-org'],
    quote: "Every resource belongs to the caller's organization.",
    clients: ['second-org'],
    fixtures: FIXTURES,
    async run(ctx) {
      const checked: string[] = [];
      for (const d of DIRECTIONS) {
        const patientId = ctx.fixture(d.patientFixture);
        const encounterId = ctx.fixture(d.encounterFixture);
        const foreignIds = new Set(d.targets.map((t) => ctx.fixture(t.fixture)));
        for (const t of d.targets) {
          const op = ctx.operation(t.resource, 'search-type', t.release);
          // Every reference parameter the target publishes for the search (and `_id`), each with the owner's record.
          const values: Record<string, string> = { patient: patientId, subject: patientId, encounter: encounterId, _id: ctx.fixture(t.fixture) };
          const params = REFERENCE_PARAMS.filter((name) => name === 'patient' || op.searchParams.some((p) => p.name === name)).map((name): [string, string] => [
            name,
            values[name]!,
          ]);
          for (const param of params) {
            checked.push(`${t.release} ${t.resource} ${param[0]} (${d.prober})`);
            const res = await ctx.fhir({ scopes: scope(t, 'rs'), role: d.prober, url: searchUrl(op.path, [param]) });
            if (res.status >= 400 && res.status < 500) {
              // A refusal reveals no record; which refusal the target chose is recorded.
              ctx.observe(`tenancy.search.${t.resource}.${param[0]}.${d.prober}`, { status: res.status, code: catalogCodeOf(res) });
              continue;
            }
            const found = isObject(res.json) && res.json.resourceType === 'Bundle' ? bundleResources(res.json) : [];
            const named = found.filter(
              (r) => foreignIds.has(idOf(r)) || referencedId(r.subject, 'Patient') === patientId || referencedId(r.encounter, 'Encounter') === encounterId,
            );
            const leaked = await ownersAmong(ctx, d, t, named, foreignIds);
            const what =
              res.status === 200 ? `returns ${leaked.length} record(s) of another organization` : `answers ${res.status} (neither a searchset nor a refusal)`;
            ctx.check(res.status === 200 && leaked.length === 0, `${d.prober}: ${t.resource} search ${param[0]}=${param[1]} ${what}`, {
              requirement: 'tenancy.resources-belong-to-org',
              expected: 'no record of another organization',
              actual: { status: res.status, leaked: leaked.slice(0, 3).map(idOf) },
              exchange: res.exchange.id,
            });
          }
        }
      }
      ctx.observe('surfaces', { checked });
    },
  }),
  ...channelChecks,
  referenceCheck,
  uploadPatientCheck,
  attributeSearchCheck,
]);

export default checks;
