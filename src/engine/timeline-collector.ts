/**
 * The run timeline as a run subscriber: every exchange of the run's HTTP client (when it was
 * sent, how long it took, on which lane, its status, its id), the answers that asked to wait
 * (Retry-After), the suite's waits, the tokens issued (sent, expiry) and, for each timing check,
 * the stretch of the run its evidence covers. Times are whole ms from the run's start. Nothing
 * secret: no token, no URL, no header, no body (the report's evidence holds the exchanges).
 */
import type { Subscriber } from './events.js';
import type { Exchange, RunTimeline, TimelineLane, TimelineWaitKind } from './types.js';
import type { CheckTag } from './check.js';

export interface TimelineInput {
  /** The run's start, epoch ms (t = 0). */
  startedAt: number;
  /** Client roles' keys with their declared ceilings, in config order. */
  keys: ReadonlyArray<{ role: string; ceiling: number }>;
  windowSec: number;
  issuancePerWindow: number;
  tokenLifetimeSec: number;
  /** The request went to the token endpoint (its own lane, limited per source address). */
  isTokenEndpoint(url: string): boolean;
  /** How long an answer asks to wait, ms (the service's Retry-After); undefined when it does not say. */
  retryAfterMs(headers: Record<string, string>): number | undefined;
  now?: () => number;
}

export interface TimelineCollector {
  subscriber: Subscriber;
  /** The timeline so far. */
  timeline(): RunTimeline;
}

/** Tags of the checks whose verdict rests on timing: the timeline keeps their stretch. */
const TIMING_TAGS: readonly CheckTag[] = ['waits', 'exhausts-key-limit', 'exhausts-issuance-limit', 'expiry-probe'];
/** Requests kept (the newest); about 30 bytes each in the report. */
export const TIMELINE_MAX_REQUESTS = 20_000;
export const TOKEN_ENDPOINT_LANE = 'token endpoint';
export const NO_KEY_LANE = 'no key';

export function waitKind(reason: string): TimelineWaitKind {
  if (/retry-after|^429/i.test(reason)) return 'retry-after';
  if (/backoff/i.test(reason)) return 'backoff';
  if (/pacing|rate-limit headers|issuance limit/i.test(reason)) return 'pacing';
  return 'check';
}

export function timelineCollector(input: TimelineInput): TimelineCollector {
  const now = input.now ?? Date.now;
  const lanes: TimelineLane[] = [
    // One lane per role ("extra" may name several clients: the first one's ceiling).
    ...input.keys
      .filter((k, i) => input.keys.findIndex((o) => o.role === k.role) === i)
      .map((k): TimelineLane => ({ name: k.role, kind: 'key', ceiling: k.ceiling, windowSec: input.windowSec })),
    { name: TOKEN_ENDPOINT_LANE, kind: 'token-endpoint', ceiling: input.issuancePerWindow, windowSec: input.windowSec },
    { name: NO_KEY_LANE, kind: 'none', windowSec: input.windowSec },
  ];
  const laneIndex = new Map(lanes.map((l, i) => [l.name, i]));
  const tokenLane = laneIndex.get(TOKEN_ENDPOINT_LANE)!;
  const noKeyLane = laneIndex.get(NO_KEY_LANE)!;
  /** A role the config did not list (never expected): a lane of its own. */
  const keyLane = (role: string): number => {
    let i = laneIndex.get(role);
    if (i === undefined) {
      i = lanes.push({ name: role, kind: 'key', windowSec: input.windowSec }) - 1;
      laneIndex.set(role, i);
    }
    return i;
  };
  const at = (epochMs: number): number => Math.round(epochMs - input.startedAt);
  const tl: RunTimeline = {
    version: 1,
    startedAt: new Date(input.startedAt).toISOString(),
    requests: [],
    retryAfter: [],
    waits: [],
    tokens: [],
    lanes,
    tokenLifetimeSec: input.tokenLifetimeSec,
    checks: {},
  };
  const laneOfExchange = new Map<string, number>();
  const laneOf = (ex: Exchange): number =>
    laneOfExchange.get(ex.id) ?? (input.isTokenEndpoint(ex.request.url) ? tokenLane : ex.client ? keyLane(ex.client) : noKeyLane);

  return {
    subscriber: (e) => {
      switch (e.type) {
        case 'exchange': {
          const ex = e.exchange;
          const lane = laneOf(ex);
          laneOfExchange.set(ex.id, lane);
          const sent = at(Date.parse(ex.startedAt));
          const status = ex.response?.status ?? 0;
          tl.requests.push([sent, Math.round(ex.durationMs), lane, status, ex.id]);
          if (tl.requests.length > TIMELINE_MAX_REQUESTS) tl.requests.splice(0, tl.requests.length - TIMELINE_MAX_REQUESTS);
          if (ex.response && (status === 429 || status === 503)) {
            const ms = input.retryAfterMs(ex.response.headers);
            if (ms !== undefined) tl.retryAfter.push([at(e.facts.answeredAt), lane, Math.round(ms), ex.id]);
          }
          return;
        }
        case 'wait': {
          const kind = waitKind(e.reason);
          const lane = e.client ? keyLane(e.client) : /token endpoint|issuance/i.test(e.reason) ? tokenLane : -1;
          tl.waits.push([at(now()), lane, Math.round(e.ms), kind]);
          return;
        }
        case 'token-issued':
          tl.tokens.push([at(e.sentAt), keyLane(e.client), at(e.expiresAt), e.exchange]);
          return;
        case 'check-finished': {
          const { check, result } = e;
          if (result.outcome === 'skip') return;
          const timing =
            check.tags.some((t) => TIMING_TAGS.includes(t)) || result.evidence.some((x) => x.response?.status === 429 || x.response?.status === 503);
          if (!timing) return;
          const evidence = result.evidence.filter((x) => !Number.isNaN(Date.parse(x.startedAt)));
          const from = evidence.length ? Math.min(...evidence.map((x) => Date.parse(x.startedAt))) : Date.parse(result.startedAt);
          const to = evidence.length
            ? Math.max(...evidence.map((x) => Date.parse(x.startedAt) + x.durationMs))
            : Date.parse(result.startedAt) + result.durationMs;
          if (Number.isNaN(from) || Number.isNaN(to)) return;
          const used = [...new Set(evidence.map(laneOf))].sort((a, b) => a - b);
          tl.checks[check.id] = { from: at(from), to: Math.max(at(from), at(to)), lanes: used };
          return;
        }
        default:
          return;
      }
    },
    timeline: () => tl,
  };
}
