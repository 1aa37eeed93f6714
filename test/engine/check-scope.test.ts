/**
 * The runtimes of a process share one AsyncLocalStorage (src/engine/runtime.ts, CheckScope): each
 * sees only the stores it set, across awaits, while other runs go on beside it.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { CheckRecorder } from '../../src/engine/context.js';
import { CheckScope } from '../../src/engine/runtime.js';

const store = (check: string) => ({ recorder: new CheckRecorder(), check });

describe('CheckScope', () => {
  it("each runtime's scope reads its own store across awaits, never another's, and none outside a run", async () => {
    const a = new CheckScope();
    const b = new CheckScope();
    const seen: Array<[string, string | undefined, string | undefined]> = [];
    const work = (label: string, scope: CheckScope, ms: number) =>
      scope.run(store(label), async () => {
        await delay(ms);
        seen.push([label, a.getStore()?.check, b.getStore()?.check]);
        await delay(ms);
        seen.push([label, a.getStore()?.check, b.getStore()?.check]);
      });
    await Promise.all([work('a1', a, 5), work('b1', b, 3), work('a2', a, 2)]);
    expect(seen.sort()).toEqual([
      ['a1', 'a1', undefined],
      ['a1', 'a1', undefined],
      ['a2', 'a2', undefined],
      ['a2', 'a2', undefined],
      ['b1', undefined, 'b1'],
      ['b1', undefined, 'b1'],
    ]);
    expect(a.getStore()).toBeUndefined();
    expect(b.getStore()).toBeUndefined();
  });

  it('a run inside a run of the same scope sees the inner store, then the outer one again', async () => {
    const a = new CheckScope();
    await a.run(store('outer'), async () => {
      await a.run(store('inner'), async () => {
        await delay(1);
        expect(a.getStore()?.check).toBe('inner');
      });
      expect(a.getStore()?.check).toBe('outer');
    });
  });
});
