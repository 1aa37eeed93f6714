import { describe, expect, it } from 'vitest';
import { AsyncLocalStorage } from 'node:async_hooks';
import { DETACH_KEY, episode, pacingFigures, renderPacing, requiredWaitsSec, sendingWindows, type RunStats } from '../../src/engine/schedule.js';

const SPEC = { perKeyPerWindow: 60, windowSec: 60, tokenLifetimeSec: 300, tokenIssuancePerWindow: 20 };
const stats = (paced: Record<string, number>, tokenRequests = 10): RunStats => ({
  requests: Object.values(paced).reduce((a, b) => a + b, 0) + tokenRequests,
  unplanned429: 0,
  pacedByClient: paced,
  tokenRequests,
  limits: SPEC,
});
/** The sliding-window scenario (1.5 windows), the excess and issuance episodes (1 each). */
const ALL = [1.5, 1, 1];

describe('lower bound of a run', () => {
  it('is the token lifetime when the traffic is light', () => {
    const f = pacingFigures(stats({ main: 60 }), 330_000, ALL);
    expect(f).toMatchObject({ boundS: 300, boundBy: 'token lifetime', ratio: 1.1 });
  });

  it("is the paced requests at one key's rate plus the sliding scenario's 1.5 windows when the traffic is heavy", () => {
    // 420 paced requests at 60 a window: the first 60 leave at once, the last after 6 windows.
    const f = pacingFigures(stats({ main: 400, 'second-org': 20 }), 600_000, ALL);
    expect(f.boundBy).toBe('request pacing');
    expect(f.boundS).toBe(360 + 90);
    expect(f.pacedRequests).toBe(420);
    expect(f.ratio).toBeCloseTo(600 / 450, 3);
  });

  it('counts the windows before the last request can leave', () => {
    expect([0, 1, 60, 61, 120, 121, 406].map((n) => sendingWindows(n, 60))).toEqual([0, 0, 0, 1, 1, 2, 6]);
    expect(sendingWindows(5, 0)).toBe(4);
  });

  it('is the issuance limit when tokens dominate', () => {
    // 140 token requests at 20 a window: the last after 6 windows.
    expect(pacingFigures(stats({ main: 10 }, 140), 400_000, ALL)).toMatchObject({ boundS: 360, boundBy: 'token issuance' });
  });

  it("does not add to the pacing the waits of episodes that ran beside the paced requests (on another organization's key)", () => {
    // The key episodes (2 windows) overlapped the paced requests; the issuance episode (1 window) did not.
    const f = pacingFigures(stats({ main: 400 }), 480_000, [1], [2, 1, 1.5]);
    expect(f).toMatchObject({ boundBy: 'request pacing', boundS: 360 + 60, requiredWaitsS: 60, overlappedWaitsS: 120, boundAllSerialS: 360 + 120 });
    expect(f.ratio).toBeCloseTo(480 / 420, 3);
    expect(renderPacing(f)).toContain('120 s more beside the paced requests; 480 s with every wait added');
    // Light traffic: the overlapped waits alone can decide the bound.
    expect(pacingFigures(stats({ main: 20 }), 400_000, [], [6]).boundBy).toBe('overlapped waits');
  });

  it('counts only the waits of the exhaustion checks that ran', () => {
    expect(requiredWaitsSec(60, ALL)).toBe(90);
    expect(requiredWaitsSec(60, [1])).toBe(60);
    expect(requiredWaitsSec(60, [])).toBe(0);
  });

  it('renders one line with the bound and the ratio', () => {
    const line = renderPacing(pacingFigures(stats({ main: 60 }), 330_000, ALL));
    expect(line).toMatch(/^pacing: 330 s for 70 requests .*lower bound 300 s \(token lifetime.*ratio 1\.1$/);
  });
});

describe('episode', () => {
  it('starts once per key and gives every caller the same promise', async () => {
    const shared = new Map<string, unknown>();
    let starts = 0;
    const run = () => episode(shared, 'e', async () => ++starts);
    const [a, b] = [run(), run()];
    expect(a).toBe(b);
    expect(await a).toBe(1);
    expect(starts).toBe(1);
  });

  it('runs detached from the check that started it', async () => {
    const als = new AsyncLocalStorage<string>();
    const shared = new Map<string, unknown>([[DETACH_KEY, <T>(fn: () => Promise<T>) => als.exit(fn)]]);
    const seen = await als.run('check-a', () => episode(shared, 'e', async () => als.getStore()));
    expect(seen).toBeUndefined();
  });

  it('a failure reaches the checks that await it, and is no unhandled rejection before that', async () => {
    const shared = new Map<string, unknown>();
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      episode(shared, 'e', async () => {
        throw new Error('boom');
      });
      await new Promise((r) => setTimeout(r, 10));
      await expect(episode(shared, 'e', async () => 1)).rejects.toThrow('boom');
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
