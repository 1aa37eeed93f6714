/**
 * Validators and version headers (spec: Versioning rule 4; MedicationRequest
 * update rules 4-5): entity-tag and HTTP-date syntax, and the reads whose
 * headers and meta the versioning checks examine.
 */
import type { CheckContext } from '../../src/engine/index.js';
import { expectResource, expectStatus, type Resource } from '../../src/service/index.js';
import type { Release } from '../../src/fhir/index.js';
import type { HttpResponse } from '../../src/http/index.js';

/** RFC 9110 entity-tag: optional weak prefix, quoted opaque tag. */
const ENTITY_TAG = /^(W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/;

const DAY = '(Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const MONTH = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
/** RFC 9110 HTTP-date: IMF-fixdate, or the obsolete RFC 850 and asctime forms recipients accept. */
const HTTP_DATES: Array<[string, RegExp]> = [
  ['IMF-fixdate', new RegExp(`^${DAY}, \\d{2} ${MONTH} \\d{4} \\d{2}:\\d{2}:\\d{2} GMT$`)],
  ['rfc850-date', new RegExp(`^(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \\d{2}-${MONTH}-\\d{2} \\d{2}:\\d{2}:\\d{2} GMT$`)],
  ['asctime-date', new RegExp(`^${DAY} ${MONTH} [ \\d]\\d \\d{2}:\\d{2}:\\d{2} \\d{4}$`)],
];

export function isEntityTag(value: string | undefined): value is string {
  return value !== undefined && ENTITY_TAG.test(value);
}

/** The HTTP-date form of the value, or undefined when it is not an HTTP-date. */
export function httpDateForm(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return HTTP_DATES.find(([, re]) => re.test(value))?.[0];
}

/**
 * Waits until the next write lands in a later second than `lastModified` on the target's clock:
 * HTTP-dates have whole seconds, so an update within the same second may keep the same Last-Modified.
 * The target's clock is its Date header on `res` (the answer that named `lastModified`), at most that
 * late, plus the time since; at most 3 s.
 */
export async function waitPastSecond(ctx: CheckContext, lastModified: string, res: HttpResponse): Promise<void> {
  const answeredAt = Date.parse(res.exchange.startedAt) + (res.exchange.durationMs ?? 0);
  const targetThen = Date.parse(res.headers.date ?? '') || answeredAt;
  const waitMs = Math.max(0, Date.parse(lastModified) + 1100 - targetThen - (Date.now() - answeredAt));
  if (waitMs > 0) await ctx.sleep(Math.min(waitMs, 3000));
}

/** The opaque part of an entity-tag (weak and strong forms of one version compare equal). */
export function opaqueTag(etag: string): string {
  return etag.replace(/^W\//, '');
}

export interface VersionedRead {
  label: string;
  res: HttpResponse;
  resource: Resource;
}

interface ReadTarget {
  label: string;
  resource: string;
  release: Release;
  fixture: string;
  scope: string;
}

/** One read per resource type the target publishes and the config has a fixture for. */
const READ_TARGETS: ReadTarget[] = [
  { label: 'MedicationRequest (R4)', resource: 'MedicationRequest', release: 'R4', fixture: 'medicationRequest', scope: 'system/MedicationRequest.rs' },
  { label: 'Encounter (R4)', resource: 'Encounter', release: 'R4', fixture: 'encounter', scope: 'system/Encounter.rs' },
  { label: 'DocumentReference (R5)', resource: 'DocumentReference', release: 'R5', fixture: 'documentReference', scope: 'system/DocumentReference.rs' },
];

export async function versionedReads(ctx: CheckContext, requirement: string): Promise<VersionedRead[]> {
  const reads: VersionedRead[] = [];
  for (const t of READ_TARGETS) {
    const op = ctx.findOperation(t.resource, 'read', t.release);
    if (!op || !ctx.hasFixture(t.fixture)) continue;
    const res = await ctx.fhir({ scopes: [t.scope], url: ctx.path(op.path, { id: ctx.fixture(t.fixture) }), share: true });
    expectStatus(res, 200, requirement, `read of ${t.label}`);
    reads.push({ label: t.label, res, resource: expectResource(ctx, res, t.resource, requirement, t.release) });
  }
  if (reads.length === 0) ctx.skip('no published read operation with a configured fixture');
  return reads;
}
