import { describe, expect, it } from 'vitest';
import { FetchJsonError, fetchJson } from '../../src/http/fetch-json.js';
import { startServer } from './servers.js';

describe('fetchJson: one JSON request over node:http', () => {
  it('gives the status, the parsed body and the text; sends the method and headers', async () => {
    const seen: string[] = [];
    const server = await startServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.accept}`);
      res.writeHead(201, { 'Content-Type': 'application/json' }).end('{"a":1}');
    });
    try {
      const answer = await fetchJson(`${server.url}/x?y=1`, { method: 'POST', headers: { accept: 'application/json' }, timeoutMs: 2000 });
      expect(answer).toEqual({ status: 201, json: { a: 1 }, text: '{"a":1}' });
      expect(seen).toEqual(['POST /x?y=1 application/json']);
    } finally {
      await server.close();
    }
  });

  it('leaves json undefined for a body that is not JSON, and follows no redirect', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/moved') res.writeHead(302, { Location: '/there' }).end('see /there');
      else res.writeHead(200).end('{"followed":true}');
    });
    try {
      const answer = await fetchJson(`${server.url}/moved`, { timeoutMs: 2000 });
      expect(answer).toEqual({ status: 302, json: undefined, text: 'see /there' });
    } finally {
      await server.close();
    }
  });

  it('refuses an answer over maxBytes (TOO_LARGE) and one slower than the timeout (TIMEOUT)', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/big') res.writeHead(200).end(JSON.stringify({ pad: 'x'.repeat(5000) }));
      else setTimeout(() => res.writeHead(200).end('{}'), 1500);
    });
    try {
      await expect(fetchJson(`${server.url}/big`, { timeoutMs: 2000, maxBytes: 1000 })).rejects.toMatchObject({ name: 'FetchJsonError', code: 'TOO_LARGE' });
      const started = Date.now();
      await expect(fetchJson(`${server.url}/slow`, { timeoutMs: 100 })).rejects.toMatchObject({ name: 'FetchJsonError', code: 'TIMEOUT' });
      expect(Date.now() - started).toBeLessThan(1400);
    } finally {
      await server.close();
    }
  });

  it('reports a refused connection as NETWORK, with the cause', async () => {
    const server = await startServer((_req, res) => {
      res.end();
    });
    const url = server.url;
    await server.close();
    const error = await fetchJson(url, { timeoutMs: 2000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchJsonError);
    expect((error as FetchJsonError).code).toBe('NETWORK');
    expect((error as FetchJsonError).cause).toMatchObject({ code: 'ECONNREFUSED' });
  });
});
