/** Calls resource handlers directly with a fabricated HandlerContext (no HTTP). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OPERATIONS, R4_DOCUMENT_REFERENCE_OPERATIONS, R4_OBSERVATION_OPERATIONS } from '../../../src/service/api.js';
import { createResources, type Resources } from '../../../src/reference/resources/index.js';
import { DEFAULT_LIMITS, DEFAULT_MODES, FhirError, type HandlerResponse, type ReferenceLimits, type ReferenceModes } from '../../../src/reference/types.js';

export const FIXTURES_DIR = join(import.meta.dirname, '..', '..', '..', 'fixtures', 'reference');
export const IDS = JSON.parse(readFileSync(join(FIXTURES_DIR, 'fixture-ids.json'), 'utf8')) as Record<string, string>;
export const BASE = 'http://127.0.0.1:9999';
/** A fixed clock for the tests: 2025-03-10T12:00:00Z. */
export const NOW = Date.parse('2025-03-10T12:00:00.000Z');

export interface Call {
  org?: string;
  id?: string;
  query?: string | Record<string, string>;
  body?: unknown;
  rawBody?: Buffer;
  headers?: Record<string, string>;
  now?: number;
}

/** The outcome of a call: the response, or the FhirError as status + catalog code. */
export type Outcome = (HandlerResponse & { ok: true; body: any }) | { ok: false; status: number; code?: string; issueCode: string; message: string };

export interface Harness {
  resources: Resources;
  call(operationId: string, call?: Call): Promise<Outcome>;
  /** Calls and requires success; returns the body. */
  ok(operationId: string, call?: Call): Promise<any>;
}

export async function harness(opts: { modes?: Partial<ReferenceModes>; limits?: Partial<ReferenceLimits> } = {}): Promise<Harness> {
  const resources = await createResources({
    fixturesDir: FIXTURES_DIR,
    limits: { ...DEFAULT_LIMITS, ...opts.limits },
    modes: { ...DEFAULT_MODES, ...opts.modes },
    faults: new Set(),
    now: () => NOW,
  });
  async function call(operationId: string, c: Call = {}): Promise<Outcome> {
    const op = [...OPERATIONS, ...R4_DOCUMENT_REFERENCE_OPERATIONS, ...R4_OBSERVATION_OPERATIONS].find((o) => o.operationId === operationId);
    if (!op) throw new Error(`unknown operation ${operationId}`);
    const handler = resources.handlers[operationId]!;
    const query = typeof c.query === 'string' ? new URLSearchParams(c.query) : new URLSearchParams(c.query ?? {});
    try {
      const res = await handler({
        op,
        caller: { clientId: 'conformance-main', org: c.org ?? 'org-a', keyKind: 'sandbox', scopes: [] },
        params: c.id === undefined ? {} : { id: c.id },
        query,
        headers: { 'content-type': 'application/fhir+json', ...c.headers },
        body: c.body,
        rawBody: c.rawBody,
        baseUrl: BASE,
        now: c.now ?? NOW,
      });
      return { ...res, ok: true };
    } catch (e) {
      if (!(e instanceof FhirError)) throw e;
      return { ok: false, status: e.status, code: e.code, issueCode: e.issueCode, message: e.message };
    }
  }
  async function ok(operationId: string, c: Call = {}): Promise<any> {
    const res = await call(operationId, c);
    if (!res.ok) throw new Error(`${operationId} failed: ${res.status} ${res.code} ${res.message}`);
    return res.body;
  }
  return { resources, call, ok };
}

/** Follows `next` links from a first search (bounded), returning every page's body. */
export async function allPages(h: Harness, operationId: string, query: string, maxPages = 50): Promise<any[]> {
  const pages: any[] = [];
  let q: string | undefined = query;
  while (q !== undefined && pages.length < maxPages) {
    const body = await h.ok(operationId, { query: q });
    pages.push(body);
    const next = body.link.find((l: any) => l.relation === 'next');
    q = next ? new URL(next.url).search.slice(1) : undefined;
  }
  return pages;
}

export function expectError(res: Outcome): { status: number; code?: string; issueCode: string } {
  if (res.ok) throw new Error(`expected an error, got ${res.status}`);
  return { status: res.status, code: res.code, issueCode: res.issueCode };
}
