import { describe, expect, test } from 'vitest';
import { compactTimeline, expandRequests, renderJson, buildReport, reportSchemaErrors } from '../../src/report/index.js';
import type { RunTimeline } from '../../src/engine/types.js';
import { syntheticRun, syntheticTimeline } from './synthetic-run.js';

const LANES: RunTimeline['lanes'] = [
  { name: 'main', kind: 'key', ceiling: 60, windowSec: 60 },
  { name: 'token endpoint', kind: 'token-endpoint', ceiling: 20, windowSec: 60 },
  { name: 'no key', kind: 'none' },
];

function timeline(requests: RunTimeline['requests'], tokens: RunTimeline['tokens'] = []): RunTimeline {
  return { version: 1, startedAt: '2025-03-01T10:00:00.000Z', requests, retryAfter: [], waits: [], tokens, lanes: LANES, tokenLifetimeSec: 300, checks: {} };
}

describe('compactTimeline', () => {
  test('stores requests as columns sorted by send: gaps, durations, runs of lane and status, evidence ids only', () => {
    const tl = timeline(
      [
        [300, 7, 0, 200, 'x-000003'],
        [100, 5, 0, 200, 'x-000001'],
        [150, 9, 0, 200, 'x-000002'],
        [900, 11, 0, 429, 'x-000004'],
        [950, 2, 1, 200, 'x-000005'],
      ],
      [[950, 0, 300_950, 'x-000005']],
    );
    const c = compactTimeline(tl, new Set(['x-000002', 'x-000004']));
    expect(c.requests).toEqual({
      sent: [100, 50, 150, 600, 50],
      ms: [5, 9, 7, 11, 2],
      answers: [0, 200, 3, 0, 429, 1, 1, 200, 1],
      exchanges: { '1': 'x-000002', '3': 'x-000004' },
    });
    // A token's exchange id is kept only when it is evidence.
    expect(c.tokens).toEqual([[950, 0, 300_950]]);
    expect(expandRequests(c)).toEqual([
      [100, 5, 0, 200, undefined],
      [150, 9, 0, 200, 'x-000002'],
      [300, 7, 0, 200, undefined],
      [900, 11, 0, 429, 'x-000004'],
      [950, 2, 1, 200, undefined],
    ]);
  });

  test('an empty run has empty columns', () => {
    expect(compactTimeline(timeline([]), new Set()).requests).toEqual({ sent: [], ms: [], answers: [], exchanges: {} });
  });
});

describe('the timeline in report.json', () => {
  const doc = buildReport(syntheticRun(40));

  test('validates against the schema and writes each member on one line', () => {
    expect(doc.formatVersion).toBe('2.1');
    expect(reportSchemaErrors(JSON.parse(renderJson(doc)))).toEqual([]);
    const text = renderJson(doc);
    const start = text.indexOf('  "timeline": {');
    const lines = text.slice(start).trimEnd().split('\n');
    expect(lines.map((l) => l.trim().split(':')[0])).toEqual([
      '"timeline"',
      '"version"',
      '"startedAt"',
      '"requests"',
      '"retryAfter"',
      '"waits"',
      '"tokens"',
      '"lanes"',
      '"tokenLifetimeSec"',
      '"checks"',
      '}',
      '}',
    ]);
  });

  test('keeps every request and the exchange ids of the evidence', () => {
    const rows = expandRequests(doc.timeline!);
    const source = syntheticTimeline(syntheticRun(40).checks);
    expect(rows.map((r) => r.slice(0, 4))).toEqual([...source.requests].sort((a, b) => a[0] - b[0]).map((r) => r.slice(0, 4)));
    const ids = rows.map((r) => r[4]).filter((id): id is string => id !== undefined);
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) expect(doc.exchanges[id]).toBeDefined();
  });

  test('a malformed timeline names the field', () => {
    const bad = JSON.parse(renderJson(doc));
    bad.timeline.waits.push([1, 0, 5, 'nap']);
    expect(reportSchemaErrors(bad).join('\n')).toMatch(/timeline\.waits\.3\.3/);
  });
});
