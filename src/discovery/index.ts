/**
 * Discovery: what the target publishes (`/openapi.json`, `/fhir/R4/metadata`,
 * optionally `/fhir/R5/metadata`) becomes the operation model the checks run on,
 * with the divergences between the OpenAPI document and the R4 CapabilityStatement.
 * The R5 DocumentReference interactions the spec states are filled in where the
 * target publishes none (src/discovery/spec.ts). The R5 CapabilityStatement is not
 * required by the spec: what is wrong with it is a note, not a problem.
 * Never throws for a bad document (problems say why); only for ERR_INTERRUPTED.
 */
import { createHash } from 'node:crypto';
import { describeError, isConformanceError } from '../errors.js';
import type { HttpClient } from '../http/client.js';
import type { HttpResponse } from '../http/types.js';
import { checkCapability, metadataPath, operationsFromCapability } from './capability.js';
import { divergences, mergeOperations } from './merge.js';
import type { ModelOperation, OperationModel, Release } from './model.js';
import { OPENAPI_DOCUMENT, loadOpenApi, operationsFromOpenApi } from './openapi.js';
import { withSpecStated } from './spec.js';

export type { ModelOperation, OperationModel } from './model.js';
export { operationMatcher } from './paths.js';

/** Published documents can be large (embedded schemas); read up to this many bytes. */
const MAX_DOCUMENT_BYTES = 20 * 1024 * 1024;

interface Fetched {
  json: unknown;
  sha256: string;
}

export interface DiscoverOptions {
  onProblem?: (p: string) => void;
  /**
   * A bearer token of the main client, asked for only when a document whose authentication the
   * spec leaves open (`/openapi.json`: "not stated"; `/fhir/R5/metadata`: not listed) answers 401
   * or 403 without one. `/fhir/R4/metadata` is "none": it is never fetched with a token.
   */
  bearer?: () => Promise<string | undefined>;
}

export async function discover(http: HttpClient, opts: DiscoverOptions = {}): Promise<OperationModel> {
  const model: OperationModel = { operations: [], divergences: [], problems: [], hashes: {} };
  const problem = (p: string) => {
    model.problems.push(p);
    opts.onProblem?.(p);
  };
  const notes: string[] = [];
  const note = (p: string) => notes.push(p);
  /** The open-authentication retry: once, with the main client's bearer, recorded. */
  const withBearer = opts.bearer
    ? async (path: string, first: HttpResponse): Promise<string | undefined> => {
        const token = await opts.bearer!();
        if (token === undefined) return undefined;
        (model.authenticated ??= []).push(path);
        note(`GET ${path} answered ${first.status} without a token (its authentication is not stated); read with the main client's bearer`);
        return token;
      }
    : undefined;

  let openapiOps: ModelOperation[] | undefined;
  const openapiDoc = await fetchDocument(http, OPENAPI_DOCUMENT, 'application/json', problem, { withBearer });
  if (openapiDoc) {
    model.hashes.openapi = openapiDoc.sha256;
    const api = await loadOpenApi(openapiDoc.json, problem);
    if (api) {
      model.openapi = api;
      openapiOps = operationsFromOpenApi(api, problem, { baseUrl: http.baseUrl }, note);
    }
  }

  const capability = async (release: Release, required: boolean): Promise<ModelOperation[] | undefined> => {
    const report = required ? problem : note;
    // The R4 CapabilityStatement's authentication is "none"; the R5 one is not in the spec's table.
    const doc = await fetchDocument(http, metadataPath(release), 'application/fhir+json', report, {
      optional404: !required,
      ...(release === 'R5' ? { withBearer } : {}),
    });
    if (!doc) {
      if (!required) note(`${metadataPath(release)}: not published`);
      return undefined;
    }
    model.hashes[release === 'R4' ? 'capabilityR4' : 'capabilityR5'] = doc.sha256;
    const cs = checkCapability(doc.json, release, report);
    if (!cs) return undefined;
    if (release === 'R4') model.capabilityR4 = cs;
    else model.capabilityR5 = cs;
    return operationsFromCapability(cs, release, note, http.baseUrl);
  };
  const r4Ops = await capability('R4', true);
  const r5Ops = await capability('R5', false);
  await readDefinitions(http, [...(r4Ops ?? []), ...(r5Ops ?? [])], note, withBearer);

  // A divergence is a finding only when both documents were read: one without any R4 operation the suite can read is not compared.
  const unread = !openapiOps
    ? `${OPENAPI_DOCUMENT} could not be read`
    : !r4Ops
      ? `${metadataPath('R4')} could not be read`
      : !openapiOps.some((o) => o.release === 'R4')
        ? `${OPENAPI_DOCUMENT} yields no R4 operation the suite can read`
        : !r4Ops.some((o) => o.release === 'R4')
          ? `${metadataPath('R4')} yields no R4 operation the suite can read`
          : undefined;
  if (unread) {
    model.notCompared = `${unread}: the OpenAPI document and the R4 CapabilityStatement are not compared`;
    note(model.notCompared);
  } else model.divergences = divergences(openapiOps!, r4Ops!);
  const completed = withSpecStated(mergeOperations(openapiOps ?? [], r4Ops ?? [], r5Ops ?? []));
  const merged = mergeOperations(completed.operations);
  model.operations = merged.filter((o) => !o.pathAssumed);
  model.pathless = merged.filter((o) => o.pathAssumed);
  model.specDivergences = completed.divergences;
  model.notes = [...notes, ...completed.notes];
  return model;
}

/**
 * The OperationDefinitions the CapabilityStatements name (`operation.definition`), read where the
 * target serves them: the canonical itself when it lies under the base URL, else
 * `/fhir/<release>/OperationDefinition/<its last segment>`. An `in` parameter of a primitive type
 * (FHIR sends those in the URL when the body is not a Parameters) is a query parameter of the
 * operation (`required` when `min` > 0). Not served: nothing is assumed.
 */
async function readDefinitions(http: HttpClient, ops: ModelOperation[], note: (p: string) => void, withBearer: FetchOptions['withBearer']): Promise<void> {
  const read = new Map<string, Promise<{ parameters: ModelOperation['searchParams']; where: string } | undefined>>();
  for (const op of ops) {
    const canonical = op.definition;
    if (op.interaction !== 'operation' || canonical === undefined) continue;
    if (!read.has(canonical)) read.set(canonical, readDefinition(http, canonical, op.release, note, withBearer));
    const definition = await read.get(canonical);
    if (!definition) continue;
    const names = new Set(op.searchParams.map((p) => p.name));
    op.searchParams.push(...definition.parameters.filter((p) => !names.has(p.name)));
  }
}

async function readDefinition(
  http: HttpClient,
  canonical: string,
  release: Release,
  note: (p: string) => void,
  withBearer: FetchOptions['withBearer'],
): Promise<{ parameters: ModelOperation['searchParams']; where: string } | undefined> {
  const base = http.baseUrl;
  const last =
    canonical
      .split(/[/#?|]/)
      .filter(Boolean)
      .pop() ?? '';
  const urls = [
    ...new Set([
      ...(canonical.startsWith(base) ? [`/${canonical.slice(base.length)}`] : []),
      ...(last ? [`/fhir/${release}/OperationDefinition/${encodeURIComponent(last)}`] : []),
    ]),
  ];
  for (const url of urls) {
    const doc = await fetchDocument(http, url, 'application/fhir+json', note, { optional404: true, withBearer });
    const od = doc?.json;
    if (!od || typeof od !== 'object' || (od as { resourceType?: unknown }).resourceType !== 'OperationDefinition') {
      if (doc) note(`GET ${url} (the OperationDefinition ${canonical}) is not an OperationDefinition`);
      continue;
    }
    const list = (od as { parameter?: unknown }).parameter;
    const parameters = (Array.isArray(list) ? list : [])
      .filter((p): p is { name: string; use: string; type: string; min?: unknown } => {
        const q = p as Record<string, unknown> | null;
        return q !== null && typeof q === 'object' && q.use === 'in' && typeof q.name === 'string' && typeof q.type === 'string' && /^[a-z]/.test(q.type);
      })
      .map((p) => ({ name: p.name, type: p.type, ...(typeof p.min === 'number' && p.min > 0 ? { required: true } : {}) }));
    note(`OperationDefinition ${canonical} read at ${url}${parameters.length ? `: query parameters ${parameters.map((p) => p.name).join(', ')}` : ''}`);
    return { parameters, where: url };
  }
  return undefined;
}

interface FetchOptions {
  optional404?: boolean;
  /** On 401/403: the bearer to send once more with (undefined: none to be had). */
  withBearer?: ((path: string, first: HttpResponse) => Promise<string | undefined>) | undefined;
}

/** GETs a JSON document; reports a problem and returns undefined when it cannot be used. */
async function fetchDocument(
  http: HttpClient,
  path: string,
  accept: string,
  problem: (p: string) => void,
  opts: FetchOptions = {},
): Promise<Fetched | undefined> {
  const { optional404 = false, withBearer } = opts;
  let res: HttpResponse;
  try {
    res = await http.request({ url: path, headers: { accept }, maxBodyBytes: MAX_DOCUMENT_BYTES });
    if ((res.status === 401 || res.status === 403) && withBearer) {
      const token = await withBearer(path, res);
      if (token !== undefined) res = await http.request({ url: path, headers: { accept }, token, maxBodyBytes: MAX_DOCUMENT_BYTES });
    }
  } catch (e) {
    if (isConformanceError(e) && e.code === 'ERR_INTERRUPTED') throw e;
    problem(`GET ${path} failed: ${describeError(e)}`);
    return undefined;
  }
  if (res.status === 404 && optional404) return undefined;
  if (res.status !== 200) {
    problem(`GET ${path} answered ${res.status}, expected 200`);
    return undefined;
  }
  if (res.bodyTruncated) {
    problem(`GET ${path}: document larger than ${MAX_DOCUMENT_BYTES / 1024 / 1024} MiB, not read`);
    return undefined;
  }
  if (res.json === undefined) {
    problem(`GET ${path}: body is not JSON (content-type ${res.headers['content-type'] ?? 'none'})`);
    return undefined;
  }
  return { json: res.json, sha256: createHash('sha256').update(res.text).digest('hex') };
}
