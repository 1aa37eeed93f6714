/**
 * Calling one published operation of the target: its URL (fixture id or a
 * resource the run created) and a valid body. Tokens for chosen scopes are
 * src/service/tokens.ts; creating a resource through a published create is
 * src/service/resources.ts.
 */
import { FIXTURE_KEYS } from '../../src/config/fixture-keys.js';
import type { CheckContext } from '../../src/engine/index.js';
import type { ModelOperation } from '../../src/discovery/model.js';
import type { HttpResponse } from '../../src/http/index.js';
import { createResource, FHIR_HEADERS, type Resource, writeBody } from '../../src/service/index.js';

/** `MedicationRequest.read` -> `medication-request-read`. */
export function kebab(text: string): string {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase();
}

/** The fixture key naming an existing record of a resource type (`MedicationRequest` -> `medicationRequest`). */
export function fixtureKeyOf(resource: string): string {
  return resource.charAt(0).toLowerCase() + resource.slice(1);
}

export const hasIdParam = (op: ModelOperation) => op.path.includes('{id}');
export const isWrite = (op: ModelOperation) => op.method !== 'GET';

/**
 * A read of one resource of a type no config can name a fixture of (the spec names none, e.g. an
 * Observation the target publishes besides the spec's types): it reads a resource this run creates
 * through the target's published create, so it writes.
 */
export const readsCreated = (op: ModelOperation) => !isWrite(op) && hasIdParam(op) && !FIXTURE_KEYS.includes(fixtureKeyOf(op.resource));

const WRITE_TARGETS = 'generated.write-targets';

/** One resource per type and release created by this run, shared by the checks that write to an existing id. */
async function writeTarget(ctx: CheckContext, op: ModelOperation): Promise<string> {
  const targets = (ctx.shared.get(WRITE_TARGETS) as Map<string, string> | undefined) ?? new Map<string, string>();
  ctx.shared.set(WRITE_TARGETS, targets);
  const key = `${op.release} ${op.resource}`;
  const known = targets.get(key);
  if (known) return known;
  const id = await createResource(ctx, op.resource, op.release);
  targets.set(key, id);
  return id;
}

/** The id an operation with `{id}` is called with: a fixture for reads, a resource of this run for writes (and reads of a type without fixtures). */
export async function targetIdFor(ctx: CheckContext, op: ModelOperation): Promise<string> {
  return isWrite(op) || readsCreated(op) ? writeTarget(ctx, op) : ctx.fixture(fixtureKeyOf(op.resource));
}

/** A search query the target must answer: the fixture patient when `patient` is a parameter, one entry a page. */
function searchQuery(ctx: CheckContext, op: ModelOperation): string {
  const names = new Set(op.searchParams.map((p) => p.name));
  const q = new URLSearchParams();
  if (names.has('patient')) q.set('patient', ctx.fixture('patient'));
  if (names.has('_count')) q.set('_count', '1');
  const s = q.toString();
  return s ? `?${s}` : '';
}

export interface PreparedCall {
  method: string;
  url: string;
  body?: unknown;
  headers: Record<string, string>;
}

/**
 * A valid call of the operation. Writes carry a valid resource (with the URL id on
 * update): hand-written where it carries meaning, else derived from the published
 * request schema or the HL7 FHIR schema (src/service/derived-body.ts); an operation (e.g. `$upload`, payload not shown) gets a
 * small text/plain body.
 */
export async function prepareCall(ctx: CheckContext, op: ModelOperation, body?: Resource): Promise<PreparedCall> {
  const id = hasIdParam(op) ? await targetIdFor(ctx, op) : undefined;
  const url = ctx.path(op.path, id === undefined ? {} : { id }) + (op.interaction === 'search-type' ? searchQuery(ctx, op) : '');
  if (!isWrite(op)) return { method: op.method, url, headers: FHIR_HEADERS };
  if (op.interaction === 'operation')
    return { method: op.method, url, body: 'fhir-conformance upload', headers: { ...FHIR_HEADERS, 'content-type': 'text/plain' } };
  const resource =
    body ??
    (await writeBody(ctx, {
      release: op.release,
      resource: op.resource,
      ...(op.requestSchema ? { requestSchema: op.requestSchema } : {}),
      ...(op.profile ? { profile: op.profile } : {}),
    }));
  return { method: op.method, url, body: op.interaction === 'update' && id !== undefined ? { ...resource, id } : resource, headers: FHIR_HEADERS };
}

/** Sends a prepared call with a token (or none). */
export function send(ctx: CheckContext, call: PreparedCall, token: string | undefined, opts: { retry?: 'spec' | 'none' } = {}): Promise<HttpResponse> {
  // A GET with the spec's retries may be answered with the exchange another check made for it (src/engine/exchange-cache.ts).
  return ctx.request({ ...call, ...(token ? { token, client: 'main', share: opts.retry === undefined } : {}), ...opts });
}
