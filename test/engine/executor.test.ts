/**
 * The token lane of the executor (laneSequence): in the paced slot, a check that only talks to
 * the token endpoint waits in a queue while the issuance window has no room for it, runs in the
 * main key's waits, and whatever is still queued runs before the next slot.
 */
import { describe, expect, it } from 'vitest';
import { LANE_PULL_MS, laneSequence } from '../../src/engine/executor.js';

type Entry = { paced: boolean; tokens: number };

/** Runs the sequence, calling `after(index)` once each check has run (it changes the lane's state). */
function drain(entries: Entry[], lane: { room: () => number; mainWaitMs: () => number; reserve: number }, after: (i: number) => void = () => {}): number[] {
  const next = laneSequence(entries, lane);
  const order: number[] = [];
  for (let step = next(); step; step = next()) {
    order.push(step.index);
    after(step.index);
  }
  return order;
}

const main: Entry = { paced: true, tokens: 0 };
const auth: Entry = { paced: true, tokens: 1 };
const late: Entry = { paced: false, tokens: 0 };

describe('laneSequence', () => {
  it('keeps plan order when the issuance window has room and the main key never waits', () => {
    const entries = [late, main, auth, main, auth, late];
    expect(drain(entries, { room: () => 20, mainWaitMs: () => 0, reserve: 3 })).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('queues a token-only check while the window lacks room for it and its reserve, and runs it once room returns', () => {
    let room = 3; // exactly the reserve: no room for a token-only check
    const entries = [main, auth, main, main, late];
    const order = drain(entries, { room: () => room, mainWaitMs: () => 0, reserve: 3 }, (i) => {
      if (i === 2) room = 10; // the window frees after check 2
    });
    expect(order).toEqual([0, 2, 1, 3, 4]);
  });

  it('runs what is still queued at the end of the slot, before any later check, even without room', () => {
    const entries = [main, auth, auth, main, late, late];
    expect(drain(entries, { room: () => 0, mainWaitMs: () => 0, reserve: 3 })).toEqual([0, 3, 1, 2, 4, 5]);
  });

  it('runs the queue at the end of a plan that ends with the paced slot', () => {
    expect(drain([auth, main], { room: () => 0, mainWaitMs: () => 0, reserve: 1 })).toEqual([1, 0]);
  });

  it('pulls later token-only checks of the slot into a wait of the main key, never past the slot', () => {
    let wait = LANE_PULL_MS + 1;
    const entries = [main, main, main, auth, auth, late, auth];
    const order = drain(entries, { room: () => 20, mainWaitMs: () => wait, reserve: 3 }, (i) => {
      if (i === 4) wait = 0; // the key's window opens after the second pulled check
    });
    // Check 0 is a main-key check about to wait: the slot's token-only checks run first, in plan order.
    expect(order).toEqual([3, 4, 0, 1, 2, 5, 6]);
  });

  it('does not pull a token-only check for a short wait of the main key', () => {
    const entries = [main, auth];
    expect(drain(entries, { room: () => 20, mainWaitMs: () => LANE_PULL_MS, reserve: 3 })).toEqual([0, 1]);
  });

  it('keeps the reserve while a check that may ask for exact-scope tokens is left, and gives it to token-only checks after', () => {
    const room = 3; // exactly the reserve
    const asker = { paced: true, tokens: 0, asks: true };
    const covering = { paced: true, tokens: 0, asks: false };
    // A token-only check queues while the asker is still to run, and runs right after it.
    expect(drain([auth, asker, covering, late], { room: () => room, mainWaitMs: () => 0, reserve: 3 })).toEqual([1, 0, 2, 3]);
    // Without an asker left it fits at once.
    expect(drain([auth, covering, late], { room: () => room, mainWaitMs: () => 0, reserve: 3 })).toEqual([0, 1, 2]);
  });

  it('never moves a check outside the paced slot', () => {
    const entries = [late, { paced: false, tokens: 0 }, main];
    expect(drain(entries, { room: () => 0, mainWaitMs: () => 10_000, reserve: 3 })).toEqual([0, 1, 2]);
  });
});
