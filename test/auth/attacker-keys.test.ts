import { describe, expect, it } from 'vitest';
import { onLoopback, serveAttackerKeys } from '../../suites/auth/attacker-keys.js';

describe('the attacker key set the jku forgery points to', () => {
  it('is tried on targets of this machine only', () => {
    expect(onLoopback('http://127.0.0.1:8080')).toBe(true);
    expect(onLoopback('https://localhost/base')).toBe(true);
    expect(onLoopback('http://[::1]:9000')).toBe(true);
    expect(onLoopback('https://fhir.example.org')).toBe(false);
    expect(onLoopback('not a url')).toBe(false);
  });

  it('serves its key set on 127.0.0.1, counts the fetches, and closes', async () => {
    const hosted = await serveAttackerKeys({ keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', kid: 'k' }] });
    try {
      expect(hosted.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/attacker\/jwks\.json$/);
      const res = await fetch(hosted.url);
      expect(await res.json()).toEqual({ keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', kid: 'k' }] });
      expect((await fetch(hosted.url.replace('jwks.json', 'other'))).status).toBe(404);
      expect(hosted.fetches()).toBe(1);
    } finally {
      await hosted.close();
    }
    await expect(fetch(hosted.url)).rejects.toThrow();
  });
});
