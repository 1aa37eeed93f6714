import { describe, expect, it } from 'vitest';
import { targetTimeout, timeoutCapMs } from '../../src/http/target-timeout.js';

function busy(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until);
}

/** Resolves with the ms from start to expiry. */
function expiry(timeoutMs: number, capMs: number): { started: number; expired: Promise<number> } {
  const started = Date.now();
  let done!: (ms: number) => void;
  const expired = new Promise<number>((r) => {
    done = r;
  });
  targetTimeout(timeoutMs, capMs, () => done(Date.now() - started));
  return { started, expired };
}

describe('targetTimeout: the target time a request waited, not the process stalls', () => {
  it('expires after the timeout when the process was idle (waiting for the target)', async () => {
    const ms = await expiry(150, 1000).expired;
    expect(ms).toBeGreaterThanOrEqual(145);
    expect(ms).toBeLessThan(600);
  });

  it('does not count a blocked event loop: the idle time still owed is waited after it', async () => {
    const { expired } = expiry(150, 5000);
    busy(400);
    const ms = await expired;
    // 400 ms busy, then ~150 ms idle: a plain timer would have fired at 400.
    expect(ms).toBeGreaterThanOrEqual(520);
  });

  it('ends at the wall-clock cap even while the loop never idles', async () => {
    const { expired } = expiry(100, 300);
    let stop = false;
    const spin = () => {
      if (stop) return;
      busy(20);
      setImmediate(spin);
    };
    spin();
    const ms = await expired;
    stop = true;
    expect(ms).toBeGreaterThanOrEqual(295);
    expect(ms).toBeLessThan(1500);
  });

  it('clear() stops it', async () => {
    let fired = false;
    targetTimeout(50, 200, () => {
      fired = true;
    }).clear();
    await new Promise((r) => setTimeout(r, 120));
    expect(fired).toBe(false);
  });

  it('the cap is four timeouts', () => {
    expect(timeoutCapMs(15_000)).toBe(60_000);
  });
});
