/**
 * DocumentReference `$upload` (operationId DocumentReference.upload; spec: "an
 * operation named `$upload`", path and payload not shown). `modes.uploadContract`
 * picks the level and the payload:
 * - instance (`/fhir/R5/DocumentReference/{id}/$upload`): the upload becomes a new version
 *   of that DocumentReference, whose content is the uploaded attachment;
 * - type (`/fhir/R5/DocumentReference/$upload`): the upload creates a DocumentReference;
 * - raw: the request body is the document, its declared type the Content-Type;
 * - binary: a FHIR Binary (`contentType`, `data`);
 * - parameters: a FHIR Parameters, parameter `document` (valueAttachment with
 *   `contentType` and `data`) and, at type level, `subject` (valueReference Patient);
 * - document-reference (type level): a DocumentReference with the document in
 *   `content[0].attachment.data`;
 * - type-query-raw, type-query-binary: type level, the patient in the query
 *   (`?patient=<uuid>`), the body raw bytes or a Binary.
 * Too large: 413 HPB-00119. Empty, unsupported type, not base64, or content that does
 * not match the declared type: 400 HPB-00120. A JSON payload that is not JSON of the
 * expected shape: 400 HPB-00101; another media type: 415. Success: 200 with the
 * DocumentReference (a created one also with Location).
 */
import { randomUUID } from 'node:crypto';
import type { Handler, HandlerContext, ReferenceModes } from '../types.js';
import { FhirError } from '../types.js';
import { DOCUMENT_PATH, documentResponse, findDocument, parseDocumentBody } from './document-reference.js';
import { attachmentOf, badDocument, checkUploadedDocument, decodeBase64, documentBodyCap, mediaTypeOf } from './documents.js';
import type { ResourceEnv } from './env.js';
import { referencedRecord } from './references.js';
import { invalid, unprocessable } from './errors.js';
import { assertPatientAcceptsData } from './patient-rules.js';
import type { DocumentReferenceRow, RecordMeta } from './records.js';
import { type Body, referenceId, requireResource } from './validate.js';
import { checkIfMatch, firstVersion, header, nextVersion } from './versioning.js';

export type UploadLevel = 'instance' | 'type';
export type UploadPayload = 'raw' | 'binary' | 'parameters' | 'document-reference';

/** The query parameter naming the patient of a `type-query-*` contract. */
export const UPLOAD_PATIENT_PARAMETER = 'patient';

/** Level and payload of `modes.uploadContract`; `query`: the patient goes in the query (`?patient=<uuid>`), the body is only the document. */
export function uploadContractOf(modes: ReferenceModes): { level: UploadLevel; payload: UploadPayload; query: boolean } {
  const contract = modes.uploadContract;
  const cut = contract.indexOf('-');
  const rest = contract.slice(cut + 1);
  const query = rest.startsWith('query-');
  return { level: contract.slice(0, cut) as UploadLevel, payload: (query ? rest.slice('query-'.length) : rest) as UploadPayload, query };
}

/** `type-query-*`: the patient's id from the query (`patient=<uuid>`, or `Patient/<uuid>`). */
function patientFromQuery(ctx: HandlerContext): string {
  const value = ctx.query.get(UPLOAD_PATIENT_PARAMETER);
  if (!value) throw invalid(`query parameter "${UPLOAD_PATIENT_PARAMETER}" (the id of the Patient of the DocumentReference created) is required`);
  return value.replace(/^Patient\//, '');
}

/** Bytes of an `$upload` request the core reads before refusing it with 413 HPB-00119. */
export function uploadBodyCap(env: Pick<ResourceEnv, 'limits' | 'modes' | 'faults'>): number {
  return uploadContractOf(env.modes).payload === 'raw' ? env.limits.documentMaxBytes : documentBodyCap(env.limits, env.faults);
}

interface Incoming {
  data: Buffer;
  declared: string;
  title?: unknown;
  /** Type level: the patient of the DocumentReference to create. */
  subjectId?: string;
  /** Type level, document-reference payload: the other fields of the DocumentReference sent. */
  fields?: Omit<DocumentReferenceRow, keyof RecordMeta>;
}

function jsonPayload(ctx: HandlerContext): unknown {
  const type = mediaTypeOf(header(ctx, 'content-type'));
  if (type !== 'application/fhir+json' && type !== 'application/json') {
    throw new FhirError(415, 'not-supported', 'Unsupported media type: this $upload takes a FHIR resource as application/fhir+json');
  }
  try {
    return JSON.parse((ctx.rawBody ?? Buffer.alloc(0)).toString('utf8'));
  } catch {
    throw invalid('Validation error: the body is not valid JSON');
  }
}

/** The document of an attachment-like object (`contentType`, `data` base64). */
function documentOf(holder: Record<string, unknown>, what: string): { data: Buffer; declared: string } {
  if (typeof holder.data !== 'string') throw badDocument(`${what}.data (the document, base64) is missing`);
  const data = decodeBase64(holder.data);
  if (!data) throw badDocument(`${what}.data is not base64`);
  return { data, declared: mediaTypeOf(holder.contentType) };
}

function parameter(body: Body, name: string): Record<string, unknown> | undefined {
  const list = Array.isArray(body.parameter) ? body.parameter : [];
  return list.find((p): p is Record<string, unknown> => typeof p === 'object' && p !== null && (p as { name?: unknown }).name === name);
}

function incoming(env: ResourceEnv, ctx: HandlerContext, level: UploadLevel, payload: UploadPayload): Incoming {
  switch (payload) {
    case 'raw':
      return { data: ctx.rawBody ?? (Buffer.isBuffer(ctx.body) ? ctx.body : Buffer.alloc(0)), declared: mediaTypeOf(header(ctx, 'content-type')) };
    case 'binary': {
      const binary = requireResource(jsonPayload(ctx), 'Binary');
      return documentOf(binary, 'Binary');
    }
    case 'parameters': {
      const params = requireResource(jsonPayload(ctx), 'Parameters');
      const document = parameter(params, 'document');
      const attachment = document?.valueAttachment;
      if (typeof attachment !== 'object' || attachment === null) throw invalid('parameter "document" with a valueAttachment is required');
      const doc = documentOf(attachment as Record<string, unknown>, 'document.valueAttachment');
      if (level === 'instance') return { ...doc, title: (attachment as { title?: unknown }).title };
      const subject = parameter(params, 'subject');
      if (!subject) throw invalid('parameter "subject" (valueReference Patient/<uuid>) is required');
      return { ...doc, title: (attachment as { title?: unknown }).title, subjectId: referenceId(subject.valueReference, 'Patient', 'subject.valueReference') };
    }
    case 'document-reference': {
      const { resource, fields } = parseDocumentBody(env, jsonPayload(ctx), ctx.caller.org, ctx.baseUrl);
      const content = resource.content as Array<{ attachment: Record<string, unknown> }>;
      const attachment = content.find((c) => typeof c.attachment.data === 'string')?.attachment;
      if (!attachment) throw badDocument('content[].attachment.data (the document, base64) is missing');
      return { ...documentOf(attachment, 'content.attachment'), title: attachment.title, subjectId: fields.subjectId, fields };
    }
  }
}

export function uploadHandler(env: ResourceEnv): Handler {
  return (ctx) => {
    const { level, payload, query } = uploadContractOf(env.modes);
    // Fault tenancy-upload-foreign-instance: an instance-level $upload finds the DocumentReference in any organization.
    const foreign =
      level === 'instance' && env.faults.has('tenancy-upload-foreign-instance')
        ? env.store.documentReferences.values().find((r) => r.id === ctx.params.id)
        : undefined;
    const row = level === 'instance' ? (foreign ?? findDocument(env, ctx)) : undefined;
    if (row) checkIfMatch(ctx, row);
    const fromQuery = query ? patientFromQuery(ctx) : undefined;
    const doc = { ...incoming(env, ctx, level, payload), ...(fromQuery ? { subjectId: fromQuery } : {}) };
    checkUploadedDocument(env, doc.data, doc.declared);
    const content = [{ attachment: attachmentOf(doc.data, doc.declared, ctx.now, doc.title) }];
    if (row) {
      const updated = { ...row, ...nextVersion(row, ctx.now), content };
      env.store.documentReferences.put(updated);
      return documentResponse(env, 200, updated);
    }
    const org = ctx.caller.org;
    const subjectId = doc.subjectId!;
    // Fault tenancy-upload-foreign-patient: a type-level $upload finds the patient it names in any organization.
    const foreignPatient = env.faults.has('tenancy-upload-foreign-patient') ? env.store.patients.anyOrganization(subjectId) : undefined;
    const patient =
      foreignPatient ??
      referencedRecord(env, env.store.patients, org, 'Patient', subjectId, () =>
        unprocessable(env.modes.validationStatus, `subject Patient/${subjectId} does not exist`),
      );
    if (patient) assertPatientAcceptsData(patient);
    const fields = doc.fields ?? { status: 'current', subjectId, date: new Date(ctx.now).toISOString(), content };
    const created = env.store.insert(env.store.documentReferences, { ...firstVersion(randomUUID(), org, ctx.now), ...fields, content });
    return documentResponse(env, 200, created, { Location: `${ctx.baseUrl}${DOCUMENT_PATH}/${created.id}` });
  };
}
