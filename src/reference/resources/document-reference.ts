/**
 * DocumentReference (R5 surface): read, create, update, search (spec
 * "DocumentReference (R5 surface)"). The R5 shape: status
 * current|superseded|entered-in-error, content 1..* with attachment, subject, type,
 * category, date, description. A document sent inline (`content[].attachment.data`)
 * is held to the same rules as an upload: over the document size maximum 413
 * HPB-00119; bytes that do not match a known declared type 400 HPB-00120. The
 * `$upload` operation lives in upload.ts.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { CodeableConcept } from 'fhir/r4.js';
import type { Handler, HandlerContext, HandlerResponse } from '../types.js';
import { compact, detached } from './compact.js';
import type { ResourceEnv } from './env.js';
import { referencedRecord, resolvedRecord } from './references.js';
import { invalid, notFound, unprocessable } from './errors.js';
import { schemaProblem } from './fhir-schema.js';
import { searchQueryUnderFaults } from '../faults/encounter.js';
import { searchBundle } from './pagination.js';
import { assertPatientAcceptsData } from './patient-rules.js';
import type { DocumentReferenceRow, RecordMeta } from './records.js';
import { conceptsMatch, dateMatches, dateParams, tokenParam, uuidParam } from './search-params.js';
import { type Body, referenceId, requireField, requireResource, requireSameId } from './validate.js';
import { checkIfMatch, firstVersion, metaOf, nextVersion, versionHeaders } from './versioning.js';
import { checkInlineDocument } from './documents.js';

export const DOCUMENT_STATUSES = ['current', 'superseded', 'entered-in-error'] as const;
export const DOCUMENT_PATH = '/fhir/R5/DocumentReference';

type DocumentFields = Omit<DocumentReferenceRow, keyof RecordMeta>;

/** An attachment's `size` as the release spells it: an unsignedInt (R4), an integer64 string (R5). */
function sizedFor(release: 'R4' | 'R5', content: DocumentReferenceRow['content']): DocumentReferenceRow['content'] {
  return content.map(({ attachment }) =>
    attachment.size === undefined
      ? { attachment }
      : { attachment: { ...attachment, size: release === 'R4' ? Number(attachment.size) : String(attachment.size) } },
  );
}

export function toDocumentReference(row: DocumentReferenceRow, release: 'R4' | 'R5' = 'R5'): Record<string, unknown> {
  return detached(
    compact({
      resourceType: 'DocumentReference',
      id: row.id,
      meta: metaOf(row),
      status: row.status,
      type: row.type,
      category: row.category,
      subject: { reference: `Patient/${row.subjectId}` },
      date: row.date,
      description: row.description,
      content: sizedFor(release, row.content),
    }),
  );
}

/** 404 for an id absent from the caller's organization, with the mode's catalog code. */
export function findDocument(env: ResourceEnv, ctx: HandlerContext): DocumentReferenceRow {
  const id = ctx.params.id ?? '';
  const row = env.store.documentReferences.get(ctx.caller.org, id);
  if (!row) throw notFound('DocumentReference', id, env.modes.unknownDocumentCode);
  return row;
}

export function documentResponse(
  env: ResourceEnv,
  status: number,
  row: DocumentReferenceRow,
  extra: Record<string, string> = {},
  release: 'R4' | 'R5' = 'R5',
): HandlerResponse {
  return { status, body: toDocumentReference(row, release), headers: { ...versionHeaders(row, env.modes, env.faults, 'other'), ...extra } };
}

/**
 * Structural (400), inline document (413 / 400 HPB-00120), then semantic (validationStatus)
 * checks of a DocumentReference write body; the fields to store.
 */
export function parseDocumentBody(
  env: ResourceEnv,
  body: unknown,
  org: string,
  baseUrl = '',
  release: 'R4' | 'R5' = 'R5',
): { resource: Body; fields: DocumentFields } {
  const { store, modes } = env;
  const semantic = (message: string) => unprocessable(modes.validationStatus, message);
  const resource = requireResource(body, 'DocumentReference');
  if (typeof requireField(resource, 'status') !== 'string') throw invalid('status must be a string');
  const content = requireField(resource, 'content');
  if (!Array.isArray(content) || content.length === 0) throw invalid('content must hold at least one item');
  if (content.some((c) => typeof c !== 'object' || c === null || typeof c.attachment !== 'object' || c.attachment === null)) {
    throw invalid('every content item needs an attachment');
  }
  for (const c of content as Array<{ attachment: Record<string, unknown> }>) checkInlineDocument(env, c.attachment);
  const subjectId = referenceId(requireField(resource, 'subject'), 'Patient', 'subject');
  const problem = schemaProblem(release, 'DocumentReference', resource);
  if (problem) throw invalid(`Body does not match the FHIR ${release} schema: ${problem}`);
  if (!(DOCUMENT_STATUSES as readonly string[]).includes(resource.status as string)) {
    throw semantic(`status must be one of ${DOCUMENT_STATUSES.join(', ')}`);
  }
  referencedRecord(env, store.patients, org, 'Patient', subjectId, () => semantic(`subject Patient/${subjectId} does not exist`));
  return {
    resource,
    fields: compact({
      status: resource.status as string,
      type: resource.type as CodeableConcept | undefined,
      category: resource.category as CodeableConcept[] | undefined,
      subjectId,
      date: resource.date as string | undefined,
      description: resource.description as string | undefined,
      content: (content as Array<{ attachment: Record<string, unknown> }>).map((c) => ({ attachment: storedAttachment(env, c.attachment, baseUrl) })),
    }),
  };
}

/**
 * Mode `attachmentStorage=url`: inline bytes are stored apart and the attachment carries their
 * `url`, `size` and SHA-1 `hash` instead of `data` (an attachment without data is kept as sent).
 */
function storedAttachment(env: ResourceEnv, attachment: Record<string, unknown>, baseUrl: string): Record<string, unknown> {
  if (env.modes.attachmentStorage !== 'url' || typeof attachment.data !== 'string') return attachment;
  const bytes = Buffer.from(attachment.data, 'base64');
  const { data: _data, ...rest } = attachment;
  return { ...rest, url: `${baseUrl}/fhir/R5/Binary/${randomUUID()}`, size: String(bytes.length), hash: createHash('sha1').update(bytes).digest('base64') };
}

/**
 * The handlers of the R5 surface, or (`release` R4, mode `r4DocumentReference=writes`) of its R4
 * mirror: the same records, read and written through `/fhir/R4/DocumentReference`, bodies held to the R4 schema.
 */
export function documentReferenceHandlers(env: ResourceEnv, release: 'R4' | 'R5' = 'R5'): Record<string, Handler> {
  const { store, modes } = env;
  const DOCUMENT_PATH = `/fhir/${release}/DocumentReference`;
  const parseBody = (body: unknown, org: string, baseUrl: string) => parseDocumentBody(env, body, org, baseUrl, release);

  const read: Handler = (ctx) => documentResponse(env, 200, findDocument(env, ctx), {}, release);

  const create: Handler = (ctx) => {
    const org = ctx.caller.org;
    const { fields } = parseBody(ctx.body, org, ctx.baseUrl);
    if (env.faults.has('document-reference-create-drops-category')) delete fields.category;
    if (env.faults.has('document-reference-create-drops-attachment-data'))
      fields.content = fields.content.map(({ attachment: { data: _data, ...rest } }) => ({ attachment: rest }));
    // The subject as parseBody resolved it: undefined when references are not resolved (mode
    // unresolvedReference=unchecked) or resolved in another organization (fault write-reference-any-organization).
    const patient = resolvedRecord(env, store.patients, org, fields.subjectId);
    // Fault document-reference-merged-patient-accepted: a DocumentReference for a merged patient is created.
    if (patient && !(patient.mergedInto !== undefined && env.faults.has('document-reference-merged-patient-accepted'))) assertPatientAcceptsData(patient);
    const row = store.insert(store.documentReferences, { ...firstVersion(randomUUID(), org, ctx.now), ...fields });
    return documentResponse(env, modes.createStatus, row, { Location: `${ctx.baseUrl}${DOCUMENT_PATH}/${row.id}` }, release);
  };

  const update: Handler = (ctx) => {
    const row = findDocument(env, ctx);
    const { resource, fields } = parseBody(ctx.body, row.org, ctx.baseUrl);
    if (env.faults.has('document-reference-update-drops-category')) delete fields.category;
    if (env.faults.has('document-reference-update-drops-date-behind-narrative')) delete fields.date;
    requireSameId(resource, row.id);
    // Fault stale-if-match-accepted-document-reference: If-Match is ignored on DocumentReference updates only.
    if (!env.faults.has('stale-if-match-accepted-document-reference')) checkIfMatch(ctx, row, modes.staleIfMatchOtherTypes);
    const patient = resolvedRecord(env, store.patients, row.org, fields.subjectId);
    if (patient && modes.patientBlockOn === 'create-and-update') assertPatientAcceptsData(patient);
    // An update replaces every stored field with the body's.
    const updated: DocumentReferenceRow = { id: row.id, org: row.org, seq: row.seq, createdAt: row.createdAt, ...nextVersion(row, ctx.now), ...fields };
    store.documentReferences.put(updated);
    return documentResponse(env, modes.updateStatus, updated, {}, release);
  };

  const search: Handler = (ctx) => {
    const query = searchQueryUnderFaults(ctx.query, env.faults, 'document-reference');
    const patient = uuidParam(query, 'patient', 'Patient');
    const types = tokenParam(query, 'type');
    const categories = tokenParam(query, 'category');
    const dates = dateParams(query);
    // Fault tenancy-attribute-search-leak: a search naming no patient looks in every organization.
    const rows =
      patient === undefined && env.faults.has('tenancy-attribute-search-leak')
        ? store.documentReferences.values()
        : store.documentReferences.all(ctx.caller.org);
    const matches = rows.filter(
      (row) =>
        (patient === undefined || row.subjectId === patient) &&
        (types === undefined || conceptsMatch(row.type === undefined ? [] : [row.type], types)) &&
        (categories === undefined || conceptsMatch(row.category, categories)) &&
        // Fault document-reference-search-date-ignored-with-type: date is dropped when type is given too.
        (dateMatches(row.date, dates) || (types !== undefined && env.faults.has('document-reference-search-date-ignored-with-type'))),
    );
    return searchBundle(env.paging, {
      ctx,
      matches,
      toResource: (row) => toDocumentReference(row, release),
      allowOffset: true,
      fullUrl: (row) => `${ctx.baseUrl}${DOCUMENT_PATH}/${row.id}`,
    });
  };

  const prefix = release === 'R5' ? 'DocumentReference' : 'R4DocumentReference';
  return {
    [`${prefix}.read`]: read,
    [`${prefix}.create`]: create,
    [`${prefix}.update`]: update,
    [`${prefix}.search`]: search,
  };
}
