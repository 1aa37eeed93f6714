/**
 * The run timeline as a report stores it (format 2.1, `ReportDocument.timeline`): the engine's
 * RunTimeline made compact, since a run against short windows sends thousands of requests.
 * Requests are sorted by when they were sent and stored as columns: `sent` as the gap from the
 * previous send (the first from `startedAt`), `ms` their durations, `answers` the lane and status
 * of runs of consecutive requests as [lane, status, how many, ...], and `exchanges` the id of each
 * request whose exchange is in the report's evidence, by its index. Tokens keep their exchange id
 * only when it is evidence too. expandRequests() gives back [sent, ms, lane, status, id?] rows.
 */
import type { RunTimeline } from '../engine/types.js';

export interface ReportTimeline extends Omit<RunTimeline, 'requests' | 'tokens'> {
  requests: {
    sent: number[];
    ms: number[];
    /** [lane, status (0: no answer), run length, ...]. */
    answers: number[];
    /** Request index -> exchange id, for the requests whose exchange is in `exchanges`. */
    exchanges: Record<string, string>;
  };
  /** Tokens issued: [token request sent, lane, expiry] and the exchange id when it is evidence. */
  tokens: Array<[number, number, number] | [number, number, number, string]>;
}

export function compactTimeline(tl: RunTimeline, evidence: ReadonlySet<string>): ReportTimeline {
  const rows = [...tl.requests].sort((a, b) => a[0] - b[0]);
  const sent: number[] = [];
  const ms: number[] = [];
  const answers: number[] = [];
  const exchanges: Record<string, string> = {};
  let previous = 0;
  rows.forEach(([at, duration, lane, status, id], i) => {
    sent.push(at - previous);
    previous = at;
    ms.push(duration);
    const n = answers.length;
    if (n >= 3 && answers[n - 3] === lane && answers[n - 2] === status) answers[n - 1]!++;
    else answers.push(lane, status, 1);
    if (evidence.has(id)) exchanges[String(i)] = id;
  });
  return {
    version: tl.version,
    startedAt: tl.startedAt,
    requests: { sent, ms, answers, exchanges },
    retryAfter: tl.retryAfter.map((r) => [...r]),
    waits: tl.waits.map((w) => [...w]),
    tokens: tl.tokens.map(([at, lane, expiry, id]) => (evidence.has(id) ? [at, lane, expiry, id] : [at, lane, expiry])),
    lanes: tl.lanes.map((l) => ({ ...l })),
    tokenLifetimeSec: tl.tokenLifetimeSec,
    checks: Object.fromEntries(Object.entries(tl.checks).map(([id, span]) => [id, { ...span, lanes: [...span.lanes] }])),
  };
}

/** The stored requests as rows: [sent (ms from startedAt), duration ms, lane, status, exchange id or undefined]. */
export function expandRequests(tl: ReportTimeline): Array<[number, number, number, number, string | undefined]> {
  const { sent, ms, answers, exchanges } = tl.requests;
  const out: Array<[number, number, number, number, string | undefined]> = [];
  let at = 0;
  for (let r = 0; r + 2 < answers.length; r += 3) {
    for (let k = 0; k < answers[r + 2]! && out.length < sent.length; k++) {
      const i = out.length;
      at += sent[i]!;
      out.push([at, ms[i]!, answers[r]!, answers[r + 1]!, exchanges[String(i)]]);
    }
  }
  return out;
}
