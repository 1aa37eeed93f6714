/**
 * The `$upload` contract (spec: "an operation named `$upload`"; "the `$upload` path and
 * payload: not shown"). Settled once per run, in this order:
 * 1. the config (`documentReference.upload`);
 * 2. what the target publishes: an OpenAPI path (with its request media types), the R5
 *    CapabilityStatement operation's documentation path, and its `definition` when it
 *    resolves on the target to an OperationDefinition (`instance`/`type`, `in` parameters);
 * 3. the conventional FHIR forms: instance-level `.../DocumentReference/{id}/$upload` and
 *    type-level `.../DocumentReference/$upload`, with raw bytes, a Binary, a Parameters and
 *    (type level) a DocumentReference.
 * The first form that accepts a small valid document is the contract. `pinned` says that
 * path and payload were declared or published, so a refusal of every form is the target's.
 */
import type { UploadLevel, UploadPayload } from '../config/index.js';
import type { ModelOperation } from '../discovery/model.js';
import type { CheckContext } from '../engine/index.js';
import type { HttpResponse } from '../http/index.js';
import { base64Of, CATEGORY, documentBody, inlineAttachment, type Json } from './bodies.js';
import { type DocumentType, smallDocument } from './documents.js';
import { catalogCodeOf, isObject } from './errors.js';
import { createDocument, createdIdOf, DOCUMENT_REFERENCE, type WriteOptions } from './resources.js';

/** The scopes of DocumentReference reads and searches, and of writes. */
const RS = DOCUMENT_REFERENCE.read;
const CRU = DOCUMENT_REFERENCE.write;

export interface UploadForm {
  path: string;
  level: UploadLevel;
  payload: UploadPayload;
  /** payload parameters: the parameter carrying the document, and how (valueAttachment or a Binary resource). */
  parameterName: string;
  parameterType: 'Attachment' | 'Binary';
  /** payload parameters at type level: the parameter naming the patient, if any. */
  subjectName?: string;
  /** Query template sent with each upload (`patient={patient}`; placeholders: see `QUERY_PLACEHOLDERS`). */
  query?: string;
}

export type ContractSource = 'config' | 'published' | 'conventional';

export interface Attempt {
  form: string;
  contentType: string;
  status: number;
  code?: string;
  exchange: string;
}

export interface UploadContract {
  form: UploadForm;
  /** The media type of the document the form accepted. */
  contentType: DocumentType;
  source: ContractSource;
}

export interface UploadResolution {
  contract?: UploadContract;
  /** Path and payload were declared or published: no accepting form is then the target's failure. */
  pinned: boolean;
  /** With `pinned` and no accepting form: the declared or published form, which the other checks still use. */
  pinnedForm?: UploadContract;
  /** Where path, level and payload came from, one line each. */
  basis: string[];
  attempts: Attempt[];
  /** The exchange that established the contract, or the last attempt. */
  evidence?: HttpResponse;
}

const TYPE_PATH = '/fhir/R5/DocumentReference/$upload';
const INSTANCE_PATH = '/fhir/R5/DocumentReference/{id}/$upload';
const PAYLOADS: Record<UploadLevel, UploadPayload[]> = {
  instance: ['raw', 'binary', 'parameters'],
  type: ['parameters', 'document-reference', 'raw', 'binary'],
};
const ALL_TYPES: DocumentType[] = ['application/pdf', 'image/png', 'image/jpeg'];

export function describeForm(f: UploadForm): string {
  return `POST ${f.path}${f.query ? `?${f.query}` : ''} (${f.level} level, ${f.payload}${f.payload === 'parameters' ? ` "${f.parameterName}"` : ''})`;
}

/**
 * Where an upload in the form names the patient its new DocumentReference belongs to (type level):
 * the query's `{patient}`, the Parameters subject, the DocumentReference's subject; undefined when
 * it names none (instance level: the DocumentReference uploaded to has its patient).
 */
export function patientChannel(f: UploadForm): string | undefined {
  if (f.level !== 'type') return undefined;
  if (f.query?.includes('{patient}')) return `the query (${f.query})`;
  if (f.payload === 'parameters' && f.subjectName) return `the Parameters "${f.subjectName}" valueReference`;
  if (f.payload === 'document-reference') return "the DocumentReference's subject";
  return undefined;
}

/**
 * The placeholders a query template may hold, and the parameter names they fill: `{patient}` the
 * fixture patient's id (`patient`, `subject`, `patient-id`, ...), `{type}` and `{category}` the
 * `system|code` tokens of the type and category of the DocumentReference the suite writes.
 */
const QUERY_PLACEHOLDERS: ReadonlyArray<[string, RegExp]> = [
  ['patient', /patient|subject/i],
  ['type', /^(document-?)?type$/i],
  ['category', /category/i],
];
const placeholderFor = (name: string) => QUERY_PLACEHOLDERS.find(([, names]) => names.test(name))?.[0];

/**
 * A published query template in the suite's terms: a placeholder in the value of a parameter
 * naming the patient, the type or the category becomes `{patient}`, `{type}` or `{category}`; a
 * parameter with any other placeholder is left out (`dropped`: the suite has no value for it);
 * literal values are kept.
 */
export function queryTemplate(query: string): { template?: string; dropped: string[] } {
  const kept: string[] = [];
  const dropped: string[] = [];
  for (const pair of query.split('&').filter(Boolean)) {
    const cut = pair.indexOf('=');
    const name = cut < 0 ? pair : pair.slice(0, cut);
    const value = cut < 0 ? '' : pair.slice(cut + 1);
    const placeholder = placeholderFor(name);
    if (!/\{[^}]*\}/.test(value)) kept.push(pair);
    else if (placeholder) kept.push(`${name}=${value.replace(/\{[^}]*\}/, `{${placeholder}}`)}`);
    else dropped.push(name);
  }
  return { ...(kept.length ? { template: kept.join('&') } : {}), dropped };
}

/** A coding as a FHIR token (`system|code`). */
function token(concept: unknown): string {
  const coding = isObject(concept) && Array.isArray(concept.coding) && isObject(concept.coding[0]) ? concept.coding[0] : {};
  return `${String(coding.system ?? '')}|${String(coding.code ?? '')}`;
}

/** The query of a form with its placeholders filled (`QUERY_PLACEHOLDERS`). */
function expandQuery(ctx: CheckContext, template: string, patient?: string): string {
  const values: Record<string, () => string> = {
    patient: () => patient ?? ctx.fixture('patient'),
    type: () => token(documentBody(ctx).type),
    category: () => token(CATEGORY),
  };
  return template.replace(/\{(patient|type|category)\}/g, (_m, name: string) => encodeURIComponent(values[name]!()));
}

const levelOf = (path: string): UploadLevel => (path.includes('{id}') ? 'instance' : 'type');

function form(path: string, payload: UploadPayload, extra: Partial<UploadForm> = {}): UploadForm {
  const level = levelOf(path);
  return { path, level, payload, parameterName: 'document', parameterType: 'Attachment', ...(level === 'type' ? { subjectName: 'subject' } : {}), ...extra };
}

/** The `$upload` operation the target publishes with a path, else the one it only names. */
function publishedUpload(ctx: CheckContext): { located?: ModelOperation; named?: ModelOperation } {
  const isUpload = (o: ModelOperation) =>
    o.release === 'R5' && o.resource === 'DocumentReference' && o.interaction === 'operation' && o.operationName === 'upload';
  return { located: ctx.model.operations.find(isUpload), named: ctx.model.pathless?.find(isUpload) };
}

export interface Definition {
  levels: UploadLevel[];
  payloads?: UploadPayload[];
  extra: Partial<UploadForm>;
  where: string;
  /** `in` parameters of primitive types (FHIR: sent in the query when the body is the document), with their minimum. */
  queryParameters: Array<{ name: string; min: number }>;
}

/** Reads an OperationDefinition published as the operation's `definition`, when the target serves it. */
async function fetchDefinition(ctx: CheckContext, canonical: string): Promise<Definition | undefined> {
  const base = ctx.config.baseUrl;
  const last = canonical.split(/[/#?]/).filter(Boolean).pop() ?? '';
  const urls = [
    ...new Set([
      ...(canonical.startsWith(`${base}/`) ? [canonical.slice(base.length)] : []),
      ...(last ? [`/fhir/R5/OperationDefinition/${encodeURIComponent(last)}`] : []),
    ]),
  ];
  for (const url of urls) {
    let res = await ctx.request({ url, headers: { accept: 'application/fhir+json' } });
    if (res.status === 401 || res.status === 403) res = await ctx.fhir({ scopes: RS, url });
    if (res.status === 200 && isObject(res.json) && res.json.resourceType === 'OperationDefinition') return definitionOf(res.json, url);
  }
  return undefined;
}

function definitionOf(od: Json, where: string): Definition {
  const levels: UploadLevel[] = [...(od.instance === true ? ['instance' as const] : []), ...(od.type === true ? ['type' as const] : [])];
  const allIns = (Array.isArray(od.parameter) ? od.parameter : []).filter((p): p is Json => isObject(p) && p.use === 'in');
  // FHIR primitive types start with a lower-case letter (string, id, code, uri, ...).
  const primitive = (p: Json) => typeof p.type === 'string' && /^[a-z]/.test(p.type);
  const ins = allIns.filter((p) => !primitive(p));
  const queryParameters = allIns
    .filter((p) => primitive(p) && typeof p.name === 'string')
    .map((p) => ({ name: p.name as string, min: typeof p.min === 'number' ? p.min : 0 }));
  const doc = ins.find((p) => p.type === 'Binary' || p.type === 'Attachment' || p.type === 'DocumentReference');
  const name = typeof doc?.name === 'string' ? doc.name : 'document';
  const subject = ins.find((p) => p !== doc && p.type === 'Reference' && typeof p.name === 'string');
  let payloads: UploadPayload[] | undefined;
  const extra: Partial<UploadForm> = {};
  if (doc && ins.length === 1 && doc.type === 'Binary') payloads = ['raw', 'binary'];
  else if (doc && ins.length === 1 && doc.type === 'DocumentReference') payloads = ['document-reference'];
  else if (doc && doc.type !== 'DocumentReference') {
    payloads = ['parameters'];
    Object.assign(extra, {
      parameterName: name,
      parameterType: doc.type === 'Binary' ? 'Binary' : 'Attachment',
      subjectName: typeof subject?.name === 'string' ? subject.name : undefined,
    });
  }
  return { levels, payloads, extra, where, queryParameters };
}

/** Payloads the OpenAPI request media types allow: raw for a non-JSON type, the FHIR ones for FHIR JSON. */
function payloadsOfMediaTypes(types: string[] | undefined, level: UploadLevel): UploadPayload[] | undefined {
  if (!types?.length) return undefined;
  const json = types.some((t) => /^application\/(fhir\+)?json/.test(t));
  const raw = types.some((t) => !/^application\/(fhir\+)?json/.test(t));
  const out = [...(raw ? ['raw' as const] : []), ...(json ? PAYLOADS[level].filter((p) => p !== 'raw') : [])];
  return out.length ? out : undefined;
}

/** Words of a documentation text that suggest a payload; they only order the attempts. */
const PAYLOAD_WORDS: Record<UploadPayload, RegExp> = {
  raw: /\b(raw|bytes|octet-stream|Content-Type)\b/i,
  binary: /\bBinary\b/,
  parameters: /\bParameters\b/,
  'document-reference': /\bDocumentReference with\b/,
};

function byDocumentation(payloads: UploadPayload[], documentation: string | undefined): UploadPayload[] {
  if (!documentation) return payloads;
  const named = payloads.filter((p) => PAYLOAD_WORDS[p].test(documentation));
  return [...named, ...payloads.filter((p) => !named.includes(p))];
}

interface Plan {
  forms: UploadForm[];
  types: DocumentType[];
  pinned: boolean;
  source: ContractSource;
  basis: string[];
}

async function plan(ctx: CheckContext): Promise<Plan> {
  const declared = ctx.config.documentReference.upload;
  const declaredType = declared?.contentType;
  if (declared) {
    const payloads = declared.payload ? [declared.payload] : PAYLOADS[levelOf(declared.path)];
    const pinned = declared.payload !== undefined;
    const [path, query] = splitQuery(declared.path);
    return {
      forms: payloads.map((p) => form(path, p, { ...(declared.parameterName ? { parameterName: declared.parameterName } : {}), ...(query ? { query } : {}) })),
      types: declaredType ? [declaredType] : pinned ? ALL_TYPES : ['application/pdf'],
      pinned,
      source: 'config',
      basis: [`config: path ${declared.path}${declared.payload ? `, payload ${declared.payload}` : ' (payload not declared: each tried)'}`],
    };
  }
  const { located, named } = publishedUpload(ctx);
  const basis: string[] = [];
  const op = located ?? named;
  const definition = op?.definition ? await fetchDefinition(ctx, op.definition) : undefined;
  if (op?.definition)
    basis.push(
      definition ? `OperationDefinition ${op.definition} read at ${definition.where}` : `OperationDefinition ${op.definition} not served by the target`,
    );
  let paths: string[];
  if (located) {
    paths = [located.path];
    basis.push(`published path ${located.method} ${located.path} (${located.sources.join(', ')})`);
  } else {
    const levels: UploadLevel[] = definition?.levels.length ? definition.levels : ['instance', 'type'];
    paths = levels.map((l) => (l === 'instance' ? INSTANCE_PATH : TYPE_PATH));
    basis.push(named ? 'the R5 CapabilityStatement names $upload without a path: conventional paths tried' : 'no $upload published: conventional paths tried');
  }
  const query = publishedQuery(op, definition, basis);
  const forms: UploadForm[] = [];
  let payloadKnown = true;
  for (const path of paths) {
    const level = levelOf(path);
    const fromDefinition = definition?.payloads?.filter((p) => PAYLOADS[level].includes(p));
    const fromMedia = payloadsOfMediaTypes(located?.requestMediaTypes, level);
    const payloads = fromDefinition?.length ? fromDefinition : (fromMedia ?? byDocumentation(PAYLOADS[level], op?.documentation));
    if (!fromDefinition?.length && !fromMedia) payloadKnown = false;
    // The query goes with a body that is only the document (a Parameters carries its own parameters).
    const withQuery = (p: UploadPayload) => (query && p !== 'parameters' ? { query } : {});
    forms.push(...payloads.map((p) => form(path, p, { ...(definition?.payloads?.includes(p) ? definition.extra : {}), ...withQuery(p) })));
  }
  if (definition?.payloads) basis.push(`payload from the OperationDefinition: ${definition.payloads.join(' or ')}`);
  else if (located?.requestMediaTypes) basis.push(`payload from the OpenAPI request media types: ${located.requestMediaTypes.join(', ')}`);
  else basis.push('payload not published: each conventional payload tried');
  const pinned = located !== undefined && payloadKnown;
  return {
    forms,
    types: declaredType ? [declaredType] : pinned ? ALL_TYPES : ['application/pdf'],
    pinned,
    source: located || definition ? 'published' : 'conventional',
    basis,
  };
}

/** A declared path template split at its query: `[path, query]`. */
function splitQuery(template: string): [string, string | undefined] {
  const cut = template.indexOf('?');
  return cut < 0 ? [template, undefined] : [template.slice(0, cut), template.slice(cut + 1) || undefined];
}

/**
 * The query the target publishes for `$upload`: the OperationDefinition's primitive `in`
 * parameters naming the patient (FHIR: query parameters when the body is the document), else the
 * query the CapabilityStatement's documentation writes after the path, else the OpenAPI
 * operation's required query parameters naming the patient. What it cannot fill is noted in `basis`.
 */
export function publishedQuery(op: ModelOperation | undefined, definition: Definition | undefined, basis: string[]): string | undefined {
  const fromDefinition = definition?.queryParameters ?? [];
  if (fromDefinition.length) {
    // The patient always (a type-level upload needs it); the type and category when required.
    const sent = fromDefinition.filter((p) => placeholderFor(p.name) === 'patient' || (placeholderFor(p.name) && p.min > 0));
    const unknown = fromDefinition.filter((p) => !placeholderFor(p.name) && p.min > 0);
    if (unknown.length) basis.push(`OperationDefinition query parameters the suite has no value for: ${unknown.map((p) => p.name).join(', ')}`);
    if (sent.length) {
      const query = sent.map((p) => `${p.name}={${placeholderFor(p.name)}}`).join('&');
      basis.push(`query from the OperationDefinition's in parameters: ${query}`);
      return query;
    }
  }
  if (op?.query) {
    const { template, dropped } = queryTemplate(op.query);
    if (dropped.length) basis.push(`query parameters of the documentation the suite has no value for: ${dropped.join(', ')}`);
    if (template) {
      basis.push(`query from the CapabilityStatement's documentation: ${template}`);
      return template;
    }
  }
  const required = (op?.searchParams ?? []).filter((p) => p.required && placeholderFor(p.name));
  if (required.some((p) => placeholderFor(p.name) === 'patient')) {
    const query = required.map((p) => `${p.name}={${placeholderFor(p.name)}}`).join('&');
    basis.push(`query from the OpenAPI operation's required parameters: ${query}`);
    return query;
  }
  return undefined;
}

/**
 * How an upload is sent: as a write (WriteOptions), and with `token` a bearer token of the check's
 * making in place of one the run's broker grants (a forged token: auth.forged-tokens-on-upload);
 * with `patient` the patient a type-level upload names (its query, its Parameters subject, its
 * DocumentReference's subject) in place of the fixture patient (tenancy.foreign-patient-in-upload).
 */
export type SendOptions = WriteOptions & { token?: string; patient?: string };

/** Sends one upload in the form; a DocumentReference it creates (type level) goes to the ledger. */
export async function sendUpload(
  ctx: CheckContext,
  f: UploadForm,
  id: string | undefined,
  document: Buffer,
  contentType: string,
  opts: SendOptions = {},
): Promise<HttpResponse> {
  const { token, patient, ...write } = opts;
  const path = f.level === 'instance' ? ctx.path(f.path, { id: id! }) : f.path;
  const url = f.query ? `${path}?${expandQuery(ctx, f.query, patient)}` : path;
  const patientReference = { reference: `Patient/${patient ?? ctx.fixture('patient')}` };
  // Base64 only where the payload carries it (kept per document: the size checks send one of 32 MiB).
  const data = f.payload === 'raw' ? '' : base64Of(document);
  let body: unknown;
  let headers: Record<string, string> = {};
  switch (f.payload) {
    case 'raw':
      body = document;
      headers = { 'content-type': contentType };
      break;
    case 'binary':
      body = { resourceType: 'Binary', contentType, data };
      break;
    case 'parameters':
      body = {
        resourceType: 'Parameters',
        parameter: [
          f.parameterType === 'Binary'
            ? { name: f.parameterName, resource: { resourceType: 'Binary', contentType, data } }
            : { name: f.parameterName, valueAttachment: { contentType, data, title: 'fhir-conformance document' } },
          ...(f.level === 'type' && f.subjectName ? [{ name: f.subjectName, valueReference: patientReference }] : []),
        ],
      };
      break;
    case 'document-reference':
      body = documentBody(ctx, {
        content: [{ attachment: { ...inlineAttachment(contentType as never, document), contentType } }],
        ...(patient !== undefined ? { subject: patientReference } : {}),
      });
      break;
  }
  const res =
    token === undefined
      ? await ctx.fhir({ scopes: CRU, method: 'POST', url, body, headers, ...write })
      : await ctx.request({ method: 'POST', url, body, token, ...write, headers: { accept: 'application/fhir+json', ...headers, ...(write.headers ?? {}) } });
  const created = f.level === 'type' && res.status >= 200 && res.status < 300 ? createdIdOf(res) : undefined;
  if (created) ctx.created('DocumentReference', created);
  return res;
}

/** The DocumentReference an instance-level upload goes to: one this run creates. */
export async function uploadTarget(ctx: CheckContext, f: UploadForm): Promise<string | undefined> {
  return f.level === 'instance' ? ((await createDocument(ctx)).document.id as string) : undefined;
}

const RESOLUTION = 'document-reference.upload-resolution';

/** The contract, settled on first use and kept for the run. */
export async function resolveUpload(ctx: CheckContext): Promise<UploadResolution> {
  const known = ctx.shared.get(RESOLUTION) as UploadResolution | undefined;
  if (known) {
    if (known.evidence) ctx.attach(known.evidence.exchange);
    return known;
  }
  const p = await plan(ctx);
  const attempts: Attempt[] = [];
  const absent = new Set<string>();
  let target: string | undefined;
  let resolution: UploadResolution = { pinned: p.pinned, basis: p.basis, attempts };
  search: for (const type of p.types) {
    for (const f of p.forms) {
      if (absent.has(f.path)) continue;
      if (f.level === 'instance') target ??= (await createDocument(ctx)).document.id as string;
      const res = await sendUpload(ctx, f, target, smallDocument(type), type);
      const code = catalogCodeOf(res);
      attempts.push({ form: describeForm(f), contentType: type, status: res.status, ...(code ? { code } : {}), exchange: res.exchange.id });
      resolution = { ...resolution, evidence: res };
      if (res.status >= 200 && res.status < 300) {
        resolution = { ...resolution, contract: { form: f, contentType: type, source: p.source } };
        break search;
      }
      // No operation at this path (not a missing DocumentReference): its other payloads need not be tried.
      if (!p.pinned && ((res.status === 404 && code !== 'HPB-00118' && code !== 'HPB-00102') || res.status === 405 || res.status === 501)) absent.add(f.path);
    }
  }
  if (!resolution.contract && p.pinned) resolution = { ...resolution, pinnedForm: { form: p.forms[0]!, contentType: p.types[0]!, source: p.source } };
  ctx.shared.set(RESOLUTION, resolution);
  return resolution;
}

/**
 * The contract: the form that accepted a valid document, else the declared or published
 * form (a refusal of valid documents is failed by upload-valid-document; the other rules
 * are still checked in that form), else a skip naming why there is none (the observation
 * check has the attempts).
 */
export async function requireContract(ctx: CheckContext): Promise<UploadContract> {
  const r = await resolveUpload(ctx);
  const contract = r.contract ?? r.pinnedForm;
  if (contract) return contract;
  return ctx.skip(
    'the $upload path and payload are not shown, not declared (documentReference.upload) and not published, and no conventional form accepted a valid document (see document-reference.upload-contract)',
  );
}
