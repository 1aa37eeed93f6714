/**
 * The in-process transport (src/http/in-process.ts): a handler answers as it would over a socket
 * (HEAD, 204 and 304 without a body, the Host the client names), an abort and a handler that gives
 * no answer end as the network's failures do, and a request to another origin still goes over the network.
 */
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { ConformanceError } from '../../src/errors.js';
import { HttpClient } from '../../src/http/client.js';
import { type Handler, InProcessAbort, sendInProcess, type InProcessTarget } from '../../src/http/in-process.js';
import { SERVICE_HTTP } from '../../src/service/http.js';
import { startServer, type TestServer } from './servers.js';

const ORIGIN = 'http://127.0.0.1:1';

function target(handle: Handler): InProcessTarget {
  return { origin: ORIGIN, handle };
}

const echo = target((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const status = Number(/status=(\d+)/.exec(req.url ?? '')?.[1] ?? 200);
    const body = JSON.stringify({
      method: req.method,
      url: req.url,
      host: req.headers.host,
      ip: req.socket.remoteAddress,
      body: Buffer.concat(chunks).toString(),
    });
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) });
    res.end(body);
  });
});

const never = new AbortController().signal;

describe('sendInProcess', () => {
  it('gives the handler the method, path, body, the origin as Host and 127.0.0.1 as the peer', async () => {
    const a = await sendInProcess(echo, { method: 'POST', path: '/fhir/R4/Encounter?x=1', headers: { 'content-type': 'text/plain' }, body: 'hi' }, never);
    expect(a.status).toBe(200);
    expect(JSON.parse(a.payload.toString())).toEqual({ method: 'POST', url: '/fhir/R4/Encounter?x=1', host: '127.0.0.1:1', ip: '127.0.0.1', body: 'hi' });
    expect(a.headers['content-type']).toBe('application/json');
  });

  it('carries no body for HEAD, 204 and 304, as a connection would', async () => {
    for (const [method, path] of [
      ['HEAD', '/x'],
      ['GET', '/x?status=204'],
      ['GET', '/x?status=304'],
    ] as const) {
      const a = await sendInProcess(echo, { method, path, headers: {} }, never);
      expect(a.payload.length, `${method} ${path}`).toBe(0);
    }
    expect((await sendInProcess(echo, { method: 'GET', path: '/x?status=404', headers: {} }, never)).payload.length).toBeGreaterThan(0);
  });

  it('rejects on an abort before the answer', async () => {
    const c = new AbortController();
    const pending = sendInProcess(
      target(() => undefined),
      { method: 'GET', path: '/', headers: {} },
      c.signal,
    );
    c.abort();
    await expect(pending).rejects.toBeInstanceOf(InProcessAbort);
    await expect(sendInProcess(echo, { method: 'GET', path: '/', headers: {} }, c.signal)).rejects.toBeInstanceOf(InProcessAbort);
  });
});

describe('an HttpClient with an in-process target', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const client = (inProcess: InProcessTarget, baseUrl = ORIGIN, timeoutMs?: number) =>
    new HttpClient({ baseUrl, protocol: SERVICE_HTTP, network: { inProcess }, ...(timeoutMs ? { timeoutMs } : {}) });

  it('sends its origin to the handler and records the exchange as over HTTP', async () => {
    const c = client(echo);
    const res = await c.request({ method: 'POST', url: '/p', body: { a: 1 }, retry: 'none' });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ method: 'POST', url: '/p', host: '127.0.0.1:1' });
    expect(JSON.parse((res.json as { body: string }).body)).toEqual({ a: 1 });
    expect(res.exchange.response?.status).toBe(200);
    await c.close();
  });

  it('decodes a gzipped answer', async () => {
    const c = client(
      target((_req, res) => {
        const body = gzipSync(JSON.stringify({ zipped: true }));
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', 'Content-Length': String(body.length) });
        res.end(body);
      }),
    );
    expect((await c.request({ url: '/z', retry: 'none' })).json).toEqual({ zipped: true });
    await c.close();
  });

  it('caps a body at maxBodyBytes as the network path does, plain or gzipped', async () => {
    const text = 'x'.repeat(5000);
    for (const zipped of [false, true]) {
      const c = client(
        target((_req, res) => {
          const body = zipped ? gzipSync(text) : Buffer.from(text);
          res.writeHead(200, { 'Content-Type': 'text/plain', ...(zipped ? { 'Content-Encoding': 'gzip' } : {}), 'Content-Length': String(body.length) });
          res.end(body);
        }),
      );
      const cut = await c.request({ url: '/big', retry: 'none', maxBodyBytes: 1000 });
      expect([cut.bodyTruncated, cut.text.length], `gzipped: ${zipped}`).toEqual([true, 1000]);
      const whole = await c.request({ url: '/big', retry: 'none', maxBodyBytes: 5000 });
      expect([whole.bodyTruncated, whole.text], `gzipped: ${zipped}`).toEqual([false, text]);
      await c.close();
    }
  });

  it('a handler that never answers times out as a silent server does (ERR_TIMEOUT)', async () => {
    const c = client(
      target(() => undefined),
      ORIGIN,
      200,
    );
    const e = await c.request({ url: '/hang', retry: 'none' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ConformanceError);
    expect((e as ConformanceError).code).toBe('ERR_TIMEOUT');
    await c.close();
  });

  it('a handler that drops the connection gives ERR_PROTOCOL', async () => {
    const c = client(target((req) => req.socket.destroy(new Error('dropped'))));
    const e = await c.request({ url: '/drop', retry: 'none' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ConformanceError);
    expect((e as ConformanceError).code).toBe('ERR_PROTOCOL');
    await c.close();
  });

  it('a request to another origin goes over the network', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"network":true}');
    });
    const c = client(echo, server.url);
    expect((await c.request({ url: '/n', retry: 'none' })).json).toEqual({ network: true });
    await c.close();
  });
});

describe('the embedded reference in-process and over its socket', () => {
  it('gives the same status, header names and body to the same requests', async () => {
    const { createReferenceServer } = await import('../../src/reference/index.js');
    const { request } = await import('undici');
    const reference = await createReferenceServer({});
    try {
      const cases: [string, string, Record<string, string>, string?][] = [
        ['GET', '/fhir/R4/metadata', {}],
        ['HEAD', '/fhir/R4/metadata', {}],
        ['GET', '/fhir/R4/Nothing', {}],
        ['POST', '/fhir/R4/Encounter', { 'content-type': 'application/fhir+json' }, '{"resourceType":"Encounter"}'],
        ['POST', '/oauth/token', { 'content-type': 'application/x-www-form-urlencoded' }, 'grant_type=client_credentials'],
      ];
      // A connection's own headers (node closes one after a HEAD's 405) and the values of each answer's own.
      const varying = new Set(['x-correlation-id', 'x-ratelimit-remaining', 'date', 'connection', 'keep-alive']);
      for (const [method, path, headers, body] of cases) {
        const wire = await request(`${reference.url}${path}`, { method: method as 'GET', headers, ...(body !== undefined ? { body } : {}) });
        const wireBody = await wire.body.text();
        const local = await sendInProcess(reference.inProcess, { method, path, headers, ...(body !== undefined ? { body } : {}) }, never);
        const names = (h: Record<string, unknown>) =>
          Object.keys(h)
            .filter((n) => n !== 'connection' && n !== 'keep-alive')
            .sort();
        expect([local.status, names(local.headers), local.payload.toString()], `${method} ${path}`).toEqual([wire.statusCode, names(wire.headers), wireBody]);
        for (const [name, value] of Object.entries(wire.headers))
          if (!varying.has(name)) expect(local.headers[name], `${method} ${path} ${name}`).toEqual(value);
        expect(Number.isNaN(Date.parse(String(local.headers.date))), 'Date').toBe(false);
      }
    } finally {
      await reference.close();
    }
  });

  it('adds the keep-alive node announces when the handler sets no Connection', async () => {
    const plain = await sendInProcess({ ...echo, keepAliveS: 65 }, { method: 'GET', path: '/', headers: {} }, never);
    expect([plain.headers.connection, plain.headers['keep-alive']]).toEqual(['keep-alive', 'timeout=65']);
    const closing = await sendInProcess(
      {
        origin: ORIGIN,
        keepAliveS: 65,
        handle: (_req, res) => {
          res.writeHead(413, { Connection: 'close' });
          res.end('');
        },
      },
      { method: 'GET', path: '/', headers: {} },
      never,
    );
    expect([closing.headers.connection, closing.headers['keep-alive']]).toEqual(['close', undefined]);
  });
});
