/**
 * Hostile targets on loopback (127.0.0.1, port 0): each plays one misbehaviour
 * a real deployment or the network in front of it can show. Transport-level
 * ones answer every path the same way; the `proxy` ones put a real reference
 * behind a forwarding proxy and misbehave on some paths only. The proxy also
 * records every request (the read-only test uses it for that).
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll } from 'vitest';
import type { ReferenceServer } from '../../src/reference/server.js';
import { startReference } from '../cli/cli.js';

export interface RecordedRequest {
  method: string;
  path: string;
  /** Request body and the answer's status and body, recorded by the proxy for requests other than GET. */
  body?: string;
  status?: number;
  response?: string;
}

export interface Hostile {
  /** Base URL for the config. */
  url: string;
  /** Token URL for the config, when it differs from `{url}/auth/token`. */
  tokenUrl?: string;
  /** Bytes the server wrote into response bodies (the 50 MB body shows how much was pulled). */
  bytesSent(): number;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

const JSON_TYPE = 'application/fhir+json';
const MB = 1024 * 1024;
/** Longest a misbehaving response keeps going (a bound for the test process, far beyond any run deadline). */
const MISBEHAVE_FOR_MS = 5 * 60_000;

/** The headers the spec asks of every response, so a 5xx is the only thing wrong. */
const specHeaders = () => ({
  'x-correlation-id': `hostile-${Math.random().toString(36).slice(2)}`,
  'x-ratelimit-limit': '60',
  'x-ratelimit-remaining': '59',
  'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 60),
});

const outcome = (code: string, text: string) =>
  JSON.stringify({ resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'exception', diagnostics: `${code}: ${text}` }] });

/** Responds on every path; `bytesSent` is incremented by the handler through `count`. */
type Handler = (req: IncomingMessage, res: ServerResponse, count: (n: number) => void) => void;

/** A misbehaviour of a whole target (every path), by name. */
const TRANSPORT: Record<string, Handler> = {
  /** Accepts the request, then never writes a byte (headers never come). */
  silent: () => {},
  /** Headers at once, then one byte of body every 200 ms for minutes. */
  trickle: (_req, res, count) => {
    res.writeHead(200, { 'content-type': JSON_TYPE });
    res.write('{');
    const started = Date.now();
    const timer = setInterval(() => {
      if (res.destroyed || Date.now() - started > MISBEHAVE_FOR_MS) return stop();
      res.write(' ');
      count(1);
    }, 200);
    const stop = () => {
      clearInterval(timer);
      res.destroy();
    };
    res.on('close', stop);
  },
  /** Announces 4 kB of JSON, sends the first 60 bytes, then drops the connection. */
  'cut-off': (_req, res, count) => {
    const part = '{"resourceType":"CapabilityStatement","status":"active","rest"';
    res.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': '4096' });
    res.write(part);
    count(part.length);
    setTimeout(() => res.destroy(), 20);
  },
  /** A gateway's HTML error page where JSON was expected. */
  html: (_req, res, count) => {
    const page =
      '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>\n';
    res.writeHead(502, { 'content-type': 'text/html' });
    res.end(page);
    count(page.length);
  },
  /** A 50 MB JSON body, streamed with backpressure (only what the client pulls is generated). */
  huge: (_req, res, count) => {
    res.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': String(50 * MB) });
    const head = '{"resourceType":"CapabilityStatement","padding":"';
    const chunk = 'x'.repeat(64 * 1024);
    let sent = 0;
    const pump = () => {
      while (!res.destroyed && sent < 50 * MB) {
        const piece = sent === 0 ? head + chunk.slice(head.length) : chunk.slice(0, Math.min(chunk.length, 50 * MB - sent));
        sent += piece.length;
        count(piece.length);
        if (!res.write(piece)) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end();
    };
    pump();
  },
  /** Every path redirects to itself with a growing query: a loop for anyone who follows. */
  'redirect-loop': (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    url.searchParams.set('hop', String(Number(url.searchParams.get('hop') ?? 0) + 1));
    res.writeHead(302, { location: `${url.pathname}${url.search}`, 'content-length': '0' });
    res.end();
  },
  /** An application server's HTML 500 page on every path. */
  'html-500': (_req, res, count) => {
    const page =
      '<!DOCTYPE html>\n<html><head><title>500 Internal Server Error</title></head><body><h1>Internal Server Error</h1><p>The server encountered an unexpected condition.</p></body></html>\n';
    res.writeHead(500, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page);
    count(page.length);
  },
  /** A storm of 500s with the spec's SVC-00001 body. */
  '500-storm': (_req, res) => {
    res.writeHead(500, { 'content-type': JSON_TYPE, ...specHeaders() });
    res.end(outcome('SVC-00001', 'Internal server error'));
  },
  '503-retry-after': (_req, res) => {
    res.writeHead(503, { 'content-type': JSON_TYPE, 'retry-after': '1', ...specHeaders() });
    res.end(outcome('SVC-00007', 'Service unavailable'));
  },
  '503-no-retry-after': (_req, res) => {
    res.writeHead(503, { 'content-type': JSON_TYPE, ...specHeaders() });
    res.end(outcome('SVC-00007', 'Service unavailable'));
  },
};

/** Raw-socket misbehaviours: the bytes written after the request arrives. */
const RAW: Record<string, string> = {
  /** No status line and no headers at all: a JSON body straight onto the socket. */
  'no-headers': '{"resourceType":"CapabilityStatement","status":"active"}\n',
  /** A status line and nothing else: no header, the body ends when the socket closes. */
  'status-line-only': 'HTTP/1.1 200 OK\r\n\r\n{"resourceType":"CapabilityStatement","status":"active"}',
};

export const TRANSPORT_KINDS = [...Object.keys(TRANSPORT), ...Object.keys(RAW)];

export async function startTransportHostile(kind: string): Promise<Hostile> {
  let bytes = 0;
  const requests: RecordedRequest[] = [];
  if (kind in RAW) {
    const server = createNetServer((socket) => {
      socket.once('data', (chunk: Buffer) => {
        const [method = '?', path = '?'] = chunk.toString('latin1').split(' ', 2);
        requests.push({ method, path });
        bytes += RAW[kind]!.length;
        socket.end(RAW[kind]);
      });
      socket.on('error', () => {});
    });
    return listen(server, 'http', () => bytes, requests);
  }
  const handler = TRANSPORT[kind];
  if (!handler) throw new Error(`unknown hostile kind ${kind}`);
  const server = createHttpServer((req, res) => {
    requests.push({ method: req.method ?? '?', path: req.url ?? '/' });
    req.resume();
    res.on('error', () => {});
    handler(req, res, (n) => (bytes += n));
  });
  return listen(server, 'http', () => bytes, requests);
}

/** A port nobody listens on: bound once, then released. */
export async function refusedUrl(): Promise<string> {
  const server = createNetServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return `http://127.0.0.1:${port}`;
}

/** HTTPS with a self-signed certificate (made with openssl), answering a plausible document. */
export async function startSelfSignedTls(): Promise<Hostile> {
  const dir = mkdtempSync(join(tmpdir(), 'fhirc-tls-'));
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
  const requests: RecordedRequest[] = [];
  const server = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (req, res) => {
    requests.push({ method: req.method ?? '?', path: req.url ?? '/' });
    res.writeHead(200, { 'content-type': JSON_TYPE });
    res.end('{"resourceType":"CapabilityStatement"}');
  });
  server.on('tlsClientError', () => {});
  return listen(server, 'https', () => 0, requests);
}

async function listen(server: Server | NetServer, scheme: 'http' | 'https', bytesSent: () => number, requests: RecordedRequest[]): Promise<Hostile> {
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `${scheme}://127.0.0.1:${port}`,
    bytesSent,
    requests,
    async close() {
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

/** What a proxy answers itself instead of forwarding, or how it alters a forwarded answer. */
export interface ProxyRules {
  /** Answer without forwarding (status, headers, body), or undefined to forward. */
  answer?: (method: string, path: string, body: string) => { status: number; headers: Record<string, string>; body: string } | undefined;
  /** Alter a forwarded response in place. */
  alter?: (path: string, res: { status: number; headers: Record<string, string>; body: string }) => void;
  /** Send token requests straight to the upstream (the assertion's audience is the upstream's token URL). */
  tokenDirect?: boolean;
}

/**
 * A forwarding proxy in front of `upstream` that records every request and
 * rewrites the upstream's address to its own in response bodies and
 * `Location` headers, so links and ids lead back through it.
 */
export async function startProxy(upstream: string, rules: ProxyRules = {}): Promise<Hostile> {
  const requests: RecordedRequest[] = [];
  let bytes = 0;
  let self = '';
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const method = req.method ?? 'GET';
      const path = req.url ?? '/';
      const recorded: RecordedRequest = { method, path };
      requests.push(recorded);
      const body = Buffer.concat(chunks);
      void forward(method, path, req, body).then(
        (out) => {
          if (method !== 'GET') Object.assign(recorded, { body: body.toString('utf8'), status: out.status, response: out.body });
          bytes += Buffer.byteLength(out.body);
          res.writeHead(out.status, out.headers);
          res.end(out.body);
        },
        () => res.destroy(),
      );
    });
  });
  const forward = async (method: string, path: string, req: IncomingMessage, body: Buffer) => {
    const own = rules.answer?.(method, path, body.toString('utf8'));
    if (own) return own;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers))
      if (v !== undefined && k !== 'host' && k !== 'content-length') headers[k] = Array.isArray(v) ? v.join(', ') : v;
    const r = await request(`${upstream}${path}`, { method: method as 'GET', headers, body: body.length ? body : undefined });
    const text = (await r.body.text()).split(upstream).join(self);
    const out = { status: r.statusCode, headers: {} as Record<string, string>, body: text };
    for (const [k, v] of Object.entries(r.headers)) {
      if (v === undefined || k === 'content-length' || k === 'transfer-encoding' || k === 'connection' || k === 'keep-alive') continue;
      out.headers[k] = (Array.isArray(v) ? v.join(', ') : v).split(upstream).join(self);
    }
    rules.alter?.(path, out);
    return out;
  };
  const hostile = await listen(server, 'http', () => bytes, requests);
  self = hostile.url;
  return { ...hostile, ...(rules.tokenDirect ? { tokenUrl: `${upstream}/auth/token` } : {}) };
}

/** JSON-document surgery for `alter`: parse, change, re-serialize. */
export function patchJson(res: { body: string }, change: (doc: Record<string, unknown>) => void): void {
  const doc = JSON.parse(res.body) as Record<string, unknown>;
  change(doc);
  res.body = JSON.stringify(doc);
}

/**
 * A reference behind a recording proxy for the tests of one describe block.
 * Token requests go straight to the reference: a client assertion names the
 * token URL it is for.
 */
export function proxiedReference(): { readonly reference: ReferenceServer; readonly proxy: Hostile } {
  const state = {} as { reference: ReferenceServer; proxy: Hostile };
  beforeAll(async () => {
    state.reference = await startReference();
    state.proxy = await startProxy(state.reference.url, { tokenDirect: true });
  });
  afterAll(async () => {
    await state.proxy?.close();
    await state.reference?.close();
  });
  return state;
}
