/**
 * The clients' public key set, and a tiny server that hosts it for targets that fetch client
 * keys. The run's worker can make the key set unreachable for a moment (the key-set rule of
 * Authentication > Token issuance) through a control endpoint bound to 127.0.0.1 only and
 * guarded by a random secret; the target never sees it.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { JWK } from 'jose';
import type { ResolvedClient } from '../config/index.js';
import { fetchJson } from '../http/fetch-json.js';

/** Public JWKS of the given clients (public members only, with kid/alg/use). */
export function publicJwks(clients: Pick<ResolvedClient, 'publicJwk'>[]): { keys: JWK[] } {
  return { keys: clients.map((c) => c.publicJwk) };
}

/** Where the run's worker reaches the control endpoint (JSON-safe: it crosses to the worker). */
export interface JwksControl {
  /** Base URL of the control endpoint, the secret included (never printed). */
  url: string;
  /** The hosted key set's URL, as the target fetches it. */
  jwksUrl: string;
}

/** State of the hosted key set, as the control endpoint reports it. */
export interface JwksState {
  reachable: boolean;
  /** Key-set requests received so far. */
  fetches: number;
  /** Key-set requests received (and cut) while unreachable, since it last became unreachable. */
  refusedFetches: number;
}

export interface JwksServer {
  url: string;
  hosting: { host: string; port: number; path: string };
  control: JwksControl;
  /** Replaces the served key set. */
  setKeys(jwks: { keys: JWK[] }): void;
  close(): Promise<void>;
}

/** Key-set path of the suite's hosted key set in embedded runs. */
export const EMBEDDED_JWKS_PATH = '/client-keys/jwks.json';

/**
 * Serves `jwks` as JSON at `path` on host:port (port 0 picks a free one); other paths give 404.
 * While unreachable (set through the control endpoint), every key-set request has its
 * connection cut without an answer.
 */
export async function serveJwks(hosting: { host: string; port: number; path: string }, jwks: { keys: JWK[] }): Promise<JwksServer> {
  let body = JSON.stringify(jwks);
  const state: JwksState = { reachable: true, fetches: 0, refusedFetches: 0 };
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if ((req.method === 'GET' || req.method === 'HEAD') && path === hosting.path) {
      state.fetches++;
      if (!state.reachable) {
        state.refusedFetches++;
        req.socket.destroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/jwk-set+json', 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  await listen(server, hosting.port, hosting.host);
  const { port } = server.address() as AddressInfo;

  const secret = randomBytes(24).toString('base64url');
  const control = createServer((req, res) => {
    const [, key, action] = (req.url ?? '').split('/');
    if (key !== secret) {
      res.writeHead(404).end();
      return;
    }
    if (req.method === 'POST' && (action === 'reachable' || action === 'unreachable')) {
      state.reachable = action === 'reachable';
      if (!state.reachable) state.refusedFetches = 0;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(state));
  });
  await listen(control, 0, '127.0.0.1');
  const controlPort = (control.address() as AddressInfo).port;

  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => (sockets.add(s), s.on('close', () => sockets.delete(s))));
  const url = `http://${hosting.host}:${port}${hosting.path}`;
  return {
    url,
    hosting: { ...hosting, port },
    control: { url: `http://127.0.0.1:${controlPort}/${secret}`, jwksUrl: url },
    setKeys(next) {
      body = JSON.stringify(next);
    },
    async close() {
      for (const s of sockets) s.destroy();
      await Promise.all([closeServer(server), closeServer(control)]);
    },
  };
}

/** Makes the hosted key set reachable or not; returns its state after the change. */
export async function setKeySetReachable(control: JwksControl, reachable: boolean): Promise<JwksState> {
  return controlRequest(control, 'POST', reachable ? 'reachable' : 'unreachable');
}

export async function keySetState(control: JwksControl): Promise<JwksState> {
  return controlRequest(control, 'GET', '');
}

async function controlRequest(control: JwksControl, method: string, action: string): Promise<JwksState> {
  const res = await fetchJson(`${control.url}/${action}`, { method, timeoutMs: 5000 });
  if (res.status < 200 || res.status > 299 || res.json === undefined) throw new Error(`the key-set control endpoint answered ${res.status}`);
  return res.json as JwksState;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.close((e) => (e ? reject(e) : resolve()));
    server.closeAllConnections();
  });
}
