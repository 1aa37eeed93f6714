/** The clients' public key set, and a tiny server that hosts it for targets that fetch client keys. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JWK } from 'jose';
import type { ResolvedClient } from '../config/index.js';

/** Public JWKS of the given clients (public members only, with kid/alg/use). */
export function publicJwks(clients: Pick<ResolvedClient, 'publicJwk'>[]): { keys: JWK[] } {
  return { keys: clients.map((c) => c.publicJwk) };
}

export interface JwksServer {
  url: string;
  close(): Promise<void>;
}

/** Serves `jwks` as JSON at `path` on host:port (port 0 picks a free one); other paths give 404. */
export async function serveJwks(hosting: { host: string; port: number; path: string }, jwks: { keys: JWK[] }): Promise<JwksServer> {
  const body = JSON.stringify(jwks);
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if ((req.method === 'GET' || req.method === 'HEAD') && path === hosting.path) {
      res.writeHead(200, { 'content-type': 'application/jwk-set+json', 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(hosting.port, hosting.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${hosting.host}:${port}${hosting.path}`,
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
}
