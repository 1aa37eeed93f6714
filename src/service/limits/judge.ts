/**
 * Verdicts of the rate-limit episodes from what the client measured, as pure
 * functions of timestamps (client clock, ms) and statuses. No function here
 * sends a request or reads a clock, so each is tested with made-up timelines.
 *
 * What a client can prove about a sliding window of `limit` per `windowMs`:
 * - a request's arrival at the target lies between its send and its answer;
 * - requests whose send-to-answer spans all fit in an interval shorter than a
 *   window arrived inside one window: at most `limit` of them can be served
 *   (too many served = a limit that is too loose, or a window that is not sliding);
 * - a 429 is due only when `limit` requests of the key are in the window: a 429
 *   when fewer can have been there is early (a limit that is too tight).
 * A burst that proves neither (it was too slow to fill a window) is inconclusive,
 * with the figures that say how close it came.
 */

/** One request of a key: when it left, when its answer came (client clock, ms), and its status. */
export interface Timed {
  sentAt: number;
  receivedAt: number;
  /** HTTP status; absent when no answer came. */
  status?: number;
}

export const served = (t: Timed) => t.status !== undefined && t.status < 400;

/** A run log's requests minus one entry per hit (the hit's own exchange, sent within its span). */
export function othersThan(log: readonly Timed[], hits: ReadonlyArray<Pick<Timed, 'sentAt' | 'receivedAt'>>): Timed[] {
  const rest = [...log];
  for (const h of hits) {
    const i = rest.findIndex((r) => r.sentAt >= h.sentAt - 5 && r.sentAt <= h.receivedAt);
    if (i >= 0) rest.splice(i, 1);
  }
  return rest;
}
export const refusedBy = (t: Timed) => t.status !== undefined && t.status >= 400;

/** What a burst measured, for messages, findings and observations. */
export interface BurstFigures {
  sent: number;
  served: number;
  /** First send to last answer, ms. */
  spanMs: number;
  /** The most served requests whose send-to-answer spans fit within less than one window. */
  maxServedInWindow: number;
  /** 1-based position (in send order) of the first refusal, when one came. */
  refusedAt?: number;
  refusedStatus?: number;
  /** Requests of the key (this burst's and earlier ones) that can have been in the window when the first refusal arrived. */
  possiblyInWindow?: number;
  /** Served requests certainly in the window, answered before the refusal was sent. */
  certainlyInWindow?: number;
  /** Concurrency of the burst's sends. */
  concurrency?: number;
}

export type Verdict<F = BurstFigures> =
  | { verdict: 'pass'; figures: F; note?: string }
  | { verdict: 'fail'; rule: string; requirement: string; message: string; expected: unknown; actual: unknown; figures: F; at?: number }
  | { verdict: 'inconclusive'; message: string; figures: F }
  | { verdict: 'error'; message: string; figures: F };

const s = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;

/**
 * How far a conforming sliding window may count a request beyond one window (or drop
 * it before): an implementation may count in steps (per-second buckets), so every bound
 * on the per-key window gives it this much, at most a second.
 */
export function windowSlackMs(windowMs: number): number {
  return Math.min(1000, windowMs / 20);
}

/**
 * How much later than a window after its arrival a conforming target may still count a request:
 * a window kept to the whole second, rounded up (reference mode `keyWindowAccounting: coarse`),
 * holds it up to a second longer whatever the window's length, so a judgement that "nothing can
 * have left" allows the whole second even where `windowSlackMs` is smaller (short windows).
 */
export function leaveLateMs(windowMs: number): number {
  return Math.max(1000, windowSlackMs(windowMs));
}

/** When a request of the key may leave the window: from a window after its send (less the slack) to a window and `leaveLateMs` after its answer. */
export function leaveBand(r: Timed, windowMs: number): readonly [number, number] {
  return [r.sentAt + windowMs - windowSlackMs(windowMs), r.receivedAt + windowMs + leaveLateMs(windowMs)];
}

/** How long after a 429 a deliberate early retry goes, at most (Retry rule 1's checks: per key, the token endpoint). */
export const EARLY_RETRY_DELAY_MS = 1500;
/** How clearly before the announced wait's end a served early retry must be answered to be judged (a loaded machine). */
const EARLY_RETRY_MARGIN_MS = 300;

/**
 * When a deliberate early retry goes after a 429 that announced `retryAfterMs`: EARLY_RETRY_DELAY_MS, so a moved reset
 * shows in whole seconds, but within the first half of the announced wait less a second (a wait rounded up to whole
 * seconds may end up to a second before it says); at once when Retry-After is 1.
 */
export function earlyRetryDelayMs(retryAfterMs: number): number {
  return Math.min(EARLY_RETRY_DELAY_MS, Math.max(0, retryAfterMs - 1000) / 2);
}

/**
 * Whether a retry answered at `answeredAt` came clearly before a wait announced at `refusedAt` could have ended: the
 * announced wait less a second (whole seconds, rounded up) and a margin. Only such a retry served is a fail.
 */
export function clearlyBeforeWait(refusedAt: number, retryAfterMs: number, answeredAt: number): boolean {
  return answeredAt <= refusedAt + retryAfterMs - 1000 - EARLY_RETRY_MARGIN_MS;
}

/** `+x ms` relative to `t0`. */
const at = (t: number, t0: number) => `+${Math.round(t - t0)} ms`;

/**
 * The largest set of served requests that certainly arrived within one window:
 * for each start, the served requests sent no earlier and answered less than a
 * window after it. Returns the count and the span that proves it.
 */
export function maxServedWithinWindow(requests: readonly Timed[], windowMs: number): { count: number; from: number; to: number } {
  const ok = requests.filter(served).sort((a, b) => a.sentAt - b.sentAt);
  let best = { count: 0, from: 0, to: 0 };
  for (const start of ok) {
    const inside = ok.filter((r) => r.sentAt >= start.sentAt && r.receivedAt < start.sentAt + windowMs);
    if (inside.length > best.count) best = { count: inside.length, from: start.sentAt, to: Math.max(...inside.map((r) => r.receivedAt)) };
  }
  return best;
}

/** Requests (other than `x`) that can have arrived before `x` and within the window ending at its arrival. */
export function possiblyBefore(x: Timed, others: readonly Timed[], windowMs: number): number {
  return others.filter((r) => r !== x && r.sentAt < x.receivedAt && r.receivedAt > x.sentAt - windowMs).length;
}

/** Served requests that certainly arrived before `x` (answered before it was sent) and within the window ending at its arrival. */
export function certainlyBefore(x: Timed, others: readonly Timed[], windowMs: number): number {
  return others.filter((r) => r !== x && served(r) && r.receivedAt <= x.sentAt && r.sentAt > x.receivedAt - windowMs).length;
}

/** The refusals that may have been the first to arrive: none other was answered before they were sent. */
export function firstRefusalCandidates(requests: readonly Timed[]): Timed[] {
  const refused = requests.filter(refusedBy);
  if (refused.length === 0) return [];
  const firstAnswer = Math.min(...refused.map((r) => r.receivedAt));
  return refused.filter((r) => r.sentAt <= firstAnswer);
}

export interface KeyBurstInput {
  /** The key's ceiling per window. */
  limit: number;
  windowMs: number;
  /** The episode's requests of the key, in send order (a burst ends at its first refusal). */
  requests: readonly Timed[];
  /**
   * The key's other requests this run made before the episode; undefined when they
   * are not known (then a 429 cannot be judged early).
   */
  earlier?: readonly Timed[];
  /**
   * Requests of the organization's other keys around the episode. The organization
   * ceiling is not shown: when any can have been in the window, a 429 is not judged early.
   */
  orgOthers?: readonly Timed[];
  concurrency?: number;
}

/**
 * A burst of one key's requests, judged against its ceiling:
 * - fail `late`: more than `limit` served within less than one window (no 429 where one was due);
 * - fail `early`: a 429 when fewer than `limit` requests of the key can have been in its window
 *   (judged only when the key's earlier traffic is known and no other key of the organization
 *   can have counted against a shared ceiling);
 * - fail `status`: the key's limit certainly used up and the refusal is not a 429 (e.g. 503);
 * - error: a refusal other than 429 before the limit was reached (the target in trouble);
 * - inconclusive: no refusal and no proof that one was due (the burst did not fill a window);
 * - pass: a 429 at the ceiling.
 */
export function judgeKeyBurst(input: KeyBurstInput): Verdict {
  const { limit, windowMs, requests } = input;
  const slack = windowSlackMs(windowMs);
  const earlier = input.earlier ?? [];
  const all = [...earlier, ...requests];
  const t0 = requests[0]?.sentAt ?? 0;
  // Served within less than a window less the slack: inside one window however the target counts.
  const best = maxServedWithinWindow(requests, windowMs - slack);
  const firstIndex = requests.findIndex(refusedBy);
  const figures: BurstFigures = {
    sent: requests.length,
    served: requests.filter(served).length,
    spanMs: requests.length ? Math.max(...requests.map((r) => r.receivedAt)) - t0 : 0,
    maxServedInWindow: best.count,
    ...(input.concurrency !== undefined ? { concurrency: input.concurrency } : {}),
  };
  if (best.count > limit) {
    return {
      verdict: 'fail',
      rule: 'late',
      requirement: 'rate-limit.excess-429',
      figures,
      message:
        `${best.count} requests of one key were served within ${s(best.to - best.from)} (sent from ${at(best.from, t0)}, last answered at ${at(best.to, t0)}), ` +
        `less than one ${s(windowMs)} window: its limit is ${limit} per window`,
      expected: `at most ${limit} served within one ${s(windowMs)} window`,
      actual: { servedWithinMs: best.to - best.from, served: best.count, windowMs },
    };
  }
  if (firstIndex < 0) {
    return {
      verdict: 'inconclusive',
      figures,
      message:
        `${figures.sent} requests took ${s(figures.spanMs)} (window ${s(windowMs)}); at most ${best.count} of them fell within one window ` +
        `(limit ${limit}), so no 429 was due: inconclusive`,
    };
  }
  const candidates = firstRefusalCandidates(requests);
  const first = requests[firstIndex]!;
  figures.refusedAt = firstIndex + 1;
  figures.refusedStatus = first.status;
  // Possibly counted: within a window before the refusal and as late as a target may still count
  // a request (leaveLateMs: a window kept to the whole second holds one up to a second longer).
  figures.possiblyInWindow = Math.max(...candidates.map((c) => possiblyBefore(c, all, windowMs + leaveLateMs(windowMs))));
  figures.certainlyInWindow = Math.min(...candidates.map((c) => certainlyBefore(c, all, windowMs - slack)));

  if (candidates.some((c) => c.status !== 429)) {
    const wrong = candidates.find((c) => c.status !== 429)!;
    const used = certainlyBefore(wrong, all, windowMs - slack);
    if (used >= limit) {
      return {
        verdict: 'fail',
        rule: 'status',
        requirement: 'rate-limit.excess-429',
        figures,
        at: requests.indexOf(wrong),
        message:
          `request ${requests.indexOf(wrong) + 1} of the key, sent at ${at(wrong.sentAt, t0)} after ${used} served within the last ${s(windowMs)} ` +
          `(its limit is ${limit}), was answered ${wrong.status}: the excess must give 429 HPB-00105`,
        expected: { status: 429, code: 'HPB-00105' },
        actual: { status: wrong.status, servedInWindow: used },
      };
    }
    return {
      verdict: 'error',
      figures,
      message:
        `request ${requests.indexOf(wrong) + 1} of the key got HTTP ${wrong.status ?? 'no answer'} after ${used} served in the window ` +
        `(limit ${limit}): not a rate-limit answer; the target could not be driven to its limit`,
    };
  }

  // Early: every refusal that may have come first arrived with fewer than `limit` requests possibly in its window.
  const possible = figures.possiblyInWindow;
  if (possible < limit) {
    if (input.earlier === undefined)
      return { verdict: 'pass', figures, note: `429 after at most ${possible} requests, but the key's earlier traffic is unknown: not judged early` };
    const org = (input.orgOthers ?? []).filter((r) => candidates.some((c) => r.sentAt < c.receivedAt && r.receivedAt > c.sentAt - windowMs - slack));
    if (org.length > 0) {
      return {
        verdict: 'pass',
        figures,
        note: `429 after at most ${possible} requests of the key, while ${org.length} requests of other keys of its organization were in the window (organization ceiling not shown): not judged early`,
      };
    }
    return {
      verdict: 'fail',
      rule: 'early',
      requirement: 'rate-limit.per-key-default-60',
      figures,
      at: firstIndex,
      message:
        `429 on request ${firstIndex + 1} of the key (sent at ${at(first.sentAt, t0)}): at most ${possible} of its requests can have been in the ` +
        `${s(windowMs)} window before it, and its limit is ${limit}: throttled before the ceiling`,
      expected: `no 429 before ${limit} requests within one window`,
      actual: { refusedOnRequest: firstIndex + 1, possiblyInWindow: possible, earlierRequests: earlier.length },
    };
  }
  return { verdict: 'pass', figures };
}

export interface SlideInput {
  limit: number;
  windowMs: number;
  /**
   * The first half, sent half a window before the second (the sliding episode); or, for a refill of
   * the throttled operations, the key's requests that had certainly left the window before the probe.
   */
  first: readonly Timed[];
  /** The second half, until its 429; or the key's requests that may still count at the probe. */
  second: readonly Timed[];
  /** The probe sent once the first half had left the window and the last Retry-After had elapsed. */
  after: Timed & { remaining?: number };
  /** When the last 429's Retry-After elapsed (its answer + Retry-After), ms; undefined without Retry-After. */
  retryAfterElapsedAt?: number;
}

export interface SlideFigures {
  /** Served requests of the second half certainly still in the window when the probe arrived. */
  inWindow: number;
  /** When the last served request of the first half was answered. */
  firstDoneAt: number;
  probeSentAt: number;
  remaining?: number;
  /** The most X-RateLimit-Remaining a sliding window can report at the probe (either reading of "left"). */
  bound: number;
}

/**
 * The probe after the first half left the window: a sliding window is still
 * holding the second half, so it has at most `limit - inWindow` left; a fixed
 * window that started with the first half reports a fresh window.
 */
export function judgeSlide(input: SlideInput): Verdict<SlideFigures> {
  const { limit, windowMs, first, second, after } = input;
  const t0 = first[0]?.sentAt ?? after.sentAt;
  const firstDoneAt = Math.max(...first.filter(served).map((r) => r.receivedAt));
  const slack = windowSlackMs(windowMs);
  const inWindow = second.filter((r) => served(r) && r.sentAt > after.receivedAt - windowMs + slack).length;
  const figures: SlideFigures = {
    inWindow,
    firstDoneAt,
    probeSentAt: after.sentAt,
    bound: limit - inWindow,
    ...(after.remaining !== undefined ? { remaining: after.remaining } : {}),
  };
  const waited = after.sentAt >= firstDoneAt + windowMs + slack && (input.retryAfterElapsedAt === undefined || after.sentAt >= input.retryAfterElapsedAt);
  if (!waited)
    return {
      verdict: 'error',
      figures,
      message: `the probe was sent at ${at(after.sentAt, t0)}, before the first half (answered by ${at(firstDoneAt, t0)}) had left the window: a scheduling error of ours`,
    };
  if (after.status === 429) {
    return {
      verdict: 'fail',
      rule: 'not-sliding',
      requirement: 'rate-limit.sliding-window',
      figures,
      message:
        `still 429 at ${at(after.sentAt, t0)}, ${s(after.sentAt - firstDoneAt)} after the first half was answered (window ${s(windowMs)})` +
        `${input.retryAfterElapsedAt !== undefined ? ` and ${s(after.sentAt - input.retryAfterElapsedAt)} after the last Retry-After elapsed` : ''}: capacity did not return`,
      expected: 'served (not 429)',
      actual: { status: 429, sentAfterFirstHalfMs: after.sentAt - firstDoneAt, windowMs },
    };
  }
  if (!served(after)) return { verdict: 'error', figures, message: `the probe after the wait got HTTP ${after.status ?? 'no answer'}` };
  const secondFrom = Math.min(...second.map((r) => r.sentAt));
  const secondTo = Math.max(...second.map((r) => r.receivedAt));
  if (inWindow < 2) {
    return {
      verdict: 'inconclusive',
      figures,
      message:
        `only ${inWindow} served requests of the second half (sent ${at(secondFrom, t0)}..${at(secondTo, t0)}) were certainly inside the ${s(windowMs)} window ` +
        `when the probe was answered at ${at(after.receivedAt, t0)}: too few to tell a sliding window from a fixed one`,
    };
  }
  if (after.remaining === undefined)
    return {
      verdict: 'inconclusive',
      figures,
      message: 'the probe after the wait has no integer X-RateLimit-Remaining (see rate-limit.headers-on-authenticated-responses)',
    };
  if (after.remaining > figures.bound) {
    return {
      verdict: 'fail',
      rule: 'not-sliding',
      requirement: 'rate-limit.sliding-window',
      figures,
      message:
        `X-RateLimit-Remaining is ${after.remaining} at ${at(after.sentAt, t0)}, but ${inWindow} served requests sent from ${at(secondFrom, t0)} are still inside the ` +
        `${s(windowMs)} window (at most ${figures.bound} left of ${limit}): capacity returned all at once, the window did not slide`,
      expected: `<= ${figures.bound}`,
      actual: { remaining: after.remaining, inWindow, probeSentMs: after.sentAt - t0, secondHalfSentMs: [secondFrom - t0, secondTo - t0] },
    };
  }
  return { verdict: 'pass', figures };
}

export interface WaitInput {
  /** The refusal whose Retry-After was waited (the one that elapses last). */
  refused: Timed;
  /** Retry-After of that refusal, seconds; undefined when absent. */
  retryAfterS?: number;
  /** The request sent after the wait. */
  after: Timed;
}

export interface WaitFigures {
  retryAfterS?: number;
  /** From the refusal's answer to the send of the request after the wait, ms. */
  waitedMs: number;
}

/**
 * A request sent once Retry-After has elapsed must be served: the target
 * answered the 429 no later than the client received it, so a retry sent
 * Retry-After seconds after that receipt arrives after the advised wait.
 * A 429 then means the Retry-After was too short (or the key never recovers).
 */
export function judgeRetryAfterWait(input: WaitInput): Verdict<WaitFigures> {
  const { refused, after } = input;
  const waitedMs = after.sentAt - refused.receivedAt;
  const figures: WaitFigures = { waitedMs, ...(input.retryAfterS !== undefined ? { retryAfterS: input.retryAfterS } : {}) };
  if (input.retryAfterS === undefined)
    return { verdict: 'inconclusive', figures, message: 'the 429 has no Retry-After to wait (see rate-limit.excess-gives-429)' };
  if (waitedMs < input.retryAfterS * 1000) {
    return {
      verdict: 'inconclusive',
      figures,
      message: `Retry-After ${input.retryAfterS} s is longer than the episode waits (it retried after ${s(waitedMs)}): not waited out`,
    };
  }
  if (after.status === 429) {
    return {
      verdict: 'fail',
      rule: 'retry-after-too-short',
      requirement: 'rate-limit.retry-after',
      figures,
      message: `still 429 when retried ${s(waitedMs)} after a 429 that said Retry-After: ${input.retryAfterS} (the wait it gave was too short, or the limit never frees)`,
      expected: `served once Retry-After (${input.retryAfterS} s) has elapsed`,
      actual: { status: 429, waitedMs, retryAfterS: input.retryAfterS },
    };
  }
  if (!served(after)) return { verdict: 'error', figures, message: `the request after the wait got HTTP ${after.status ?? 'no answer'}` };
  return { verdict: 'pass', figures };
}

/** A Retry-After of a 429 as the spec states it: whole seconds to wait, at least one (the request was refused, so there is a wait). */
export function judgeRetryAfterValue(
  raw: string | undefined,
  windowSec: number,
  slackS: number,
): { ok: true; seconds: number } | { ok: false; message: string } {
  if (raw === undefined) return { ok: false, message: 'the 429 has no Retry-After header' };
  if (!/^\s*\d+\s*$/.test(raw)) return { ok: false, message: `Retry-After "${raw}" is not a whole number of seconds` };
  const seconds = Number(raw);
  if (seconds < 1)
    return { ok: false, message: 'Retry-After: 0 on a 429: the request was refused, so the wait is not zero (a retry at once is refused again)' };
  if (seconds > windowSec + slackS) return { ok: false, message: `Retry-After ${seconds} s is longer than one ${windowSec} s window` };
  return { ok: true, seconds };
}

export interface IssuanceCeilingInput {
  limit: number;
  windowMs: number;
  /** A 429 of the first burst: the window holding it admits no more requests. */
  anchor: Timed;
  /** The second burst: token requests sent after the last 429's Retry-After, in send order, until a refusal. */
  later: readonly Timed[];
}

export interface IssuanceCeilingFigures {
  /** Tokens issued to requests that certainly arrived after the anchor 429 and before its send + one window. */
  issuedInWindow: number;
  /** Requests answered in that interval. */
  answeredInWindow: number;
  /** Tokens the second burst got before (and beside) its first refusal. */
  issuedBeforeRefusal: number;
  refused: boolean;
  /** The interval counted: from the anchor's answer to its send + one window, relative to its send, ms. */
  fromMs: number;
  toMs: number;
}

/**
 * At most `limit` tokens per fixed window, whatever its alignment. The window
 * holding a 429 is full, and the next one starts after that 429 arrived, so it
 * lasts at least until the 429's send + one window: requests sent after the 429
 * was answered and answered before that moment fall into one window, and at
 * most `limit` of them may get a token. (Holds for windows aligned to the clock,
 * to the first request or anywhere else, and for a sliding window too.)
 * - fail: more than `limit` tokens in that interval;
 * - pass: the second burst, sent once the wait was over, was refused after at most `limit` tokens;
 * - inconclusive: neither (the burst was too slow, or ran past the interval).
 */
export function judgeIssuanceCeiling(input: IssuanceCeilingInput): Verdict<IssuanceCeilingFigures> {
  const { limit, windowMs, anchor, later } = input;
  const end = anchor.sentAt + windowMs;
  const inside = later.filter((r) => r.sentAt >= anchor.receivedAt && r.receivedAt < end);
  const issued = inside.filter(served);
  const refused = later.some(refusedBy);
  const issuedBeforeRefusal = later.filter(served).length;
  const figures: IssuanceCeilingFigures = {
    issuedInWindow: issued.length,
    answeredInWindow: inside.length,
    issuedBeforeRefusal,
    refused,
    fromMs: anchor.receivedAt - anchor.sentAt,
    toMs: windowMs,
  };
  if (issued.length > limit) {
    const last = Math.max(...issued.map((r) => r.receivedAt));
    const first = Math.min(...issued.map((r) => r.sentAt));
    return {
      verdict: 'fail',
      rule: 'issuance-too-loose',
      requirement: 'issuance-limit.twenty-per-minute',
      figures,
      message:
        `${issued.length} tokens were issued to requests sent from ${at(first, anchor.sentAt)} and answered by ${at(last, anchor.sentAt)}, counted from the send of a 429 ` +
        `(answered at ${at(anchor.receivedAt, anchor.sentAt)}): all inside the one fixed ${s(windowMs)} window that follows it, whatever its alignment; the limit is ${limit} per window`,
      expected: `at most ${limit} tokens per window`,
      actual: { issued: issued.length, sentFromMs: first - anchor.sentAt, answeredByMs: last - anchor.sentAt, windowMs },
    };
  }
  if (refused && issuedBeforeRefusal <= limit) return { verdict: 'pass', figures };
  const from = later.length ? Math.min(...later.map((r) => r.sentAt)) : end;
  const to = later.length ? Math.max(...later.map((r) => r.receivedAt)) : end;
  return {
    verdict: 'inconclusive',
    figures,
    message:
      `the second burst got ${issuedBeforeRefusal} tokens${refused ? ' before its 429' : ' and no 429'}, sent from ${at(from, anchor.sentAt)} to ${at(to, anchor.sentAt)} ` +
      `after the send of a 429 of the first; only ${inside.length} of its requests were answered before ${at(end, anchor.sentAt)} (one ${s(windowMs)} window; ` +
      `${issued.length} issued, limit ${limit}): too little of the window was left to tell`,
  };
}

export interface IssuanceFloorInput {
  limit: number;
  /** The first burst's latest-sent 429: the window after it began no earlier than its send. */
  anchor: Timed;
  /** The second burst: the token request after the last Retry-After, then `limit` more at once. */
  later: readonly Timed[];
  /** Every other token endpoint request of the run (any client, valid or not), the anchor and the burst left out. */
  others: readonly Timed[];
}

export interface IssuanceFloorFigures {
  /** Tokens the second burst got. */
  issued: number;
  refused: boolean;
  /** Other token requests of the run that may count in the second burst's window (answered after the anchor's send). */
  othersInWindow: number;
  /** The fewest tokens a window of `limit` must still have issued to the second burst. */
  floor: number;
}

/**
 * No fewer than the limit, when the run is the only client of its source address: the second
 * burst goes once every 429's Retry-After has elapsed, in a window that began after the anchor
 * 429 was sent. The only other requests that window may count are the run's own token requests
 * answered after that send, so a window of `limit` issues the second burst at least `limit` less
 * those before it refuses one.
 * - fail: refused after fewer tokens (throttled before the limit);
 * - pass: refused after at least that many, or not refused (judgeIssuanceCeiling judges the excess).
 */
export function judgeIssuanceFloor(input: IssuanceFloorInput): Verdict<IssuanceFloorFigures> {
  const { limit, anchor, later, others } = input;
  const issued = later.filter(served).length;
  const refused = later.some(refusedBy);
  const othersInWindow = others.filter((r) => r.receivedAt > anchor.sentAt).length;
  const floor = Math.max(0, limit - othersInWindow);
  const figures: IssuanceFloorFigures = { issued, refused, othersInWindow, floor };
  if (!refused || issued >= floor) return { verdict: 'pass', figures };
  return {
    verdict: 'fail',
    rule: 'issuance-too-strict',
    requirement: 'issuance-limit.twenty-per-minute',
    figures,
    message:
      `the token endpoint refused the burst sent after the Retry-After had elapsed once it had issued ${issued} token(s); ` +
      `at most ${othersInWindow} other token request(s) of this run (the only client of its source address) can count in that window, ` +
      `so it issued at most ${issued + othersInWindow} of the ${limit} a window allows`,
    expected: `at least ${floor} tokens before a 429`,
    actual: { issued, othersInWindow, limit },
  };
}

export interface RemainingInput {
  windowMs: number;
  /** Requests of one key sent one after the other (each after the previous answer), with their X-RateLimit-Remaining. */
  hits: ReadonlyArray<Timed & { remaining?: number }>;
  /** The run's other requests of the key. */
  others: readonly Timed[];
  /** Tolerance on when a request leaves a sliding window (an implementation may count in coarser steps), ms. */
  leaveSlackMs?: number;
  /**
   * The key's ceiling (X-RateLimit-Limit of the first hit, else the config's): with it, the first
   * hit's Remaining tells how many requests the window held, and those the run did not send (a
   * run just before this one, another client of the key) may leave it during the sequence.
   */
  limit?: number;
  /**
   * Sent before this (ms), the requests the run did not send: they leave the window by a window
   * after it. Default: the first hit's answer (they were counted by then).
   */
  unseenBefore?: number;
}

export interface RemainingFigures {
  values: Array<number | undefined>;
  /** Per step: the change, and how many requests could have left or been counted in between. */
  steps: Array<{ delta: number; couldLeave: number; couldCount: number }>;
  /** Requests in the key's window at the first hit that the run did not send (0 without `limit`). */
  unseen: number;
}

/**
 * "Requests left in the current window": between two requests of a key sent one
 * after the other, Remaining falls by exactly one, unless a request of the key
 * left the window in between (then it may fall less) or another request of the key
 * reached the target in between (then more). Both are allowed only when the run's
 * own traffic on the key shows one could have. Requests the window held at the first
 * hit that the run did not send (by that hit's Remaining, against `limit`) leave at
 * times the run cannot know, within a window of `unseenBefore` (the run's start: the
 * run assumes no other client uses its keys while it runs, but one may have just
 * before): a step that falls too little while one of them may still leave is not
 * judged (inconclusive, unless a later step fails outright); it never excuses a step
 * that falls too much.
 */
export function judgeRemainingSteps(input: RemainingInput): Verdict<RemainingFigures> {
  const { windowMs, hits, others } = input;
  const slack = input.leaveSlackMs ?? windowSlackMs(windowMs);
  const first = hits[0];
  const unseen = first ? unseenInWindow(first, others, windowMs, slack, input.limit) : 0;
  const figures: RemainingFigures = { values: hits.map((h) => h.remaining), steps: [], unseen };
  const t0 = first?.sentAt ?? 0;
  const unseenBefore = Math.min(input.unseenBefore ?? Number.POSITIVE_INFINITY, first?.receivedAt ?? 0);
  let excused: string | undefined;
  for (let i = 1; i < hits.length; i++) {
    const prev = hits[i - 1]!;
    const cur = hits[i]!;
    if (prev.remaining === undefined || cur.remaining === undefined) continue;
    const from = prev.sentAt;
    const to = cur.receivedAt;
    // The sequence's own earlier requests too, `prev` among them: a pause of a window between two of them lets it leave.
    const couldLeave = [...others, ...hits.slice(0, i)].filter((r) => {
      const [earliest, latest] = leaveBand(r, windowMs);
      return earliest <= to && latest >= from;
    }).length;
    const couldCount = others.filter((r) => r.sentAt <= to && r.receivedAt >= from).length;
    const delta = cur.remaining - prev.remaining;
    figures.steps.push({ delta, couldLeave, couldCount });
    const tooLittle = delta > -1 + couldLeave;
    if (tooLittle && unseen > 0 && from <= unseenBefore + windowMs + slack && delta <= -1 + couldLeave + unseen) {
      excused ??=
        `X-RateLimit-Remaining went from ${prev.remaining} to ${cur.remaining} over one request (requests ${i} and ${i + 1} of a sequence), ` +
        `while the key's window held ${unseen} request(s) this run did not send (Remaining ${first!.remaining} of ${input.limit} at the sequence's first request): ` +
        'one of them leaving the window would explain it';
      continue;
    }
    if (tooLittle || delta < -1 - couldCount) {
      const why =
        couldLeave === 0 && couldCount === 0
          ? 'no other request of the key was counted or left the window in between'
          : `at most ${couldLeave} request(s) of the key could have left the window and ${couldCount} been counted in between`;
      return {
        verdict: 'fail',
        rule: 'remaining-step',
        requirement: 'rate-limit.headers-arithmetic',
        figures,
        at: i,
        message:
          `X-RateLimit-Remaining went from ${prev.remaining} to ${cur.remaining} over one request (requests ${i} and ${i + 1} of a sequence, ` +
          `sent at ${at(prev.sentAt, t0)} and ${at(cur.sentAt, t0)}, one after the other): it must fall by exactly one, as ${why}`,
        expected: couldLeave === 0 && couldCount === 0 ? prev.remaining - 1 : `${prev.remaining - 1 - couldCount}..${prev.remaining - 1 + couldLeave}`,
        actual: { sequence: figures.values, step: delta },
      };
    }
  }
  if (excused) return { verdict: 'inconclusive', figures, message: excused };
  return { verdict: 'pass', figures };
}

/**
 * Requests the key's window held when `first` was counted that the run did not send: the window's
 * count by `first`'s Remaining (limit - remaining, `first` included) less the run's requests that
 * may still have been in it then. 0 without a limit or a Remaining.
 */
function unseenInWindow(first: Timed & { remaining?: number }, others: readonly Timed[], windowMs: number, slack: number, limit?: number): number {
  if (limit === undefined || first.remaining === undefined) return 0;
  const own = others.filter((r) => r.sentAt <= first.receivedAt && r.receivedAt + windowMs + slack >= first.sentAt).length;
  return Math.max(0, limit - first.remaining - 1 - own);
}

/**
 * The token issuance burst (a fixed window of `limit`, alignment open): a burst
 * shorter than one window overlaps at most two windows, so more than `2 x limit`
 * tokens within less than a window is a limit too loose whatever the alignment.
 * A refusal other than 429 once `limit` tokens were issued is the wrong answer to
 * an exhausted limit; before that, the target is in trouble (error).
 */
export function judgeIssuanceBurst(input: {
  limit: number;
  windowMs: number;
  requests: ReadonlyArray<Timed & { remaining?: number }>;
  concurrency?: number;
}): Verdict {
  const { limit, windowMs, requests } = input;
  const t0 = requests[0]?.sentAt ?? 0;
  const best = maxServedWithinWindow(requests, windowMs);
  const firstIndex = requests.findIndex(refusedBy);
  const figures: BurstFigures = {
    sent: requests.length,
    served: requests.filter(served).length,
    spanMs: requests.length ? Math.max(...requests.map((r) => r.receivedAt)) - t0 : 0,
    maxServedInWindow: best.count,
    ...(firstIndex >= 0 ? { refusedAt: firstIndex + 1, refusedStatus: requests[firstIndex]!.status } : {}),
    ...(input.concurrency !== undefined ? { concurrency: input.concurrency } : {}),
  };
  if (best.count > 2 * limit) {
    return {
      verdict: 'fail',
      rule: 'late',
      requirement: 'issuance-limit.twenty-per-minute',
      figures,
      message:
        `${best.count} token requests got a token within ${s(best.to - best.from)} (sent from ${at(best.from, t0)}, last answered at ${at(best.to, t0)}): ` +
        `a fixed window of ${limit} per ${s(windowMs)} allows at most ${2 * limit} within any interval shorter than one window`,
      expected: `a 429 within ${2 * limit + 1} requests sent within one window`,
      actual: { issued: best.count, withinMs: best.to - best.from, windowMs },
    };
  }
  if (firstIndex < 0) {
    return {
      verdict: 'inconclusive',
      figures,
      message:
        `${figures.sent} token requests took ${s(figures.spanMs)} (window ${s(windowMs)}); at most ${best.count} got a token within one window, ` +
        `and ${2 * limit + 1} are needed to prove the limit`,
    };
  }
  const wrong = firstRefusalCandidates(requests).find((r) => r.status !== 429);
  if (wrong) {
    const before = requests.filter((r) => served(r) && r.receivedAt <= wrong.sentAt);
    const issuedBefore = before.length;
    // Exhausted: the burst alone got the limit, or the endpoint's own count said nothing was left in
    // an answer that arrived before this request left (any of them: concurrent answers arrive in any order).
    const saidExhausted = before.some((r) => r.remaining === 0);
    if (issuedBefore >= limit || saidExhausted) {
      return {
        verdict: 'fail',
        rule: 'status',
        requirement: 'issuance-limit.excess-429',
        figures,
        at: requests.indexOf(wrong),
        message:
          `token request ${requests.indexOf(wrong) + 1}, sent at ${at(wrong.sentAt, t0)} after ${issuedBefore} tokens were issued (limit ${limit} per window` +
          `${saidExhausted ? '; an answer before it said X-RateLimit-Remaining: 0' : ''}), was answered ${wrong.status}: the excess must give 429 HPB-00105`,
        expected: { status: 429, code: 'HPB-00105' },
        actual: { status: wrong.status, issuedBefore },
      };
    }
    return {
      verdict: 'error',
      figures,
      message: `a valid token request got HTTP ${wrong.status ?? 'no answer'} after ${issuedBefore} tokens (limit ${limit}): neither a token nor a 429`,
    };
  }
  return { verdict: 'pass', figures };
}

/**
 * The requests of a key that may leave its window (stop being counted) at some moment in
 * `[from, to]`: each leaves a window after its arrival (between its send and its answer),
 * give or take the slack of a target that counts in steps.
 */
export function mayLeaveWithin(requests: readonly Timed[], from: number, to: number, windowMs: number): Timed[] {
  return requests.filter((r) => {
    const [earliest, latest] = leaveBand(r, windowMs);
    return earliest <= to && latest >= from;
  });
}

export interface ThrottledInput {
  /** The requirement the operation's answer is judged on (e.g. `encounter.create-429`). */
  requirement: string;
  limit: number;
  windowMs: number;
  /** The operation, sent once the key was full. */
  op: Timed;
  /** The key's answer just before the operation (the fill's last), with its X-RateLimit-Remaining. */
  before?: Timed & { remaining?: number };
  /** Every other request of the key the run made (any status). */
  others: readonly Timed[];
}

export interface ThrottledFigures {
  /** Served requests of the key certainly in the window when the operation arrived. */
  servedInWindow: number;
  /** X-RateLimit-Remaining of the answer just before the operation. */
  beforeRemaining?: number;
  /** Requests of the key that may have left the window between that answer's send and the operation's answer. */
  mayHaveLeft: number;
}

/**
 * An operation sent on a full key (spec: every R4 MedicationRequest and Encounter row
 * lists 429 `HPB-00105`): a 429 is the refusal due (its code is judged by the check).
 * Any other answer fails when the key was certainly full as it arrived, which the client
 * proves either way:
 * - `limit` served requests of the key certainly inside the window ending at its arrival; or
 * - the answer just before it (sent after every other) said X-RateLimit-Remaining 0, and no
 *   request of the key can have left the window since that answer's request was sent.
 * Else a slot may have freed meanwhile: inconclusive (the episode sends the operation again).
 */
export function judgeThrottled(input: ThrottledInput): Verdict<ThrottledFigures> {
  const { limit, windowMs, op, before, others, requirement } = input;
  const slack = windowSlackMs(windowMs);
  const all = before ? [...others, before] : [...others];
  const servedInWindow = certainlyBefore(op, all, windowMs - slack);
  const left = before
    ? mayLeaveWithin(
        all.filter((r) => r !== before),
        before.sentAt,
        op.receivedAt,
        windowMs,
      ).length
    : 0;
  const figures: ThrottledFigures = { servedInWindow, mayHaveLeft: left, ...(before?.remaining !== undefined ? { beforeRemaining: before.remaining } : {}) };
  if (op.status === 429) return { verdict: 'pass', figures };
  const fullByCount = servedInWindow >= limit;
  const fullByHeader = before !== undefined && before.remaining === 0 && before.receivedAt <= op.sentAt && left === 0;
  if (fullByCount || fullByHeader) {
    const why = fullByCount
      ? `${servedInWindow} requests of the key were served within the ${s(windowMs)} window before it (its limit is ${limit})`
      : `the key's answer just before it said X-RateLimit-Remaining 0, and none of the key's requests can have left the ${s(windowMs)} window in between`;
    return {
      verdict: 'fail',
      rule: 'not-throttled',
      requirement,
      figures,
      message: `${requirement}: answered ${op.status ?? 'nothing'} while the key was over its limit (${why}): the excess must give 429 HPB-00105`,
      expected: { status: 429, code: 'HPB-00105' },
      actual: { status: op.status, servedInWindow, beforeRemaining: before?.remaining, mayHaveLeft: left },
    };
  }
  return {
    verdict: 'inconclusive',
    figures,
    message:
      `${requirement}: answered ${op.status ?? 'nothing'}, but the key may have had room (${servedInWindow} served certainly in the window of ${limit}; ` +
      `${before?.remaining === undefined ? 'no X-RateLimit-Remaining before it' : `Remaining ${before.remaining} before it, ${left} request(s) may have left the window since`})`,
  };
}
