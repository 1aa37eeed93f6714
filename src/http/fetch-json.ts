/**
 * A small JSON request over node:http / node:https, for the tool's own side channels (the reference
 * fetching a client's key set, the run reaching its key-set control endpoint). Node's global `fetch`
 * would do, but its first use loads Node's bundled copy of undici (about 0.1 s of a quick run's
 * start, README "Speed"); these requests need none of it.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { parseJson } from './evidence.js';

export interface JsonAnswer {
  status: number;
  /** The parsed body; undefined when the body is not JSON (`text` has it). */
  json: unknown;
  text: string;
}

/** What went wrong, for callers that map it to their own errors. */
export type FetchJsonErrorCode = 'TIMEOUT' | 'TOO_LARGE' | 'NETWORK';

export class FetchJsonError extends Error {
  readonly code: FetchJsonErrorCode;
  constructor(code: FetchJsonErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FetchJsonError';
    this.code = code;
  }
}

export interface FetchJsonOptions {
  method?: string;
  headers?: Record<string, string>;
  /** The whole exchange, connection to the body's end. */
  timeoutMs: number;
  /** A longer body is cut and refused (TOO_LARGE). */
  maxBytes?: number;
}

/** One request, no redirects followed (a 3xx is an answer like any other). */
export function fetchJson(url: URL | string, options: FetchJsonOptions): Promise<JsonAnswer> {
  const target = typeof url === 'string' ? new URL(url) : url;
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  return new Promise<JsonAnswer>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const settle = (error: Error | undefined, answer?: JsonAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) {
        req.destroy();
        reject(error);
      } else resolve(answer as JsonAnswer);
    };
    const req = send(target, { method: options.method ?? 'GET', headers: options.headers }, (res: IncomingMessage) => {
      const parts: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) settle(new FetchJsonError('TOO_LARGE', `the answer from ${target.origin} is over ${maxBytes} bytes`));
        else parts.push(chunk);
      });
      res.on('error', (e) => settle(new FetchJsonError('NETWORK', `${target.origin}: ${e.message}`, { cause: e })));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        settle(undefined, { status: res.statusCode ?? 0, json: parseJson(text), text });
      });
    });
    timer = setTimeout(() => settle(new FetchJsonError('TIMEOUT', `${target.origin} did not answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    req.on('error', (e) => settle(new FetchJsonError('NETWORK', `${target.origin}: ${e.message}`, { cause: e })));
    req.end();
  });
}
