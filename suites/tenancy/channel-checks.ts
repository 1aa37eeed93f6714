/**
 * Tenancy through the channels beside a plain read, update and search: a conditional update
 * (`If-Match`) of another organization's id, and a pagination cursor obtained by one organization
 * and followed with the other's token. Both must reveal nothing of the other organization.
 */
import { type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import { bundleLink, bundleResources, catalogCodeOf, expectError, idOf, isObject, onSurface, referencedId, searchUrl } from '../../src/service/index.js';
import { DIRECTIONS, FIXTURES, ownerRead, ownersAmong, scope, skipUnverified } from './support.js';

const area = 'tenancy';
const QUOTE = "An id that does not exist in the caller's organization gives 404.";

export const channelChecks: CheckDefinition[] = [
  defineCheck({
    id: 'tenancy.foreign-update-if-match-404',
    surfaces: {
      release: 'R4, R5',
      resource: 'MedicationRequest (R4), Encounter (R4), DocumentReference (R5), from the tenancy fixtures',
      keyKind: 'main and second-org, both directions',
      channel: 'update with a stale If-Match',
    },
    title: "a conditional update (stale If-Match) of another organization's MedicationRequest, Encounter or DocumentReference gives 404, never 409",
    area,
    level: 'MUST',
    requirements: ['tenancy.foreign-id-404'],
    quote: QUOTE,
    tags: ['writes'],
    clients: ['second-org'],
    fixtures: FIXTURES,
    async run(ctx) {
      const unverified: string[] = [];
      const checked: string[] = [];
      for (const d of DIRECTIONS) {
        for (const t of d.targets) {
          const own = await ownerRead(ctx, d, t);
          if (typeof own === 'string') {
            unverified.push(own);
            continue;
          }
          const { meta: _meta, ...body } = own;
          const op = ctx.operation(t.resource, 'update', t.release);
          // A validator that names no version of the record: a 409 for it would tell the caller the id exists elsewhere.
          const res = await ctx.fhir({
            scopes: scope(t, 'cru'),
            role: d.prober,
            method: 'PUT',
            url: ctx.path(op.path, { id: ctx.fixture(t.fixture) }),
            body,
            headers: { 'if-match': 'W/"stale-validator-0"' },
          });
          const surface = `${t.release} ${t.resource} (${d.prober})`;
          onSurface(surface, () => expectError(res, { status: 404, requirement: 'tenancy.foreign-id-404' }));
          checked.push(surface);
        }
      }
      ctx.observe('surfaces', { checked });
      skipUnverified(ctx, unverified);
    },
  }),
  defineCheck({
    id: 'tenancy.foreign-cursor-refused',
    surfaces: {
      release: 'R4, R5',
      resource: 'MedicationRequest (R4), Encounter (R4), DocumentReference (R5), from the tenancy fixtures',
      keyKind: 'both directions: main obtains and second-org follows, second-org obtains and main follows',
      channel: 'pagination cursor (next link)',
      page: 'second page',
      leftOut: ["a direction whose owner's patient has one record of the type (no next link at _count 1): listed in the notChecked observation"],
    },
    title: "a next link obtained by one organization and followed with another organization's token serves none of the first organization's records",
    area,
    level: 'MUST',
    requirements: ['tenancy.resources-belong-to-org'],
    quote: "Every resource belongs to the caller's organization.",
    clients: ['second-org'],
    fixtures: FIXTURES,
    async run(ctx) {
      const checked: string[] = [];
      const unchecked: string[] = [];
      // Both directions: each organization's cursors followed with the other's token.
      for (const d of DIRECTIONS) {
        const patientId = ctx.fixture(d.patientFixture);
        for (const t of d.targets) {
          const op = ctx.findOperation(t.resource, 'search-type', t.release);
          const surface = `${t.release} ${t.resource} (${d.owner}'s cursor, ${d.prober}'s token)`;
          if (!op) {
            unchecked.push(`${surface} (no published search)`);
            continue;
          }
          // A page of one record, so the owner's patient (with more than one record) has a next page.
          const first = await ctx.fhir({
            scopes: scope(t, 'rs'),
            role: d.owner,
            url: searchUrl(op.path, [
              ['patient', patientId],
              ['_count', '1'],
            ]),
          });
          const next = first.status === 200 && isObject(first.json) ? bundleLink(first.json, 'next') : undefined;
          if (!next) {
            unchecked.push(`${surface} (the owner's search by ${d.patientFixture} answered ${first.status} without a next link)`);
            continue;
          }
          const res = await ctx.fhir({ scopes: scope(t, 'rs'), role: d.prober, url: next });
          checked.push(surface);
          if (res.status >= 400 && res.status < 500) {
            ctx.observe(`tenancy.cursor.${t.resource}.${d.prober}`, { status: res.status, code: catalogCodeOf(res) });
            continue;
          }
          const found = res.status === 200 && isObject(res.json) && res.json.resourceType === 'Bundle' ? bundleResources(res.json) : [];
          const ownerIds = new Set(isObject(first.json) ? bundleResources(first.json).map(idOf) : []);
          const named = found.filter((r) => ownerIds.has(idOf(r)) || referencedId(r.subject, 'Patient') === patientId || idOf(r) === ctx.fixture(t.fixture));
          const leaked = await ownersAmong(ctx, d, t, named, ownerIds);
          const what =
            res.status === 200 ? `served ${leaked.length} record(s) of ${d.owner}'s organization` : `answered ${res.status} (neither a page nor a refusal)`;
          ctx.check(res.status === 200 && leaked.length === 0, `${surface}: ${d.owner}'s next link followed with ${d.prober}'s token ${what}`, {
            requirement: 'tenancy.resources-belong-to-org',
            expected: "a 4xx, or a page of the caller's own records",
            actual: { status: res.status, leaked: leaked.slice(0, 3).map(idOf) },
            exchange: res.exchange.id,
          });
        }
      }
      ctx.observe('surfaces', { checked, ...(unchecked.length ? { notChecked: unchecked } : {}) });
      if (checked.length === 0) ctx.skip(`no search gave a next link to follow: ${unchecked.join('; ')}`);
    },
  }),
];
