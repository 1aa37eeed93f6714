/**
 * How a report stores evidence (format 2.x), so that a run's report is kept
 * small without losing what explains a verdict:
 *
 * - every exchange once, in `exchanges` by id; checks cite them by id (the
 *   same exchange is often the evidence of several checks);
 * - every body of at least BODY_REF_MIN characters once, in `bodies` by the
 *   sha256 of its text; the exchange holds `bodyRef` instead of `body` (the
 *   CapabilityStatement, the OpenAPI document, a page of a search are the
 *   evidence of many checks);
 * - bodies in the evidence of failed or errored checks are kept as recorded
 *   (the HTTP layer's cap, EVIDENCE_BODY_CAP); the others are cut at
 *   PASSING_BODY_CAP characters (`bodyTruncated: true`);
 * - an exchange's `curl` is left out when it is exactly the command
 *   curlCommand() rebuilds from the stored request (curlOf() rebuilds it), and
 *   a check's `curl` is replaced by `curlExchange` when it is the curl of one
 *   of its exchanges (checkCurl() resolves it).
 */
import { createHash } from 'node:crypto';
import type { CheckResult, Exchange } from '../engine/types.js';
import { EVIDENCE_BODY_CAP, curlCommand } from '../http/evidence.js';
import type { ReportCheck, ReportDocument, ReportExchange } from './types.js';

/** Bodies of at least this many characters go to the run's body table. */
export const BODY_REF_MIN = 512;
/** Bodies seen only in the evidence of checks that did not fail or error are cut at this many characters. */
export const PASSING_BODY_CAP = 1024;
/** report.html cuts those bodies at this many characters (report.json keeps PASSING_BODY_CAP): room for the timeline. */
export const PAGE_PASSING_BODY_CAP = 256;
/** Bodies in the evidence of failed or errored checks: as recorded by the HTTP layer. */
export const FAILING_BODY_CAP = EVIDENCE_BODY_CAP;

type Part = { body?: string; bodyRef?: string; bodyTruncated?: boolean };

/** The key of a body in `bodies`: sha256 (hex) of its UTF-8 text. */
export function bodyKey(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * Exchanges of the checks stored once by id; each check's evidence becomes the
 * list of its exchange ids (an exchange attached twice is listed once). Two different exchanges under one id (never
 * expected: ids are unique in a run) are kept apart as `<id>~2`, ... and the
 * check's findings follow the renamed id.
 */
export function storeExchanges<C extends Pick<CheckResult, 'evidence' | 'findings'>>(
  checks: C[],
): { checks: Array<Omit<C, 'evidence'> & { evidence: string[] }>; exchanges: Record<string, ReportExchange> } {
  const exchanges: Record<string, ReportExchange> = {};
  // Each stored exchange and, once another exchange claims its id, its text. The same exchange
  // object in the evidence of several checks is known without serializing it.
  const stored = new Map<string, { x: Exchange; json?: string }>();
  const same = (entry: { x: Exchange; json?: string }, x: Exchange) => entry.x === x || (entry.json ??= JSON.stringify(entry.x)) === JSON.stringify(x);
  const out = checks.map((c) => {
    const renamed = new Map<string, string>();
    const ids = c.evidence.map((x) => {
      let id = x.id;
      for (let n = 2; stored.has(id) && !same(stored.get(id)!, x); n++) id = `${x.id}~${n}`;
      if (!stored.has(id)) {
        stored.set(id, { x });
        exchanges[id] = id === x.id ? x : { ...x, id };
      }
      if (id !== x.id) renamed.set(x.id, id);
      return id;
    });
    const unique = [...new Set(ids)];
    const findings =
      renamed.size === 0 ? c.findings : c.findings.map((f) => (f.exchange && renamed.has(f.exchange) ? { ...f, exchange: renamed.get(f.exchange)! } : f));
    return { ...c, findings, evidence: unique };
  });
  return { checks: out, exchanges };
}

/**
 * Brings a document to the stored form described above: caps bodies, moves
 * long ones to a new body table keyed by the hash of their text, leaves out
 * the curls a reader rebuilds. Idempotent; run it again after anything that
 * rewrites strings (secret scrubbing, PHI masking) so that keys match texts.
 */
/** Headers of the connection, not of the service's answer (RFC 9110 7.6.1): left out of every report. */
const HOP_BY_HOP = ['connection', 'keep-alive'];
/**
 * report.html leaves these out of the exchanges only passing checks cite (report.json keeps them): the
 * same on every request (the suite's user-agent and accept-encoding) or of no weight to a pass (date).
 * A curl rebuilt without them still reproduces the request.
 */
export const PAGE_PASSING_OMITTED_REQUEST_HEADERS = ['user-agent', 'accept-encoding'];
export const PAGE_PASSING_OMITTED_RESPONSE_HEADERS = ['date'];

const without = (headers: Record<string, string> | undefined, names: readonly string[]): Record<string, string> | undefined => {
  if (!headers || !names.some((n) => n in headers)) return headers;
  const out = { ...headers };
  for (const n of names) delete out[n];
  return out;
};

export function internBodies(doc: ReportDocument, passingCap = PASSING_BODY_CAP, opts: { slimPassing?: boolean } = {}): ReportDocument {
  const failing = new Set(doc.checks.filter((c) => c.outcome === 'fail' || c.outcome === 'error').flatMap((c) => c.evidence));
  const bodies: Record<string, string> = {};
  const exchanges: Record<string, ReportExchange> = {};
  /** Curls as they were before this pass, to recognize a check's curl. */
  const curls = new Map<string, { before: string; after: string }>();
  const store = <P extends Part>(part: P, cap: number): { part: P; cut: boolean } => {
    const { body: inline, bodyRef, bodyTruncated, ...rest } = part;
    let body = inline ?? (bodyRef === undefined ? undefined : doc.bodies[bodyRef]);
    if (body === undefined) return { part: { ...rest, ...(bodyTruncated ? { bodyTruncated } : {}) } as P, cut: false };
    const cut = body.length > cap;
    if (cut) body = cutAt(body, cap);
    const truncated = cut || bodyTruncated ? { bodyTruncated: true } : {};
    if (body.length < BODY_REF_MIN) return { part: { ...rest, body, ...truncated } as unknown as P, cut };
    const key = bodyKey(body);
    bodies[key] ??= body;
    return { part: { ...rest, bodyRef: key, ...truncated } as unknown as P, cut };
  };
  for (const [id, x] of Object.entries(doc.exchanges)) {
    const cap = failing.has(id) ? FAILING_BODY_CAP : passingCap;
    const before = x.curl ?? curlOf(x, doc.bodies);
    const { curl: _curl, ...rest } = x;
    const slim = opts.slimPassing === true && !failing.has(id);
    const request = store(x.request, cap);
    if (slim) request.part = { ...request.part, headers: without(request.part.headers, PAGE_PASSING_OMITTED_REQUEST_HEADERS) ?? {} };
    let response = x.response ? store(x.response, cap).part : undefined;
    if (response?.headers) {
      const headers = without(without(response.headers, HOP_BY_HOP), slim ? PAGE_PASSING_OMITTED_RESPONSE_HEADERS : []);
      if (headers !== response.headers) response = { ...response, headers: headers ?? {} };
    }
    const out: ReportExchange = { ...rest, request: request.part, ...(response ? { response } : {}) };
    const rebuilt = curlOf(out, bodies);
    // A cut request body cannot be sent as recorded: its curl is the rebuilt one, which says so. The same
    // for a request whose constant headers the page leaves out.
    const after = request.cut || (slim && before !== rebuilt && before === curlOf(x, doc.bodies)) ? rebuilt : before;
    if (after !== rebuilt) out.curl = after;
    exchanges[id] = out;
    curls.set(id, { before, after });
  }
  const checks = doc.checks.map((c): ReportCheck => {
    const text = c.curl ?? (c.curlExchange === undefined ? undefined : curls.get(c.curlExchange)?.after);
    if (text === undefined) return c;
    const match = c.evidence.find((id) => curls.get(id)?.before === text || curls.get(id)?.after === text);
    // In the place of the key it replaces, so the key order stays canonical.
    const [key, value] = match === undefined ? ['curl', text] : ['curlExchange', match];
    return Object.fromEntries(Object.entries(c).map(([k, v]) => (k === 'curl' || k === 'curlExchange' ? [key, value] : [k, v]))) as unknown as ReportCheck;
  });
  return { ...doc, checks, exchanges, bodies };
}

/** The document with every body inline again (`bodies` empty): for rewriting every string of it. */
export function inlineBodies(doc: ReportDocument): ReportDocument {
  const inline = <P extends Part>(part: P): P => {
    if (part.bodyRef === undefined) return part;
    const { bodyRef, ...rest } = part;
    const body = doc.bodies[bodyRef];
    return (body === undefined ? rest : { ...rest, body }) as P;
  };
  const exchanges: Record<string, ReportExchange> = {};
  for (const [id, x] of Object.entries(doc.exchanges)) {
    exchanges[id] = { ...x, request: inline(x.request), ...(x.response ? { response: inline(x.response) } : {}) };
  }
  return { ...doc, exchanges, bodies: {} };
}

/** The text of a request or response body, inline or from the body table. */
export function bodyOf(part: { body?: string; bodyRef?: string }, bodies: Record<string, string>): string | undefined {
  return part.body ?? (part.bodyRef === undefined ? undefined : bodies[part.bodyRef]);
}

/** The curl command of an exchange: as stored, or rebuilt from its request. */
export function curlOf(x: Pick<ReportExchange, 'request' | 'curl'>, bodies: Record<string, string>): string {
  if (x.curl !== undefined) return x.curl;
  const body = bodyOf(x.request, bodies);
  return curlCommand({ ...x.request, body: body === undefined ? undefined : { body, truncated: !!x.request.bodyTruncated } });
}

/** The curl command most relevant to a check's verdict, if any. */
export function checkCurl(doc: Pick<ReportDocument, 'exchanges' | 'bodies'>, check: Pick<ReportCheck, 'curl' | 'curlExchange'>): string | undefined {
  if (check.curl !== undefined) return check.curl;
  const x = check.curlExchange === undefined ? undefined : doc.exchanges[check.curlExchange];
  return x && curlOf(x, doc.bodies);
}

/** A check's evidence as plain exchanges: bodies resolved, curls rebuilt (for programs reading a report). */
export function evidenceOf(doc: ReportDocument, check: Pick<ReportCheck, 'evidence'>): Exchange[] {
  return check.evidence.flatMap((id) => {
    const x = doc.exchanges[id];
    if (!x) return [];
    const resolve = <P extends Part>(part: P): Omit<P, 'bodyRef'> => {
      const { bodyRef: _ref, ...rest } = part;
      const body = bodyOf(part, doc.bodies);
      return body === undefined ? rest : { ...rest, body };
    };
    const { curl: _curl, ...rest } = x;
    return [{ ...rest, request: resolve(x.request), ...(x.response ? { response: resolve(x.response) } : {}), curl: curlOf(x, doc.bodies) } as Exchange];
  });
}

/** Cuts at `max` UTF-16 units without splitting a surrogate pair. */
function cutAt(s: string, max: number): string {
  const code = s.charCodeAt(max - 1);
  return s.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}
