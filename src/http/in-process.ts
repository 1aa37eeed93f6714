/**
 * A server reached in-process: its node:http request handler is called with an injected request
 * (light-my-request, Fastify's `inject`: a real IncomingMessage and ServerResponse over a fake
 * socket) instead of over a TCP connection. The embedded reference's quick runs go this way
 * (`--transport`, README "Speed"): the same handler answers, with the same status, headers and
 * bytes, without the two HTTP/1.1 stacks and the socket between them (about a sixth of a quick run).
 * What the socket would show is kept: the Host the client names, no body for HEAD, a 204 or a 304
 * (node's own ServerResponse decides), the Date header node adds.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import inject from 'light-my-request';

export interface InProcessTarget {
  /** The origin (`http://127.0.0.1:port`) whose requests go to `handle`. */
  origin: string;
  handle: (req: IncomingMessage, res: ServerResponse) => void;
}

export interface InProcessAnswer {
  status: number;
  headers: Record<string, string | string[]>;
  payload: Buffer;
}

export interface InProcessRequest {
  method: string;
  /** Path and query. */
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

/** An abort of the request (its signal) before the answer is complete. */
export class InProcessAbort extends Error {
  constructor() {
    super('request aborted');
    this.name = 'AbortError';
  }
}

/** Sends `req` to the target's handler; rejects when `signal` aborts first or the handler gives no complete answer. */
export function sendInProcess(target: InProcessTarget, req: InProcessRequest, signal: AbortSignal): Promise<InProcessAnswer> {
  if (signal.aborted) return Promise.reject(new InProcessAbort());
  return new Promise<InProcessAnswer>((resolve, reject) => {
    const onAbort = () => reject(new InProcessAbort());
    signal.addEventListener('abort', onAbort, { once: true });
    inject(target.handle, {
      method: req.method as 'GET',
      url: req.path,
      // The Host an HTTP client sends (undici does); light-my-request would say localhost:80.
      headers: { host: new URL(target.origin).host, ...req.headers },
      ...(req.body !== undefined ? { payload: req.body } : {}),
      remoteAddress: '127.0.0.1',
      // The options are made here, well-formed: light-my-request's check of them is skipped.
      validate: false,
    }).then(
      (res) => {
        signal.removeEventListener('abort', onAbort);
        // node's ServerResponse writes no body for HEAD, 204 and 304 here too (test/http/in-process.test.ts).
        resolve({ status: res.statusCode, headers: res.headers as Record<string, string | string[]>, payload: res.rawPayload });
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
