/**
 * What the tenancy checks share: the two directions (which organization owns the records, which
 * probes them), the fixtures, and the owner's own read that makes a 404 meaningful.
 */
import type { CheckContext } from '../../src/engine/index.js';
import type { HttpResponse } from '../../src/http/index.js';
import { catalogCodeOf, isObject, type Json } from '../../src/service/index.js';

/** An answer as the tenancy findings quote it: its status and catalog code. */
export const answered = (res: HttpResponse): string => {
  const code = catalogCodeOf(res);
  return code ? `${res.status} ${code}` : `${res.status}`;
};
/** A 2xx: the write (or upload) was taken. */
export const accepted = (res: HttpResponse): boolean => res.status >= 200 && res.status < 300;

export interface Target {
  resource: 'MedicationRequest' | 'Encounter' | 'DocumentReference';
  release: 'R4' | 'R5';
  /** Fixture key of a record of the organization that owns it. */
  fixture: string;
}

export interface Direction {
  /** The role owning the records, and the role probing them. */
  owner: string;
  prober: string;
  patientFixture: string;
  /** Fixture key of an Encounter of the owner (the value of an `encounter` search parameter). */
  encounterFixture: string;
  targets: Target[];
}

export const DIRECTIONS: Direction[] = [
  {
    owner: 'main',
    prober: 'second-org',
    patientFixture: 'patient',
    encounterFixture: 'encounter',
    targets: [
      { resource: 'MedicationRequest', release: 'R4', fixture: 'medicationRequest' },
      { resource: 'Encounter', release: 'R4', fixture: 'encounter' },
      { resource: 'DocumentReference', release: 'R5', fixture: 'documentReference' },
    ],
  },
  {
    owner: 'second-org',
    prober: 'main',
    patientFixture: 'otherOrgPatient',
    encounterFixture: 'otherOrgEncounter',
    targets: [
      { resource: 'MedicationRequest', release: 'R4', fixture: 'otherOrgMedicationRequest' },
      { resource: 'Encounter', release: 'R4', fixture: 'otherOrgEncounter' },
      { resource: 'DocumentReference', release: 'R5', fixture: 'otherOrgDocumentReference' },
    ],
  },
];

export const FIXTURES = [...new Set(DIRECTIONS.flatMap((d) => [d.patientFixture, d.encounterFixture, ...d.targets.map((t) => t.fixture)]))];

export const scope = (t: Target, letters: 'rs' | 'cru') => [`system/${t.resource}.${letters}`];

/** The record as its owner reads it, or why the owner cannot read it (the fixture is not the owner's). */
export async function ownerRead(ctx: CheckContext, d: Direction, t: Target): Promise<Json | string> {
  const op = ctx.operation(t.resource, 'read', t.release);
  const res = await ctx.fhir({ scopes: scope(t, 'rs'), role: d.owner, url: ctx.path(op.path, { id: ctx.fixture(t.fixture) }), share: true });
  if (res.status !== 200 || !isObject(res.json)) return `${t.fixture} (${d.owner}: ${res.status})`;
  return res.json;
}

/** Skips when some record could not be verified because its owner cannot read it (after every record was tried). */
export function skipUnverified(ctx: CheckContext, unverified: string[]): void {
  if (unverified.length)
    ctx.skip(
      `fixtures not readable by their own organization's client, so a 404 for them proves nothing: ${unverified.join(', ')}; the config's fixtures do not match its clients`,
    );
}

/**
 * The owner's records among those a search served the prober that name the owner's ids: those whose id
 * is the fixture's or in `known` (the owner's own answers), else those the owner reads. A record of the
 * prober's own may name the owner's patient or encounter (a target that does not resolve a write's
 * references accepts one: tenancy.foreign-reference-in-write), and is no leak.
 */
export async function ownersAmong(
  ctx: CheckContext,
  d: Direction,
  t: Target,
  records: readonly Json[],
  known: ReadonlySet<string> = new Set(),
): Promise<Json[]> {
  const op = ctx.operation(t.resource, 'read', t.release);
  const owners: Json[] = [];
  for (const record of records) {
    const id = typeof record.id === 'string' ? record.id : '';
    if (id === ctx.fixture(t.fixture) || known.has(id)) owners.push(record);
    else if (id !== '' && (await ctx.fhir({ scopes: scope(t, 'rs'), role: d.owner, url: ctx.path(op.path, { id }), share: true })).status === 200)
      owners.push(record);
  }
  return owners;
}
