/**
 * Tenancy through a search that names no patient: an Encounter search by status, class or date, a
 * DocumentReference search by type, category or date. tenancy.foreign-search-empty tries the
 * parameters that name a record (patient, subject, encounter, _id); a target that scopes its
 * searches by resolving the patient in the caller's organization, and queries by any other
 * parameter without the organization, serves every organization's records to a search by status.
 * The values searched for are the other organization's own record's, so a leak would match it.
 */
import { type CheckDefinition, defineCheck } from '../../src/engine/index.js';
import { bundleLink, bundleResources, catalogCodeOf, firstCodeOf, idOf, isObject, type Json, referencedId, searchUrl } from '../../src/service/index.js';
import { DIRECTIONS, ownerRead, ownersAmong, scope, skipUnverified, type Target } from './support.js';

const area = 'tenancy';
/** Pages followed per search: a leaked record may sit on any page. */
const MAX_PAGES = 5;

/** The day (YYYY-MM-DD) a FHIR dateTime or instant names, and the days either side (a target may compare another time zone's day). */
function dayWindow(value: unknown): Array<[string, string]> | undefined {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(value)) return undefined;
  const day = Date.parse(`${value.slice(0, 10)}T00:00:00Z`);
  if (Number.isNaN(day)) return undefined;
  const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return [
    ['date', `ge${iso(day - 86_400_000)}`],
    ['date', `le${iso(day + 86_400_000)}`],
  ];
}

/** The searches by one attribute of the owner's record (no patient), for the parameters its type's search has. */
function attributeQueries(t: Target, record: Json): Array<{ label: string; params: Array<[string, string]> }> {
  const out: Array<{ label: string; params: Array<[string, string]> }> = [];
  const add = (label: string, params: Array<[string, string]> | undefined) => {
    if (params?.every(([, v]) => v !== '')) out.push({ label, params });
  };
  if (t.resource === 'Encounter') {
    if (typeof record.status === 'string') add('status', [['status', record.status]]);
    const cls = firstCodeOf(record.class);
    if (cls) add('class', [['class', cls]]);
    add('date', dayWindow(isObject(record.period) ? record.period.start : undefined));
  } else if (t.resource === 'DocumentReference') {
    const type = firstCodeOf(record.type);
    if (type) add('type', [['type', type]]);
    const category = firstCodeOf(record.category);
    if (category) add('category', [['category', category]]);
    add('date', dayWindow(record.date));
  }
  return out;
}

export const attributeSearchCheck: CheckDefinition = defineCheck({
  id: 'tenancy.attribute-search-own-records-only',
  surfaces: {
    release: 'R4, R5',
    resource: 'Encounter (R4: status, class, date), DocumentReference (R5: type, category, date): the values of the other organization’s own record',
    keyKind: "main searching with the second organization's record's values",
    channel: 'a search that names no patient',
    page: `every page up to ${MAX_PAGES}`,
    leftOut: [
      'MedicationRequest: its search names a patient or an encounter (tenancy.foreign-search-empty)',
      'the other direction (second-org searching with main’s values): the same rule from the other side, not sent',
    ],
  },
  title: "a search by status, class, type, category or date (no patient) serves none of another organization's records, even those its values match",
  area,
  level: 'MUST',
  requirements: ['tenancy.resources-belong-to-org'],
  quote: "Every resource belongs to the caller's organization.",
  clients: ['second-org'],
  // The owner's two reads, six searches of a page each (more where a page has a next link).
  requests: 8,
  fixtures: ['otherOrgPatient', 'otherOrgEncounter', 'otherOrgDocumentReference'],
  async run(ctx) {
    const d = DIRECTIONS.find((x) => x.owner === 'second-org')!;
    const ownerPatient = ctx.fixture(d.patientFixture);
    const unverified: string[] = [];
    const checked: string[] = [];
    const notChecked: string[] = [];
    const refused: Record<string, string> = {};
    for (const t of d.targets.filter((x) => x.resource !== 'MedicationRequest')) {
      const op = ctx.findOperation(t.resource, 'search-type', t.release);
      if (!op) {
        notChecked.push(`${t.release} ${t.resource} (no published search)`);
        continue;
      }
      const record = await ownerRead(ctx, d, t);
      if (typeof record === 'string') {
        unverified.push(record);
        continue;
      }
      const published = new Set(op.searchParams.map((p) => p.name));
      const ownerId = ctx.fixture(t.fixture);
      for (const q of attributeQueries(t, record)) {
        const surface = `${t.release} ${t.resource}?${q.label}`;
        if (!q.params.every(([name]) => published.has(name))) {
          notChecked.push(`${surface} (not a published parameter)`);
          continue;
        }
        let url: string | undefined = searchUrl(op.path, [...q.params, ['_count', '100']]);
        const leaked: string[] = [];
        for (let page = 0; url && page < MAX_PAGES; page++) {
          const res = await ctx.fhir({ scopes: scope(t, 'rs'), role: d.prober, url });
          if (page === 0 && res.status >= 400 && res.status < 500) {
            // A search that must name a patient refuses this one: nothing served, nothing leaked.
            refused[surface] = `${res.status}${catalogCodeOf(res) ? ` ${catalogCodeOf(res)}` : ''}`;
            break;
          }
          const bundle = res.status === 200 && isObject(res.json) && res.json.resourceType === 'Bundle' ? res.json : undefined;
          ctx.check(bundle !== undefined, `${surface}: page ${page + 1} answered ${res.status}, neither a searchset nor a refusal`, {
            requirement: 'tenancy.resources-belong-to-org',
            expected: "a searchset of the caller's own records, or a 4xx",
            actual: res.status,
            exchange: res.exchange.id,
          });
          if (!bundle) break;
          const named = bundleResources(bundle).filter((r) => idOf(r) === ownerId || referencedId(r.subject, 'Patient') === ownerPatient);
          for (const r of await ownersAmong(ctx, d, t, named)) leaked.push(idOf(r) || '(no id)');
          if (leaked.length) {
            ctx.attach(res.exchange);
            break;
          }
          url = bundleLink(bundle, 'next');
        }
        checked.push(surface);
        ctx.check(
          leaked.length === 0,
          `${surface} by ${d.prober} served ${leaked.length} record(s) of the ${d.owner} organization (${leaked.slice(0, 3).join(', ')}), matched by its own record's ${q.label}`,
          { requirement: 'tenancy.resources-belong-to-org', expected: "only the caller's own records", actual: leaked.slice(0, 5) },
        );
      }
    }
    ctx.observe('surfaces', { checked, ...(notChecked.length ? { notChecked } : {}) });
    if (Object.keys(refused).length)
      ctx.observe('tenancy.attribute-search-refused', refused, 'searches that name no patient, refused by the target (its own choice)');
    // A record its owner cannot read leaves its type unjudged; a leak found elsewhere still fails.
    if (checked.length === 0) skipUnverified(ctx, unverified);
    if (unverified.length) ctx.observe('tenancy.attribute-search-unverified', unverified);
    if (checked.length === 0) ctx.skip(`no search by an attribute could be sent: ${notChecked.join('; ')}`);
  },
});
