/**
 * How faults edit the reference's answers: the helpers the fault files
 * (faults/<area>.ts) share. Not a fault file itself (index.ts skips it).
 */
import type { OperationDef } from '../../service/api.js';
import { CATALOG_SYSTEM } from '../../service/catalog.js';
import { catalogError, operationOutcome } from '../outcome.js';
import type { FaultRequest, FaultResponse } from './types.js';

export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `MedicationRequest.read` -> `medication-request-read`. */
export const kebab = (s: string) =>
  s
    .replace(/([a-z])([A-Z])/g, '$1-$2')
    .replace(/\./g, '-')
    .toLowerCase();
/** An interaction as requirement ids name it (`search-type` -> `search`). */
export const SHORT: Record<OperationDef['interaction'], string> = {
  read: 'read',
  update: 'update',
  'search-type': 'search',
  create: 'create',
  operation: 'upload',
};

/** GET of exactly this path. */
export const path = (p: string) => (req: FaultRequest) => req.method === 'GET' && req.path === p;
/** A call of this operation. */
export const opIs = (id: string) => (req: FaultRequest) => req.op?.operationId === id;

/** Rewrites the body of the successful responses to the matching requests when it is a JSON object. */
export function onPath(match: (req: FaultRequest) => boolean, edit: (body: Json) => Json) {
  return (res: FaultResponse, req: FaultRequest): FaultResponse =>
    match(req) && res.status < 300 && isObject(res.body) ? { ...res, body: edit(structuredClone(res.body)) } : res;
}

/** The first issue's catalog code of an OperationOutcome body. */
export function outcomeCode(body: unknown): string | undefined {
  if (!isObject(body) || !Array.isArray(body.issue) || !isObject(body.issue[0])) return undefined;
  const coding = (body.issue[0].details as { coding?: Array<{ code?: string }> } | undefined)?.coding;
  return coding?.[0]?.code;
}

/** The same error body with another catalog code (details and diagnostics prefix). */
export function recoded(body: unknown, code: string): unknown {
  const copy = structuredClone(body) as { issue: Array<{ diagnostics?: string; details?: { coding?: Array<{ code?: string }> } }> };
  const issue = copy.issue[0]!;
  const old = issue.details?.coding?.[0]?.code;
  if (issue.details?.coding?.[0]) issue.details.coding[0].code = code;
  if (old && issue.diagnostics?.startsWith(`${old}: `)) issue.diagnostics = `${code}: ${issue.diagnostics.slice(old.length + 2)}`;
  return copy;
}

/** An error response in the reference's format. */
export function errorResponse(res: FaultResponse, status: number, code: string): FaultResponse {
  return { ...res, status, body: operationOutcome(catalogError(code, { status })) };
}

/** The same response turned into another catalog error (the catalog's status unless given). */
export function asCatalogError(res: FaultResponse, code: string, status?: number): FaultResponse {
  const err = catalogError(code, status === undefined ? {} : { status });
  return { ...res, status: err.status, body: operationOutcome(err) };
}

/** Applies `fn` to every MedicationRequest in a body (the resource itself or a Bundle's entries). */
export function eachMedicationRequest(res: FaultResponse, fn: (mr: Json) => void): FaultResponse {
  const body = res.body;
  if (!isObject(body)) return res;
  if (body.resourceType === 'MedicationRequest') fn(body);
  if (body.resourceType === 'Bundle' && Array.isArray(body.entry)) {
    for (const e of body.entry) if (isObject(e) && isObject(e.resource) && e.resource.resourceType === 'MedicationRequest') fn(e.resource);
  }
  return res;
}

/** A 2xx response of this MedicationRequest interaction. */
export function successOf(res: FaultResponse, req: FaultRequest, interaction: string): boolean {
  return res.status >= 200 && res.status < 300 && req.op?.resource === 'MedicationRequest' && req.op.interaction === interaction;
}

/** issue[0] of an OperationOutcome, as the reference writes it. */
export interface Issue {
  severity?: string;
  code?: string;
  diagnostics?: string;
  details?: { coding?: Array<{ system?: string; code?: string }> };
}

/** issue[0] of an OperationOutcome response. */
export function issue0(res: FaultResponse): Issue | undefined {
  const body = res.body as { resourceType?: string; issue?: Issue[] } | undefined;
  return body?.resourceType === 'OperationOutcome' && Array.isArray(body.issue) ? body.issue[0] : undefined;
}

/** The catalog code of an issue (its first details.coding). */
export function issueCode(issue: Issue | undefined): string | undefined {
  return issue?.details?.coding?.[0]?.code;
}

/** The response's first issue carries this catalog code. */
export function hasCode(res: FaultResponse, code: string): boolean {
  return (res.body as { issue?: Issue[] } | undefined)?.issue?.[0]?.details?.coding?.some((c) => c.code === code) ?? false;
}

/** The same error with another catalog code (diagnostics prefix and details.coding). */
export function recode(res: FaultResponse, from: string, to: string): FaultResponse {
  const outcome = res.body as { issue: Issue[] };
  const [issue, ...rest] = outcome.issue;
  const diagnostics = String(issue!.diagnostics).replace(`${from}: `, `${to}: `);
  return { ...res, body: { ...outcome, issue: [{ ...issue, diagnostics, details: { coding: [{ system: CATALOG_SYSTEM, code: to }] } }, ...rest] } };
}

/** A call of a FHIR operation (not discovery, not the token endpoint). */
export const isFhirCall = (req: FaultRequest) => req.op !== undefined;
