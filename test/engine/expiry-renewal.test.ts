/**
 * renewExpiredProbe: the new token after the probe token's expiry is issued once, and never
 * before the probe token has expired (the issuance episode calls it before its bursts).
 */
import { describe, expect, it, vi } from 'vitest';
import { EXPIRY_PROBE_KEY, type ExpiryProbe, PROBE_EXPIRED_AFTER_MS, renewExpiredProbe } from '../../src/engine/runtime.js';
import type { TokenBrokerApi } from '../../src/auth/types.js';

function contextWith(probe: ExpiryProbe | undefined) {
  const freshToken = vi.fn(async (_role: string, _scopes: string[]) => 'renewed-token');
  const shared = new Map<string, unknown>(probe ? [[EXPIRY_PROBE_KEY, probe]] : []);
  return { ctx: { shared, tokens: { freshToken } as unknown as TokenBrokerApi }, freshToken };
}

const probeIssued = (agoMs: number, lifetimeMs = 10_000): ExpiryProbe => ({
  issuedAt: Date.now() - agoMs,
  lifetimeMs,
  probeUrl: '/fhir/R4/MedicationRequest/x',
  scopes: ['system/MedicationRequest.rs'],
});

describe('renewExpiredProbe', () => {
  it('issues nothing while the probe token may still be valid', async () => {
    const probe = probeIssued(10_000 + PROBE_EXPIRED_AFTER_MS - 500);
    const { ctx, freshToken } = contextWith(probe);
    await renewExpiredProbe(ctx);
    expect(freshToken).not.toHaveBeenCalled();
    expect(probe.renewed).toBeUndefined();
  });

  it('issues one token of the probe client and scopes once it has expired, and only once', async () => {
    const probe = probeIssued(10_000 + PROBE_EXPIRED_AFTER_MS + 100);
    const { ctx, freshToken } = contextWith(probe);
    await renewExpiredProbe(ctx);
    await renewExpiredProbe(ctx);
    expect(freshToken.mock.calls).toEqual([['main', ['system/MedicationRequest.rs']]]);
    expect((await probe.renewed)?.token).toBe('renewed-token');
  });

  it('does nothing in a run without an expiry probe', async () => {
    const { ctx, freshToken } = contextWith(undefined);
    await renewExpiredProbe(ctx);
    expect(freshToken).not.toHaveBeenCalled();
  });
});
