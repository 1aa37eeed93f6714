/** Test clients with freshly generated keys (never the reference fixtures' keys). */
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import type { ResolvedClient } from '../../src/config/index.js';

/** A private key that signs `alg`: RSA 2048, EC on the algorithm's curve, or Ed25519. */
export function testKey(alg: ResolvedClient['alg']): KeyObject {
  if (alg === 'EdDSA') return generateKeyPairSync('ed25519').privateKey;
  if (alg.startsWith('ES')) return generateKeyPairSync('ec', { namedCurve: { ES256: 'P-256', ES384: 'P-384', ES512: 'P-521' }[alg as 'ES256'] }).privateKey;
  return generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
}

export function testClient(role: ResolvedClient['role'], alg: ResolvedClient['alg'] = 'ES384', clientId = `client-${role}`): ResolvedClient {
  const privateKey = testKey(alg);
  const kid = `kid-${clientId}`;
  const publicJwk = { ...(createPublicKey(privateKey).export({ format: 'jwk' }) as JWK), kid, alg, use: 'sig' };
  return { role, clientId, kid, alg, algs: [alg], algSource: 'config', privateKey, publicJwk, rateLimitPerMinute: 60, keySource: { env: 'UNUSED' } };
}

/**
 * Virtual time: `sleep` registers a timer; `run` lets all pending work settle, then jumps to the
 * earliest timer, until the awaited promise settles (bounded).
 */
export class FakeClock {
  t = 1_000_000;
  private timers: { at: number; resolve: () => void }[] = [];
  now = (): number => this.t;
  sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      this.timers.push({ at: this.t + Math.max(0, ms), resolve });
    });

  async run<T>(work: Promise<T>): Promise<T> {
    let settled = false;
    work.then(
      () => (settled = true),
      () => (settled = true),
    );
    for (let i = 0; i < 100_000 && !settled; i++) {
      await new Promise((r) => setImmediate(r));
      if (settled || this.timers.length === 0) continue;
      this.timers.sort((a, b) => a.at - b.at);
      const next = this.timers.shift()!;
      this.t = Math.max(this.t, next.at);
      next.resolve();
    }
    return work;
  }
}
