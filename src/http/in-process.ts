/**
 * A server reached in-process: its request handler is called with a request and a response made
 * here instead of over a TCP connection. The embedded reference's quick runs go this way
 * (`--transport`, README "Speed"): the same handler answers, with the same status, headers and
 * bytes, without the two HTTP/1.1 stacks and the socket between them (about a sixth of a quick run),
 * and without node's IncomingMessage and ServerResponse, whose streams cost a tenth more.
 * What a connection would show is kept: the Host the client names, the body's Content-Length, no
 * body for HEAD, a 204 or a 304, the Date header and the keep-alive node's server adds.
 * The handler may use what node's request and response have of `HandlerRequest` and
 * `HandlerResponse` (the reference uses nothing else; TypeScript holds it to that).
 */
import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';

/** What a handler reached in-process reads of its request: a part of node's IncomingMessage. */
export interface HandlerRequest {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly socket: { readonly remoteAddress?: string | undefined; destroy(error?: Error): unknown };
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'end' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (e: Error) => void): unknown;
  off(event: 'data', listener: (chunk: Buffer) => void): unknown;
  resume(): unknown;
}

/** What a handler reached in-process does with its response: a part of node's ServerResponse. */
export interface HandlerResponse {
  readonly destroyed: boolean;
  writeHead(status: number, headers?: Record<string, string>): unknown;
  end(payload?: string | Buffer): unknown;
}

export type Handler = (req: HandlerRequest, res: HandlerResponse) => void;

export interface InProcessTarget {
  /** The origin (`http://127.0.0.1:port`) whose requests go to `handle`. */
  origin: string;
  handle: Handler;
  /** The Keep-Alive timeout node's server would announce, in seconds (none when absent). */
  keepAliveS?: number;
}

export interface InProcessAnswer {
  status: number;
  /** Lower-case names, as a client reads them off the wire. */
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

/** A request whose body, held whole, flows once a reader listens (as a stream's does, on a later tick). */
class Request extends EventEmitter implements HandlerRequest {
  private flowing = false;

  constructor(
    /** The peer a connection from this process shows; destroying it ends the exchange without an answer. */
    readonly socket: HandlerRequest['socket'],
    readonly method: string,
    readonly url: string,
    readonly headers: IncomingHttpHeaders,
    private readonly body: Buffer | undefined,
  ) {
    super();
  }

  override on(event: string | symbol, listener: (...args: never[]) => void): this {
    super.on(event, listener as (...args: unknown[]) => void);
    if (event === 'data' || event === 'end') this.resume();
    return this;
  }

  resume(): this {
    if (!this.flowing) {
      this.flowing = true;
      process.nextTick(() => {
        if (this.body !== undefined && this.body.length > 0) this.emit('data', this.body);
        this.emit('end');
      });
    }
    return this;
  }
}

/** Sends `req` to the target's handler; rejects when `signal` aborts first, or the handler throws or destroys its socket before answering. */
export function sendInProcess(target: InProcessTarget, req: InProcessRequest, signal: AbortSignal): Promise<InProcessAnswer> {
  if (signal.aborted) return Promise.reject(new InProcessAbort());
  const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body);
  const headers: IncomingHttpHeaders = { host: new URL(target.origin).host };
  for (const [name, value] of Object.entries(req.headers)) headers[name.toLowerCase()] = value;
  // An HTTP client sends a whole body with its length (undici does).
  if (body !== undefined) headers['content-length'] = String(body.length);
  return new Promise<InProcessAnswer>((resolve, reject) => {
    const onAbort = () => reject(new InProcessAbort());
    signal.addEventListener('abort', onAbort, { once: true });
    let status = 200;
    let answerHeaders: Record<string, string | string[]> = {};
    const res: HandlerResponse = {
      destroyed: false,
      writeHead(code, given) {
        status = code;
        answerHeaders = {};
        for (const [name, value] of Object.entries(given ?? {})) answerHeaders[name.toLowerCase()] = value;
        return res;
      },
      end(payload) {
        signal.removeEventListener('abort', onAbort);
        // What node's ServerResponse adds; no body for HEAD, 204 and 304 (test/http/in-process.test.ts).
        answerHeaders.date ??= new Date().toUTCString();
        answerHeaders.connection ??= 'keep-alive';
        if (answerHeaders.connection === 'keep-alive' && target.keepAliveS !== undefined) answerHeaders['keep-alive'] ??= `timeout=${target.keepAliveS}`;
        const bodyless = req.method === 'HEAD' || status === 204 || status === 304;
        const bytes = bodyless || payload === undefined ? Buffer.alloc(0) : Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
        resolve({ status, headers: answerHeaders, payload: bytes });
        return res;
      },
    };
    try {
      // A dropped connection: the answer, if none was given yet, is an error (the client's ERR_PROTOCOL).
      const socket = { remoteAddress: '127.0.0.1', destroy: (e?: Error) => reject(e ?? new Error('socket hang up')) };
      target.handle(new Request(socket, req.method, req.path, headers, body), res);
    } catch (e) {
      signal.removeEventListener('abort', onAbort);
      reject(e);
    }
  });
}
