/** The run timeline as a subscriber of the run's events. */
import { describe, expect, it } from 'vitest';
import { RunEvents, plannedCheck } from '../../src/engine/events.js';
import type { RunStats } from '../../src/engine/schedule.js';
import { timelineCollector, waitKind } from '../../src/engine/timeline-collector.js';
import type { CheckResult, Exchange } from '../../src/engine/types.js';
import type { ExchangeFacts } from '../../src/http/types.js';

const T0 = Date.parse('2025-03-01T10:00:00.000Z');
const TOKEN_URL = 'https://fhir.example.test/auth/token';
const stats = {
  requests: 0,
  unplanned429: 0,
  pacedByClient: {},
  tokenRequests: 0,
  limits: { perKeyPerWindow: 60, windowSec: 60, tokenLifetimeSec: 300, tokenIssuancePerWindow: 20 },
} as RunStats;

function exchange(
  n: number,
  at: number,
  opts: { client?: string; url?: string; status?: number; headers?: Record<string, string>; ms?: number } = {},
): Exchange {
  return {
    id: `x-${String(n).padStart(6, '0')}`,
    startedAt: new Date(T0 + at).toISOString(),
    durationMs: opts.ms ?? 12.4,
    ...(opts.client ? { client: opts.client } : {}),
    request: { method: 'GET', url: opts.url ?? 'https://fhir.example.test/fhir/R4/Patient/1', headers: { authorization: 'Bearer $TOKEN' } },
    ...(opts.status === undefined ? { error: 'connection reset' } : { response: { status: opts.status, headers: opts.headers ?? {}, bodyBytes: 0 } }),
    curl: 'curl',
  };
}
const facts = (ex: Exchange): ExchangeFacts => ({
  path: '/x',
  authenticated: true,
  perSource: false,
  answeredAt: Date.parse(ex.startedAt) + ex.durationMs,
  truncated: false,
  complete: true,
  skipInvariants: false,
});

describe('timelineCollector', () => {
  it('records every exchange on its lane, the Retry-After asked, the waits, the tokens and the stretch of timing checks', () => {
    let now = T0;
    const events = new RunEvents();
    const tl = timelineCollector({
      startedAt: T0,
      keys: [
        { role: 'main', ceiling: 60 },
        { role: 'second-org', ceiling: 30 },
        { role: 'second-org', ceiling: 45 },
      ],
      windowSec: 60,
      issuancePerWindow: 20,
      tokenLifetimeSec: 300,
      isTokenEndpoint: (url) => url === TOKEN_URL,
      retryAfterMs: (h) => (h['retry-after'] === undefined ? undefined : Number(h['retry-after']) * 1000),
      now: () => now,
    });
    events.subscribe(tl.subscriber);
    const sent: Exchange[] = [
      exchange(1, 100, { url: TOKEN_URL, status: 200 }),
      exchange(2, 250, { client: 'main', status: 200 }),
      exchange(3, 900, { client: 'second-org', status: 429, headers: { 'retry-after': '30' }, ms: 5 }),
      exchange(4, 1000, {}),
      exchange(5, 1200, { client: 'main', status: 401 }),
    ];
    for (const ex of sent) events.emit({ type: 'exchange', exchange: ex, facts: facts(ex) });
    events.emit({ type: 'token-issued', client: 'main', exchange: 'x-000001', sentAt: T0 + 100, expiresAt: T0 + 300_100 });
    now = T0 + 905;
    events.emit({ type: 'wait', reason: '429: Retry-After 30 s', ms: 30_000, client: 'second-org' });
    now = T0 + 1500;
    events.emit({ type: 'wait', reason: 'token issuance limit', ms: 2000 });
    events.emit({ type: 'wait', reason: 'waiting for the probe token to expire', ms: 4000 });
    const finish = (id: string, tags: Array<'waits'>, outcome: CheckResult['outcome'], evidence: Exchange[]) =>
      events.emit({
        type: 'check-finished',
        check: plannedCheck({ id, title: id, area: id.split('.')[0]!, tags }, 'paced'),
        result: { id, outcome, evidence, startedAt: new Date(T0).toISOString(), durationMs: 10 } as CheckResult,
        index: 0,
        total: 4,
        stats,
      });
    finish('rate-limit.a', ['waits'], 'pass', [sent[1]!, sent[2]!]);
    finish('rate-limit.skipped', ['waits'], 'skip', []);
    finish('errors.b', [], 'pass', [sent[1]!]);
    finish('errors.c', [], 'fail', [sent[2]!]); // a 429 in its evidence: a timing verdict too

    const t = tl.timeline();
    expect(t.lanes.map((l) => [l.name, l.kind, l.ceiling])).toEqual([
      ['main', 'key', 60],
      ['second-org', 'key', 30],
      ['token endpoint', 'token-endpoint', 20],
      ['no key', 'none', undefined],
    ]);
    expect(t.requests).toEqual([
      [100, 12, 2, 200, 'x-000001'],
      [250, 12, 0, 200, 'x-000002'],
      [900, 5, 1, 429, 'x-000003'],
      [1000, 12, 3, 0, 'x-000004'],
      [1200, 12, 0, 401, 'x-000005'],
    ]);
    expect(t.retryAfter).toEqual([[905, 1, 30_000, 'x-000003']]);
    expect(t.waits).toEqual([
      [905, 1, 30_000, 'retry-after'],
      [1500, 2, 2000, 'pacing'],
      [1500, -1, 4000, 'check'],
    ]);
    expect(t.tokens).toEqual([[100, 0, 300_100, 'x-000001']]);
    expect(t.checks).toEqual({
      'rate-limit.a': { from: 250, to: 905, lanes: [0, 1] },
      'errors.c': { from: 900, to: 905, lanes: [1] },
    });
    // Nothing secret: no URL, header or token anywhere.
    expect(JSON.stringify(t)).not.toMatch(/Bearer|https?:|authorization/i);
  });

  it('names the kinds of wait from their reasons', () => {
    expect(waitKind('429: Retry-After 4.0 s')).toBe('retry-after');
    expect(waitKind('429 on this key: no request before its Retry-After elapses')).toBe('retry-after');
    expect(waitKind('token endpoint Retry-After')).toBe('retry-after');
    expect(waitKind('503: backoff 1.0 s')).toBe('backoff');
    expect(waitKind('client-side pacing at 60 per 60 s')).toBe('pacing');
    expect(waitKind('rate-limit headers: remaining exhausted, waiting for reset')).toBe('pacing');
    expect(waitKind('token issuance limit')).toBe('pacing');
    expect(waitKind('waiting out the token issuance window')).toBe('check');
  });
});
