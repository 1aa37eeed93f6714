/**
 * The quick profile's reference (src/run/embedded.ts QUICK_LIMITS): a 64 KiB document maximum,
 * declared in its config, so the size checks send 64 KiB documents (the spec shows no value); a
 * run's own `--limit documentMaxBytes` still wins, and other profiles keep the reference's 1 MiB.
 */
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../../src/run/in-process.js';
import checks from '../../suites/document-reference/checks.js';

const maximum = checks.filter((c) => c.id === 'document-reference.size-maximum');

async function declared(opts: Parameters<typeof runInProcess>[1]): Promise<unknown> {
  const result = (await runInProcess(maximum, opts)).get('document-reference.size-maximum');
  return result?.observations?.find((o) => o.key === 'document-reference.size-maximum')?.value;
}

describe('the quick profile reference', () => {
  it('declares a 64 KiB document maximum; --limit documentMaxBytes overrides it', async () => {
    expect(await declared({ profile: 'quick' })).toEqual({ bytes: 65536, from: 'config documentReference.maxBytes' });
    expect(await declared({ profile: 'quick', limits: { documentMaxBytes: 100_000 } })).toEqual({ bytes: 100_000, from: 'config documentReference.maxBytes' });
  });

  it('is quick only: a full run declares no maximum of its own', async () => {
    const value = await declared({ profile: 'full' });
    expect(value).not.toEqual(expect.objectContaining({ from: 'config documentReference.maxBytes' }));
  });
});
