/**
 * The run's shared exchanges: checks that need the same safe, idempotent request (a read
 * of a fixture record, a search page) share one exchange and its evidence instead of each
 * sending its own. A check opts in (`shareReads` on the check, or `share: true` on one
 * `ctx.fhir` request); only a GET without a body, sent with a broker token of a client role
 * and the spec's retry rules, is shared.
 *
 * Keyed by (method, url, role, scopes, headers). An entry is dropped when:
 * - any request of the run other than a GET/HEAD names the same resource type (a write,
 *   whatever its answer: it may have changed what the read returns), in either release;
 * - its answer is no ground for sharing: a 5xx, a 429, a network failure, a body cut at
 *   the cap, or an answer the HTTP layer marked as no ground for a verdict.
 * A check never receives an exchange it already holds: a check that repeats a request on
 * purpose (to compare two answers) sends it again.
 */
import type { HttpResponse } from '../http/types.js';

export interface ShareableRequest {
  method?: string;
  url: string;
  role: string;
  scopes: readonly string[];
  headers?: Record<string, string>;
  body?: unknown;
  form?: unknown;
}

export interface ExchangeCacheStats {
  /** Requests answered from the cache (one per check that received a shared exchange). */
  hits: number;
  /** Shareable requests that were sent (the first of each key, and those after an invalidation). */
  misses: number;
  /** Entries dropped because a write named their resource type. */
  invalidated: number;
}

/** The resource a FHIR URL names: its type, and its id for an instance path (`/fhir/R4/Encounter/123...`). */
export function resourceOf(url: string): { type?: string; id?: string; search: boolean } {
  let path = url;
  let search = false;
  try {
    const u = new URL(url, 'http://x/');
    path = u.pathname;
    search = u.search !== '';
  } catch {
    // keep as is
  }
  const m = /\/fhir\/R[45]\/([A-Z][A-Za-z]+)(?:\/([^/$?#][^/?#]*))?/.exec(path);
  return { ...(m?.[1] ? { type: m[1] } : {}), ...(m?.[2] ? { id: decodeURIComponent(m[2]) } : {}), search };
}

/** A path under the FHIR base (`/fhir/R4`, `/fhir/R5`); the token endpoint and discovery are not. */
function isFhirPath(url: string): boolean {
  let path = url;
  try {
    path = new URL(url, 'http://x/').pathname;
  } catch {
    // keep as is
  }
  return /\/fhir\/R[45](\/|$)/.test(path);
}

export function shareKey(req: ShareableRequest): string | undefined {
  const method = (req.method ?? 'GET').toUpperCase();
  if (method !== 'GET' || req.body !== undefined || req.form !== undefined) return undefined;
  const headers = Object.entries(req.headers ?? {})
    .map(([k, v]) => `${k.toLowerCase()}:${v}`)
    .sort()
    .join('\n');
  return [method, req.url, req.role, [...new Set(req.scopes)].sort().join(' '), headers].join('\u0000');
}

interface Entry {
  type?: string;
  /** The instance an instance read names (absent for a search or a type-level path). */
  id?: string;
  response: Promise<HttpResponse | undefined>;
}

export class ExchangeCache {
  readonly stats: ExchangeCacheStats = { hits: 0, misses: 0, invalidated: 0 };
  private readonly entries = new Map<string, Entry>();

  /**
   * The shared answer to `key` when one is cached and `holds` (the asking check's own
   * exchanges) does not already contain it; else sends with `send` and caches the answer
   * when `shareable` accepts it. `shared` tells whether the answer came from the cache.
   */
  async get(
    key: string,
    url: string,
    send: () => Promise<HttpResponse>,
    shareable: (res: HttpResponse) => boolean,
    holds: (exchangeId: string) => boolean,
  ): Promise<{ res: HttpResponse; shared: boolean }> {
    const entry = this.entries.get(key);
    if (entry) {
      const res = await entry.response;
      // Still the same entry (no write dropped it meanwhile), answered, and new to this check.
      if (res && this.entries.get(key) === entry && !holds(res.exchange.id)) {
        this.stats.hits++;
        return { res: copyOf(res), shared: true };
      }
    }
    this.stats.misses++;
    const sending = send();
    const { type, id, search } = resourceOf(url);
    const mine: Entry = {
      ...(type ? { type } : {}),
      ...(id && !search ? { id } : {}),
      response: sending.then(
        (r) => (shareable(r) ? r : undefined),
        () => undefined,
      ),
    };
    this.entries.set(key, mine);
    mine.response.then(
      (r) => {
        if (!r && this.entries.get(key) === mine) this.entries.delete(key);
      },
      () => undefined,
    );
    const res = await sending;
    return { res: ownOf(res), shared: false };
  }

  /**
   * A request of the run left. A write (any method but GET/HEAD, whatever its answer) to a
   * FHIR path drops what it may have changed, in both releases: a type-level write (a
   * create, a type-level operation) every search and type-level read of its type; an
   * instance-level write (update, instance operation) those and every read of that instance.
   * A write whose path names no resource type drops everything.
   */
  sent(method: string, url: string): void {
    const m = method.toUpperCase();
    if (m === 'GET' || m === 'HEAD' || !isFhirPath(url)) return;
    const { type, id } = resourceOf(url);
    for (const [key, entry] of this.entries) {
      const hit = type === undefined || entry.type === undefined || (entry.type === type && (entry.id === undefined || entry.id === id));
      if (hit) {
        this.entries.delete(key);
        this.stats.invalidated++;
      }
    }
  }
}

/**
 * The answer to the check that sent it: its parsed body as the client parsed it from the text (the
 * copies handed out later are parsed from the text, which nothing edits: HttpClient's `json` is
 * always its `text` parsed), its headers its own (the later copies copy the cached answer's).
 */
function ownOf(res: HttpResponse): HttpResponse {
  return { ...res, headers: { ...res.headers } };
}

/** Each check gets its own copy of the parsed body: a check that edits it (an update body) changes no other's. */
function copyOf(res: HttpResponse): HttpResponse {
  const copy: HttpResponse = { ...res, headers: { ...res.headers }, json: undefined };
  if (res.json === undefined) return copy;
  // Made when the check first reads it: many read only the status and the headers.
  let json: unknown;
  let made = false;
  Object.defineProperty(copy, 'json', {
    enumerable: true,
    configurable: true,
    get() {
      if (!made) {
        json = copyJson(res);
        made = true;
      }
      return json;
    },
    set(value: unknown) {
      json = value;
      made = true;
    },
  });
  return copy;
}

/**
 * A copy of the shared answer's parsed body (a check may change what it holds). A shared answer's
 * text is its whole body (a body cut at the cap is not shared), and parsing it again takes a
 * fraction of what structuredClone takes; should the text not give the body, the body is cloned.
 */
function copyJson(res: HttpResponse): unknown {
  try {
    return JSON.parse(res.text) as unknown;
  } catch {
    return structuredClone(res.json);
  }
}
