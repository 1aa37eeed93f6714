/** Reading token endpoint responses: expiry, Retry-After and a one-line failure summary. */
import { decodeJwt } from 'jose';
import { redactString } from '../redact.js';
import type { HttpResponse } from '../http/types.js';

/** Absolute expiry (epoch ms): `expires_in`, else the JWT's `exp` (unverified), else the declared lifetime. */
export function tokenExpiry(body: Record<string, unknown>, token: string, receivedAt: number, declaredLifetimeSec: number): number {
  const expiresIn = Number(body.expires_in);
  if (body.expires_in !== undefined && body.expires_in !== '' && Number.isFinite(expiresIn) && expiresIn > 0) {
    return receivedAt + expiresIn * 1000;
  }
  try {
    const { exp } = decodeJwt(token);
    if (typeof exp === 'number') return exp * 1000;
  } catch {
    // not a JWT: fall through to the declared lifetime
  }
  return receivedAt + declaredLifetimeSec * 1000;
}

/** When to stop reusing a token: 30 s or 10 % of its lifetime before expiry, whichever is smaller. */
export function refreshAt(expiresAt: number, issuedAt: number): number {
  const lifetime = Math.max(0, expiresAt - issuedAt);
  return expiresAt - Math.min(30_000, lifetime * 0.1);
}

/** Retry-After (delta seconds or HTTP date) as ms from `now`; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const EXCERPT_CHARS = 160;

function excerpt(s: string): string {
  const line = redactString(s).replace(/\s+/g, ' ').trim();
  return line.length > EXCERPT_CHARS ? `${line.slice(0, EXCERPT_CHARS)}...` : line;
}

/** One readable line about a failed token response (status, issue code, diagnostics), secrets redacted. */
export function describeTokenFailure(res: HttpResponse): string {
  const body = res.json as Record<string, unknown> | undefined;
  const issue = Array.isArray(body?.issue) ? (body.issue[0] as Record<string, unknown> | undefined) : undefined;
  let detail: string;
  if (issue) {
    detail = [issue.code, issue.diagnostics].filter((v) => typeof v === 'string' && v !== '').join(': ');
  } else if (body && typeof body.error === 'string') {
    detail = [body.error, body.error_description].filter((v) => typeof v === 'string' && v !== '').join(': ');
  } else if (res.status >= 200 && res.status < 300) {
    detail = 'no access_token in the response';
  } else {
    detail = res.text;
  }
  const text = excerpt(detail);
  return `HTTP ${res.status}${text ? `, ${text}` : ''}`;
}
