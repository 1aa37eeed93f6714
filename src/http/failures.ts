/** Maps network and protocol failures to a ConformanceError with a one-line message. */
import { ConformanceError } from '../errors.js';

/** Why the client aborted a request itself, when it did. */
export type AbortCause = 'timeout' | 'deadline' | 'interrupted';

export interface FailureContext {
  url: URL;
  /** Whether the failure happened while reading the body (headers were received). */
  inBody: boolean;
  abortCause?: AbortCause;
  timeoutMs: number;
  bytesReceived: number;
  /** The proxy the request went through (credentials redacted), when it went through one. */
  proxy?: string;
}

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_|HOSTNAME_MISMATCH$)/;

/** Error codes found on the error, its `cause` chain and AggregateError members. */
export function codesOf(e: unknown, depth = 0): string[] {
  if (depth > 4 || e === null || typeof e !== 'object') return [];
  const out: string[] = [];
  const err = e as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof err.code === 'string') out.push(err.code);
  if (err.cause !== undefined) out.push(...codesOf(err.cause, depth + 1));
  if (Array.isArray(err.errors)) for (const inner of err.errors) out.push(...codesOf(inner, depth + 1));
  return out;
}

/** The status of a proxy that refused a CONNECT (undici: `Proxy response (407) !== 200 when HTTP Tunneling`). */
function proxyStatus(e: unknown, depth = 0): number | undefined {
  if (depth > 4 || !(e instanceof Error)) return undefined;
  const m = /Proxy response \((\d{3})\)/.exec(e.message);
  if (m) return Number(m[1]);
  return proxyStatus((e as { cause?: unknown }).cause, depth + 1);
}

export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}

export function toConformanceError(e: unknown, ctx: FailureContext): ConformanceError {
  if (e instanceof ConformanceError) return e;
  const hostPort = `${ctx.url.hostname}:${ctx.url.port || (ctx.url.protocol === 'https:' ? '443' : '80')}`;
  const opts = { cause: e };
  if (ctx.abortCause === 'interrupted') return new ConformanceError('ERR_INTERRUPTED', 'request interrupted', opts);
  if (ctx.abortCause === 'deadline') return new ConformanceError('ERR_DEADLINE', 'run deadline (timeouts.runMs) passed during the request', opts);
  const codes = codesOf(e);
  const has = (...c: string[]) => codes.some((x) => c.includes(x));
  if (ctx.proxy !== undefined) {
    const refused = proxyStatus(e);
    if (refused !== undefined) {
      const what = refused === 407 ? 'asked for credentials (407 Proxy Authentication Required)' : `answered ${refused}`;
      return new ConformanceError('ERR_PROXY', `the proxy ${ctx.proxy} ${what} instead of opening a tunnel to ${hostPort}`, opts);
    }
    if (!codes.some((c) => TLS_CODES.test(c)) && has('ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'))
      return new ConformanceError('ERR_PROXY', `cannot reach the proxy ${ctx.proxy} (${codes.find((c) => c.startsWith('E'))}) to get to ${hostPort}`, opts);
  }
  const timedOut = ctx.abortCause === 'timeout' || has('UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT');
  if (timedOut) {
    return ctx.inBody
      ? new ConformanceError('ERR_TIMEOUT', `response body not complete within ${seconds(ctx.timeoutMs)} (${ctx.bytesReceived} bytes received)`, opts)
      : new ConformanceError('ERR_TIMEOUT', `no response within ${seconds(ctx.timeoutMs)}`, opts);
  }
  if (has('ECONNREFUSED')) return new ConformanceError('ERR_TARGET_UNREACHABLE', `connection refused by ${hostPort}`, opts);
  if (has('ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL')) {
    return new ConformanceError('ERR_DNS', `cannot resolve host ${ctx.url.hostname}`, opts);
  }
  if (has('EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL')) return new ConformanceError('ERR_TARGET_UNREACHABLE', `${hostPort} is unreachable`, opts);
  const tls = codes.find((c) => TLS_CODES.test(c));
  if (tls) {
    const detail = e instanceof Error ? e.message.split('\n')[0] : tls;
    return new ConformanceError('ERR_TLS', `TLS handshake with ${hostPort} failed: ${detail} (${tls})`, opts);
  }
  if (ctx.inBody) {
    return new ConformanceError('ERR_PROTOCOL', `connection closed mid-body by ${hostPort} after ${ctx.bytesReceived} bytes`, opts);
  }
  const detail = e instanceof Error ? e.message.split('\n')[0] : String(e);
  return new ConformanceError('ERR_PROTOCOL', `no valid HTTP response from ${hostPort}: ${detail}`, opts);
}
