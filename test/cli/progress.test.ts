/**
 * Progress from run events: plain lines for logs (area lines with done/total and
 * outcomes so far, failures, long waits) and the live status line of a terminal
 * (done/total, outcomes, the current check, a wait countdown, elapsed, ETA).
 */
import { describe, expect, test } from 'vitest';
import type { PlannedCheck, RunEvent } from '../../src/engine/events.js';
import type { CheckResult, Outcome } from '../../src/engine/types.js';
import { Eta, clock, liveProgress, progressLines } from '../../src/run/progress.js';

const planned: PlannedCheck[] = [
  { id: 'discovery.a', title: 'a', area: 'discovery', tags: ['early'], slot: 'early' },
  { id: 'auth.b', title: 'b', area: 'auth', tags: [], slot: 'paced' },
  { id: 'auth.c', title: 'c', area: 'auth', tags: [], slot: 'paced' },
  { id: 'rate-limit.d', title: 'd', area: 'rate-limit', tags: ['exhausts-key-limit', 'waits'], slot: 'exhausting' },
];
const stats = {
  requests: 0,
  unplanned429: 0,
  pacedByClient: {},
  tokenRequests: 0,
  limits: { perKeyPerWindow: 60, windowSec: 60, tokenLifetimeSec: 300, tokenIssuancePerWindow: 20 },
};
const result = (c: PlannedCheck, outcome: Outcome, message?: string): CheckResult =>
  ({
    id: c.id,
    title: c.title,
    area: c.area,
    requirements: [],
    level: 'MUST',
    outcome,
    ...(message ? { message } : {}),
    findings: [],
    observations: [],
    evidence: [],
    startedAt: '',
    durationMs: 10,
  }) as unknown as CheckResult;
const finished = (i: number, outcome: Outcome, message?: string): RunEvent => ({
  type: 'check-finished',
  check: planned[i]!,
  result: result(planned[i]!, outcome, message),
  index: i,
  total: planned.length,
  stats,
});
const started = (i: number): RunEvent => ({ type: 'check-started', check: planned[i]!, index: i, total: planned.length });

describe('plain progress lines', () => {
  test('an area line with done/total and outcomes so far, a line per failure, long waits only', () => {
    const lines: string[] = [];
    const sub = progressLines((l) => lines.push(l));
    sub({ type: 'run-started', runId: 'r', profile: 'quick', baseUrl: 'http://x', embedded: true, planned });
    sub(started(0));
    sub(finished(0, 'pass'));
    sub(started(1));
    sub({ type: 'wait', ms: 400, reason: 'short' });
    sub(finished(1, 'fail', 'X-Correlation-Id missing'));
    sub({ type: 'wait', ms: 4200, reason: 'rate-limit window', client: 'main' });
    sub(finished(2, 'skip'));
    expect(lines).toEqual([
      '▸ discovery  (1/4 checks done · pass 1 · fail 0 · error 0 · skip 0)',
      '▸ auth  (2/4 checks done · pass 1 · fail 1 · error 0 · skip 0)',
      '  FAIL auth.b: X-Correlation-Id missing',
      '  … waiting 4.2 s (main): rate-limit window',
    ]);
  });
});

describe('the live status line', () => {
  test('done/total, outcomes, the current check, a wait countdown, elapsed and ETA; failures printed above it', async () => {
    let written = '';
    const stream = { isTTY: true, columns: 200, rows: 30, write: (s: string) => ((written += s), true) } as unknown as NodeJS.WriteStream;
    const live = await liveProgress(stream);
    live.subscriber({ type: 'run-started', runId: 'r', profile: 'quick', baseUrl: 'http://x', embedded: true, planned });
    live.subscriber(started(0));
    live.subscriber(finished(0, 'pass'));
    live.subscriber(started(1));
    live.subscriber(finished(1, 'error', 'ERR_TIMEOUT: no response within 15 s'));
    live.subscriber(started(2));
    live.subscriber({ type: 'wait', ms: 9000, reason: 'rate-limit window', client: 'main' });
    await new Promise((r) => setTimeout(r, 300));
    live.stop();
    // eslint-disable-next-line no-control-regex
    const text = written.replace(/\u001B\[[0-9;?]*[A-Za-z]/g, '');
    expect(text).toContain('  ERROR auth.b: ERR_TIMEOUT: no response within 15 s\n');
    expect(text).toMatch(/⠋|⠙|⠹|⠸|⠼|⠴|⠦|⠧|⠇|⠏/);
    expect(text).toMatch(/2\/4 checks · pass 1 · fail 0 · error 1 · skip 0 · auth\.c · waiting [89] s \(main\): rate-limit window · 0:00 · ≥0:00 left/);
  });

  test('ETA: the mean duration of finished checks of the same kind; a floor while kinds still to run have none', () => {
    const eta = new Eta();
    eta.record(planned[1]!, 2000);
    eta.record(planned[1]!, 4000);
    expect(eta.remainingMs([planned[2]!], 1000)).toEqual({ ms: 2000, guessed: false });
    expect(eta.remainingMs([planned[2]!, planned[2]!])).toEqual({ ms: 6000, guessed: false });
    expect(eta.remainingMs([planned[2]!, planned[3]!], 5000)).toEqual({ ms: 3000, guessed: true });
    expect(new Eta().remainingMs(planned)).toBeUndefined();
    expect(clock(65_000)).toBe('1:05');
    expect(clock(3_725_000)).toBe('1:02:05');
  });
});
