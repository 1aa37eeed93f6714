/**
 * A real forward proxy for the tests: answers CONNECT (what undici's ProxyAgent sends for http and
 * https targets alike), optionally requires Basic credentials (407 otherwise), and maps host names
 * that exist only here (`*.invalid`) to 127.0.0.1, so a request that bypassed it could not resolve.
 * With `countRequests`, a tunnel to a plain-HTTP target is answered by a small HTTP server of the
 * proxy's own that forwards each request and counts it: the test compares that count with the
 * report's.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';

export interface ForwardProxy {
  url: string;
  port: number;
  /** CONNECT requests, by the host:port asked for. */
  connects: string[];
  /** CONNECTs refused with 407. */
  refused: number;
  /** HTTP requests seen inside plain-HTTP tunnels (countRequests), with the Proxy-Authorization they carried (none expected). */
  requests: Array<{ method: string; path: string; proxyAuthorization?: string }>;
  close(): Promise<void>;
}

export async function startForwardProxy(opts: { credentials?: { user: string; password: string }; countRequests?: boolean } = {}): Promise<ForwardProxy> {
  const connects: string[] = [];
  const requests: ForwardProxy['requests'] = [];
  const sockets = new Set<Socket>();
  let refused = 0;
  const expected = opts.credentials ? `Basic ${Buffer.from(`${opts.credentials.user}:${opts.credentials.password}`).toString('base64')}` : undefined;
  const resolveHost = (host: string) => (host.endsWith('.invalid') ? '127.0.0.1' : host);

  // Plain HTTP inside a tunnel: forwarded request by request to the tunnel's destination, counted.
  const inner = createServer((req, res) => {
    const [host, port] = (req.socket as Socket & { destination?: string }).destination!.split(/:(?=\d+$)/);
    requests.push({
      method: req.method!,
      path: req.url!,
      ...(req.headers['proxy-authorization'] ? { proxyAuthorization: String(req.headers['proxy-authorization']) } : {}),
    });
    const out = httpRequest({ host: resolveHost(host!), port: Number(port), method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });

  // The reference's keep-alive, so the client never reuses a socket this end closed (a request that would not reach it).
  inner.keepAliveTimeout = 65_000;
  inner.headersTimeout = 66_000;
  // HTTP the parser cannot read is counted and refused here.
  inner.on('clientError', (_err: Error, socket: Socket) => {
    requests.push({ method: '(malformed)', path: '' });
    socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  });

  const server: Server = createServer((_req, res) => {
    res.writeHead(405).end();
  });
  server.on('connection', (s: Socket) => (sockets.add(s), s.on('close', () => sockets.delete(s))));
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    client.on('error', () => client.destroy());
    if (expected !== undefined && req.headers['proxy-authorization'] !== expected) {
      refused++;
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const destination = req.url!;
    connects.push(destination);
    if (opts.countRequests) {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      (client as Socket & { destination?: string }).destination = destination;
      if (head.length) client.unshift(head);
      inner.emit('connection', client);
      return;
    }
    const [host, port] = destination.split(/:(?=\d+$)/);
    const upstream = connect(Number(port), resolveHost(host!), () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n'));
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    connects,
    get refused() {
      return refused;
    },
    requests,
    close: () =>
      new Promise<void>((ok) => {
        for (const s of sockets) s.destroy();
        inner.closeAllConnections();
        server.close(() => ok());
        server.closeAllConnections();
      }),
  };
}
