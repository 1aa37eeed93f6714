/** Small local servers for the HTTP layer tests (127.0.0.1, ephemeral port). */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestServer {
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage & { body: string }, res: ServerResponse) => void | Promise<void>;

/** Starts a node:http server; the handler gets the request body as text. */
export async function startServer(handler: Handler): Promise<TestServer> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void handler(Object.assign(req, { body: Buffer.concat(chunks).toString('utf8') }), res);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** Rate-limit and correlation headers a conforming target sends. */
export function conformingHeaders(nowMs = Date.now(), remaining = 59): Record<string, string> {
  return {
    'x-correlation-id': 'corr-1',
    'x-ratelimit-limit': '60',
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-reset': String(Math.ceil(nowMs / 1000) + 60),
  };
}

/** A fake clock: `sleep` advances `now` and records each delay. */
export function fakeClock(start = 1_700_000_000_000) {
  const state = { t: start, delays: [] as number[] };
  return {
    state,
    now: () => state.t,
    sleep: async (ms: number) => {
      state.delays.push(ms);
      state.t += ms;
    },
  };
}
