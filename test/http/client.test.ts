import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Exchange, ExchangeFacts } from '../../src/http/types.js';
import { ConformanceError } from '../../src/errors.js';
import { HttpClient } from '../../src/http/client.js';
import { registerSecret } from '../../src/redact.js';
import { conformingHeaders, startServer, type TestServer } from './servers.js';
import { SERVICE_HTTP } from '../../src/service/http.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function serve(handler: Parameters<typeof startServer>[0]): Promise<TestServer> {
  const s = await startServer(handler);
  cleanups.push(() => s.close());
  return s;
}

function client(baseUrl: string, extra: Partial<ConstructorParameters<typeof HttpClient>[0]> = {}) {
  const exchanges: Array<{ ex: Exchange; facts: ExchangeFacts }> = [];
  const c = new HttpClient({ baseUrl, onExchange: (ex, facts) => exchanges.push({ ex, facts }), protocol: SERVICE_HTTP, ...extra });
  cleanups.push(() => c.close());
  return { c, exchanges };
}

async function expectCode(p: Promise<unknown>, code: string): Promise<ConformanceError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ConformanceError);
  expect((e as ConformanceError).code).toBe(code);
  return e as ConformanceError;
}

describe('HttpClient: exchange recording and redaction', () => {
  it('records a bearer request with $TOKEN in headers and curl, and redacts a token response', async () => {
    const token = 'opaque-access-token-123456';
    const s = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', ...conformingHeaders() });
      res.end(JSON.stringify({ access_token: 'issued-token-abcdefgh', token_type: 'bearer', echo: req.headers.authorization }));
    });
    const { c, exchanges } = client(s.url);
    const r = await c.request({ url: '/fhir/R4/Encounter?status=planned', token, client: 'main' });
    expect(r.status).toBe(200);
    expect((r.json as { access_token: string }).access_token).toBe('issued-token-abcdefgh');
    expect(exchanges).toHaveLength(1);
    const ex = exchanges[0].ex;
    expect(ex.id).toBe('x-000001');
    expect(ex.client).toBe('main');
    expect(ex.request.url).toBe(`${s.url}/fhir/R4/Encounter?status=planned`);
    expect(ex.request.headers.authorization).toBe('Bearer $TOKEN');
    expect(ex.curl).toContain('-H "authorization: Bearer $TOKEN"');
    expect(ex.curl).toContain(`'${s.url}/fhir/R4/Encounter?status=planned'`);
    const body = JSON.parse(ex.response!.body!) as Record<string, string>;
    expect(body.access_token).toBe('[redacted]');
    expect(body.echo).toBe('Bearer [redacted]');
    expect(JSON.stringify(ex)).not.toContain(token);
    expect(ex.response!.bodyBytes).toBeGreaterThan(0);
  });

  it('sends forms and redacts client_assertion, secretFields and registered secrets', async () => {
    let received = '';
    let contentType = '';
    const s = await serve((req, res) => {
      received = req.body;
      contentType = req.headers['content-type'] ?? '';
      res.writeHead(400, { 'content-type': 'application/json', ...conformingHeaders() });
      res.end(JSON.stringify({ error: 'invalid_client', note: 'client secret was very-secret-value-42' }));
    });
    registerSecret('very-secret-value-42');
    const assertion = 'eyJhbGciOiJFUzM4NCJ9.eyJpc3MiOiJ4In0.c2lnbmF0dXJl';
    const { c, exchanges } = client(s.url);
    await c.request({
      method: 'POST',
      url: '/auth/token',
      form: { grant_type: 'client_credentials', client_assertion: assertion, client_secret: 'very-secret-value-42', scope: 'system/Encounter.rs' },
      secretFields: ['client_secret'],
    });
    expect(contentType).toBe('application/x-www-form-urlencoded');
    expect(received).toContain('client_assertion=eyJ');
    const ex = exchanges[0].ex;
    expect(ex.request.body).toBe('grant_type=client_credentials&client_assertion=[redacted]&client_secret=[redacted]&scope=system%2FEncounter.rs');
    expect(ex.curl).toContain("--data-binary 'grant_type=client_credentials&client_assertion=[redacted]");
    expect(ex.response!.body).toContain('client secret was [redacted]');
    expect(JSON.stringify(ex)).not.toContain('very-secret-value-42');
    expect(JSON.stringify(ex)).not.toContain(assertion);
  });

  it('JSON-encodes object bodies as application/fhir+json and parses JSON of any content type', async () => {
    let contentType = '';
    let received = '';
    const s = await serve((req, res) => {
      contentType = req.headers['content-type'] ?? '';
      received = req.body;
      res.writeHead(201, { 'content-type': 'text/plain' });
      res.end('{"resourceType":"Encounter","id":"e1"}');
    });
    const { c, exchanges } = client(s.url);
    const r = await c.request({ method: 'POST', url: '/fhir/R4/Encounter', body: { resourceType: 'Encounter', status: 'planned' }, skipInvariants: true });
    expect(contentType).toBe('application/fhir+json');
    expect(JSON.parse(received)).toEqual({ resourceType: 'Encounter', status: 'planned' });
    expect(r.json).toEqual({ resourceType: 'Encounter', id: 'e1' });
    expect(exchanges[0].facts).toMatchObject({
      path: '/fhir/R4/Encounter',
      authenticated: false,
      skipInvariants: true,
      complete: true,
      truncated: false,
      json: { resourceType: 'Encounter', id: 'e1' },
    });
    expect(exchanges[0].ex.curl).toContain(`--data-binary '{"resourceType":"Encounter","status":"planned"}'`);

    const html = await serve((_req, res) => {
      res.end('<html>nope</html>');
    });
    const { c: c2 } = client(html.url);
    const r2 = await c2.request({ url: '/' });
    expect(r2.json).toBeUndefined();
    expect(r2.text).toBe('<html>nope</html>');
  });

  it('records binary bodies as placeholders, not mojibake', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      res.end(Buffer.from([0x25, 0x50, 0xff, 0xfe, 0x00, 0x80]));
    });
    const { c, exchanges } = client(s.url);
    const r = await c.request({ method: 'POST', url: '/upload', body: Buffer.from([0xff, 0xd8, 0xff, 0xe0]), headers: { 'Content-Type': 'image/jpeg' } });
    expect(r.json).toBeUndefined();
    const ex = exchanges[0].ex;
    expect(ex.request.headers['content-type']).toBe('image/jpeg');
    expect(ex.request.body).toBe('[binary body: 4 bytes]');
    expect(ex.curl).toMatch(/--data-binary @body\.bin {2}# binary request body not recorded$/);
    expect(ex.response!.body).toBe('[binary body: 6 bytes]');
    expect(ex.response!.bodyBytes).toBe(6);
  });

  it('returns a redirect as a response without following it (redirect loop)', async () => {
    let hits = 0;
    const s = await serve((_req, res) => {
      hits++;
      res.writeHead(302, { location: '/loop' });
      res.end();
    });
    const { c } = client(s.url);
    const r = await c.request({ url: '/loop' });
    expect(r.status).toBe(302);
    expect(r.headers.location).toBe('/loop');
    expect(hits).toBe(1);
  });
});

describe('HttpClient: hostile targets', () => {
  it('caps a 50 MB body without buffering it and marks it truncated', async () => {
    let written = 0;
    const s = await serve(async (_req, res) => {
      const chunk = Buffer.alloc(64 * 1024, 'a');
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(50 * 1024 * 1024) });
      let closed = false;
      const closing = once(res, 'close').then(() => (closed = true));
      while (written < 50 * 1024 * 1024 && !closed) {
        written += chunk.length;
        if (!res.write(chunk)) await Promise.race([once(res, 'drain'), closing]);
      }
      res.end();
    });
    const { c, exchanges } = client(s.url, { maxBodyBytes: 1024 * 1024 });
    const r = await c.request({ url: '/big' });
    expect(r.status).toBe(200);
    expect(r.bodyTruncated).toBe(true);
    expect(r.text.length).toBe(1024 * 1024);
    const ex = exchanges[0].ex;
    expect(ex.response!.bodyBytes).toBe(1024 * 1024);
    expect(ex.response!.bodyTruncated).toBe(true);
    expect(ex.response!.body!.length).toBe(64 * 1024);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The server stopped well short of 50 MB: the client destroyed the stream at the cap.
    expect(written).toBeLessThan(20 * 1024 * 1024);
  });

  it("does not count the process's own stall against the target: an answer that came in time is read after a blocked event loop", async () => {
    let arrived!: () => void;
    const received = new Promise<void>((r) => {
      arrived = r;
    });
    const s = await serve((_req, res) => {
      arrived();
      res.writeHead(200, { 'content-type': 'application/fhir+json', ...conformingHeaders() });
      res.end('{"resourceType":"CapabilityStatement"}');
    });
    const { c } = client(s.url, { timeoutMs: 200 });
    const answer = c.request({ url: '/fhir/R4/metadata' });
    await received;
    // The answer is on its way; this process is busy for three timeouts (a plain timer would fire first).
    const until = Date.now() + 600;
    while (Date.now() < until);
    expect((await answer).status).toBe(200);
  });

  it('times out on a server that never answers, and records the exchange', async () => {
    const s = await serve(() => undefined);
    const { c, exchanges } = client(s.url, { timeoutMs: 200 });
    const e = await expectCode(c.request({ url: '/fhir/R4/metadata' }), 'ERR_TIMEOUT');
    expect(e.message).toBe('no response within 0.2 s');
    expect(exchanges).toHaveLength(1);
    expect(exchanges[0].ex.error).toBe('no response within 0.2 s');
    expect(exchanges[0].ex.response).toBeUndefined();
    // The error carries that exchange: the evidence of the check that ends in it.
    expect(e.exchange).toBe(exchanges[0].ex);
  });

  it('cuts a body that trickles forever at the per-request timeout', async () => {
    const timers: NodeJS.Timeout[] = [];
    cleanups.push(async () => timers.forEach(clearInterval));
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/fhir+json' });
      timers.push(setInterval(() => res.write(' '), 20));
    });
    const { c, exchanges } = client(s.url, { timeoutMs: 300 });
    const e = await expectCode(c.request({ url: '/slow' }), 'ERR_TIMEOUT');
    expect(e.message).toMatch(/^response body not complete within 0.3 s \(\d+ bytes received\)$/);
    expect(exchanges[0].ex.response!.status).toBe(200);
  });

  it('reports a body cut mid-stream as ERR_PROTOCOL', async () => {
    const s = await serve((req, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('partial');
      setTimeout(() => req.socket.destroy(), 20);
    });
    const { c, exchanges } = client(s.url);
    const e = await expectCode(c.request({ url: '/cut' }), 'ERR_PROTOCOL');
    expect(e.message).toMatch(/^connection closed mid-body by 127\.0\.0\.1:\d+ after 7 bytes$/);
    expect(exchanges[0].ex.response!.body).toBe('partial');
  });

  it('reports connection refused with host and port', async () => {
    const probe = createNetServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as AddressInfo).port;
    probe.close();
    await once(probe, 'close');
    const { c, exchanges } = client(`http://127.0.0.1:${port}`);
    const e = await expectCode(c.request({ url: '/fhir/R4/metadata' }), 'ERR_TARGET_UNREACHABLE');
    expect(e.message).toBe(`connection refused by 127.0.0.1:${port}`);
    expect(exchanges[0].ex.error).toBe(e.message);
  });

  it('reports a DNS failure', async () => {
    const { c } = client('http://nonexistent.invalid');
    const e = await expectCode(c.request({ url: '/fhir/R4/metadata' }), 'ERR_DNS');
    expect(e.message).toBe('cannot resolve host nonexistent.invalid');
  });

  it('reports a self-signed TLS certificate as ERR_TLS', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fc-tls-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const server = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (_req, res) => res.end('ok'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(async () => {
      server.closeAllConnections();
      server.close();
    });
    const port = (server.address() as AddressInfo).port;
    const { c } = client(`https://127.0.0.1:${port}`);
    const e = await expectCode(c.request({ url: '/fhir/R4/metadata' }), 'ERR_TLS');
    expect(e.message).toMatch(new RegExp(`^TLS handshake with 127\\.0\\.0\\.1:${port} failed: .*self.signed`));
  });
});

describe('HttpClient: content codings', () => {
  it('asks for gzip, deflate and br, and judges the decoded body of each (the cap counts decoded bytes)', async () => {
    const { gzipSync, deflateSync, brotliCompressSync } = await import('node:zlib');
    const body = JSON.stringify({ resourceType: 'Bundle', type: 'searchset', entry: [], note: 'x'.repeat(2000) });
    const encode: Record<string, (b: Buffer) => Buffer> = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };
    let asked: string | undefined;
    const s = await serve((req, res) => {
      asked = req.headers['accept-encoding'];
      const coding = new URL(req.url ?? '/', 'http://x').searchParams.get('coding') ?? 'gzip';
      const payload = encode[coding]!(Buffer.from(body));
      res.writeHead(200, { 'content-type': 'application/fhir+json', 'content-encoding': coding, ...conformingHeaders() });
      res.end(payload);
    });
    const { c } = client(s.url);
    for (const coding of ['gzip', 'deflate', 'br']) {
      const r = await c.request({ url: `/fhir/R4/Encounter?coding=${coding}` });
      expect([coding, r.text]).toEqual([coding, body]);
      expect((r.json as { resourceType: string }).resourceType).toBe('Bundle');
    }
    expect(asked).toBe('gzip, deflate, br');
    // A small gzip body that expands past the cap is cut at the cap, never buffered whole.
    const { c: capped } = client(s.url, { maxBodyBytes: 1000 });
    const r = await capped.request({ url: '/fhir/R4/Encounter?coding=gzip' });
    expect([r.bodyTruncated, r.text.length]).toEqual([true, 1000]);
  });

  it('a corrupt gzip body is a coded error, not a crash', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/fhir+json', 'content-encoding': 'gzip', ...conformingHeaders() });
      res.end('not gzip at all');
    });
    const { c } = client(s.url);
    const e = await c.request({ url: '/fhir/R4/Encounter' }).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(ConformanceError);
  });
});

describe('HttpClient: the token endpoint wherever the target publishes it (markPerSource)', () => {
  /** A token endpoint at /oauth/token/ that is exhausted (429, Retry-After 30 s), and a discovery document beside it. */
  async function exhaustedTokenEndpoint() {
    return serve((req, res) => {
      if (req.url === '/oauth/token/') {
        res.writeHead(429, { 'content-type': 'application/fhir+json', 'retry-after': '30', ...conformingHeaders() });
        res.end(JSON.stringify({ resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'throttled', diagnostics: 'HPB-00105: slow down' }] }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', ...conformingHeaders() });
      res.end('{}');
    });
  }

  async function sendBoth(mark: boolean) {
    const s = await exhaustedTokenEndpoint();
    const waits: number[] = [];
    const { c, exchanges } = client(s.url, { sleep: async (ms) => void waits.push(ms) });
    if (mark) c.markPerSource(`${s.url}/oauth/token/`);
    await c.request({ method: 'POST', url: '/oauth/token/', form: { grant_type: 'client_credentials' }, retry: 'none', expect429: true });
    await c.request({ url: '/openapi.json' });
    return { waits, facts: exchanges.map((e) => e.facts.perSource) };
  }

  it("a 429 of the marked token endpoint holds no other request, and its exchange's facts say per-source", async () => {
    const { waits, facts } = await sendBoth(true);
    expect(waits.filter((ms) => ms >= 1000)).toEqual([]);
    expect(facts).toEqual([true, false]);
  });

  it('unmarked, the same path is an ordinary anonymous request: its 429 holds the next anonymous request (the control)', async () => {
    const { waits, facts } = await sendBoth(false);
    expect(waits.some((ms) => ms > 25_000)).toBe(true);
    expect(facts).toEqual([false, false]);
  });
});
