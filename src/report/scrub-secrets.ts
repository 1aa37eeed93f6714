/**
 * Last line of defence before anything is written: evidence reaches the
 * reports already redacted by the HTTP layer, but a secret that slipped
 * through (a JWT in a message, a bearer token in a header, a PEM key) is
 * masked here so it never lands in a report file.
 */
const JWT = /eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;
const BEARER = /\b(Bearer\s+)(?!\$TOKEN\b|\[redacted\])[A-Za-z0-9._~+/=-]{8,}/gi;
const PEM_PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g;
/** `"d": "..."` and the other private members of a JWK. */
const JWK_PRIVATE_MEMBER = /("(?:d|p|q|dp|dq|qi)"\s*:\s*")[A-Za-z0-9_-]{16,}(")/g;

export function scrubSecrets(s: string): string {
  if (!s.includes('eyJ') && !/bearer|PRIVATE KEY|"(?:d|p|q|dp|dq|qi)"/i.test(s)) return s;
  return s
    .replace(PEM_PRIVATE_KEY, '[redacted private key]')
    .replace(JWT, '[redacted]')
    .replace(BEARER, '$1[redacted]')
    .replace(JWK_PRIVATE_MEMBER, '$1[redacted]$2');
}
