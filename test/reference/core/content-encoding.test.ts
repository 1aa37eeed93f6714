/** Mode contentEncoding=gzip: answers gzipped whenever the request's Accept-Encoding allows it, never otherwise. */
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { describe, expect, test } from 'vitest';
import { acceptsGzip } from '../../../src/reference/server.js';
import { startStub } from './helpers.js';

describe('contentEncoding', () => {
  test('acceptsGzip reads codings and q values', () => {
    expect(acceptsGzip('gzip, deflate, br')).toBe(true);
    expect(acceptsGzip('br;q=1, GZIP;q=0.5')).toBe(true);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('identity')).toBe(false);
    expect(acceptsGzip(undefined)).toBe(false);
  });

  test('gzip: the same JSON, gzipped with Content-Encoding and Vary, only when asked', async () => {
    const plain = await startStub();
    const gz = await startStub({ modes: { contentEncoding: 'gzip' } });
    try {
      const asIs = await request(`${plain.url}/openapi.json`, { headers: { 'accept-encoding': 'gzip' } });
      expect(asIs.headers['content-encoding']).toBeUndefined();
      await asIs.body.text();
      const notAsked = await request(`${gz.url}/openapi.json`);
      expect(notAsked.headers['content-encoding']).toBeUndefined();
      const expected = JSON.parse(await notAsked.body.text()) as unknown;
      expect(expected).toMatchObject({ openapi: '3.0.3' });

      const zipped = await request(`${gz.url}/openapi.json`, { headers: { 'accept-encoding': 'gzip, deflate' } });
      expect([zipped.headers['content-encoding'], zipped.headers.vary]).toEqual(['gzip', 'Accept-Encoding']);
      const bytes = Buffer.from(await zipped.body.arrayBuffer());
      expect(Number(zipped.headers['content-length'])).toBe(bytes.length);
      expect(JSON.parse(gunzipSync(bytes).toString('utf8'))).toEqual(expected);

      const refused = await request(`${gz.url}/openapi.json`, { headers: { 'accept-encoding': 'gzip;q=0, identity' } });
      expect(refused.headers['content-encoding']).toBeUndefined();
      expect(JSON.parse(await refused.body.text())).toEqual(expected);
    } finally {
      await plain.close();
      await gz.close();
    }
  });
});
