/**
 * A key set an attacker hosts, served by the suite itself on 127.0.0.1 for the length of one check:
 * what a `jku` header of a forged token points to when the target can reach it (a target on this
 * machine). It counts the fetches, so a target that fetched it and still refused shows in the observations.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JWK } from 'jose';

export interface AttackerKeys {
  /** The key set's URL. */
  url: string;
  /** Key-set requests received so far. */
  fetches(): number;
  close(): Promise<void>;
}

const PATH = '/attacker/jwks.json';

/** Whether `baseUrl` names this machine's loopback: the only targets a key set on 127.0.0.1 is reachable from. */
export function onLoopback(baseUrl: string): boolean {
  try {
    const host = new URL(baseUrl).hostname;
    return host === 'localhost' || host === '[::1]' || /^127\./.test(host);
  } catch {
    return false;
  }
}

export async function serveAttackerKeys(jwks: { keys: JWK[] }): Promise<AttackerKeys> {
  let fetches = 0;
  const body = JSON.stringify(jwks);
  const server = createServer((req, res) => {
    if (req.method === 'GET' && (req.url ?? '').split('?')[0] === PATH) {
      fetches++;
      res.writeHead(200, { 'content-type': 'application/jwk-set+json', 'cache-control': 'no-store' }).end(body);
    } else res.writeHead(404).end();
  });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => done());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${PATH}`,
    fetches: () => fetches,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
