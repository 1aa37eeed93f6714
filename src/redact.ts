/**
 * Secret redaction shared by the HTTP layer (evidence) and the reporters.
 * Everything that leaves the HTTP client goes through these functions, so
 * access tokens, client assertions and private keys never reach a log or report.
 */

/** JSON fields whose values are always secrets (tokens, assertions, private JWK members). */
export const SECRET_JSON_FIELDS: ReadonlySet<string> = new Set([
  'access_token',
  'refresh_token',
  'id_token',
  'client_assertion',
  'd',
  'p',
  'q',
  'dp',
  'dq',
  'qi',
  'k',
]);

const MIN_SECRET_LENGTH = 8;
const JWT = /eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*)?/g;
const PEM_PRIVATE_KEY = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g;
const SECRET_HEADERS = new Set(['proxy-authorization', 'cookie', 'set-cookie', 'x-api-key']);

const secrets = new Set<string>();
let secretPattern: RegExp | undefined;

/** A whole compact JWS (header.payload.signature): `redactString` replaces every one by its shape. */
const WHOLE_JWT = new RegExp(`^${JWT.source}$`);

/**
 * Whether a string of the JWT shape is a JOSE object: its first part decodes to a JSON header naming
 * an `alg`, as every JWS and JWE header does (RFC 7515 4.1.1, RFC 7516 4.1.1). A search cursor of the
 * same shape (base64url JSON, a dot, a tag: the embedded reference's) is not a token: kept, so a
 * next link's evidence reproduces, and a page holding one is not walked string by string.
 */
function isJose(shaped: string): boolean {
  const dot = shaped.indexOf('.');
  const first = dot < 0 ? shaped : shaped.slice(0, dot);
  let jose = headersSeen.get(first);
  if (jose === undefined) {
    try {
      const header = JSON.parse(Buffer.from(first, 'base64url').toString('utf8')) as unknown;
      jose = header !== null && typeof header === 'object' && typeof (header as { alg?: unknown }).alg === 'string';
    } catch {
      jose = false;
    }
    // A run's tokens share a few headers, its cursors a few search states.
    if (headersSeen.size >= 1024) headersSeen.clear();
    headersSeen.set(first, jose);
  }
  return jose;
}
const headersSeen = new Map<string, boolean>();

/** Whether `text` holds a JOSE object of the JWT shape. */
function holdsJose(text: string): boolean {
  if (!text.includes('eyJ')) return false;
  const shapes = new RegExp(JWT.source, 'g');
  for (let m = shapes.exec(text); m !== null; m = shapes.exec(text)) if (isJose(m[0])) return true;
  return false;
}

/**
 * Registers a value to be replaced by `[redacted]` wherever it appears (values under 8 chars are ignored).
 * A whole JWT (a JOSE object, `isJose`) is not kept: its shape already redacts it wherever it appears, and a process that
 * runs the suite many times (the mutation runner) would otherwise match every string against
 * thousands of tokens that share their first 36 characters.
 */
export function registerSecret(value: string): void {
  if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH || secrets.has(value) || (WHOLE_JWT.test(value) && isJose(value))) return;
  secrets.add(value);
  secretPattern = undefined;
}

/**
 * Forgets a value `registerSecret` kept: for a secret of one run (its key-set control URL) once that
 * run's reports are written, so a process that runs the suite many times does not match every string
 * against every earlier run's secrets.
 */
export function unregisterSecret(value: string): void {
  if (secrets.delete(value)) secretPattern = undefined;
}

function pattern(): RegExp | undefined {
  if (secrets.size === 0) return undefined;
  if (!secretPattern) {
    const alternatives = [...secrets].sort((a, b) => b.length - a.length).map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    secretPattern = new RegExp(alternatives.join('|'), 'g');
  }
  return secretPattern;
}

/**
 * `redactString(text)` cut at `cap` characters, without scanning the whole of a long text (a
 * document of tens of megabytes in a request body): the first `cap + margin` characters are
 * redacted and cut at `cap`. A secret cut at that head's end is not matched, but it starts at
 * least `margin - reach` characters after `cap` (`reach`: the longest registered secret, or the
 * part of a JWT or PEM header the patterns need), so it stays beyond `cap` unless the redactions
 * before it shortened the head by that much: then the whole text is redacted.
 */
export function redactedPrefix(
  text: string | { readonly length: number; slice(start: number, end: number): string },
  cap: number,
): { text: string; cut: boolean } {
  let reach = 64;
  for (const s of secrets) reach = Math.max(reach, s.length);
  const margin = Math.max(64 * 1024, 2 * reach);
  if (text.length > cap + margin) {
    const head = text.slice(0, cap + margin);
    const redacted = redactString(head);
    if (head.length - redacted.length < margin - reach) return { text: redacted.slice(0, cap), cut: true };
  }
  const whole = redactString(text.toString());
  return { text: whole.length > cap ? whole.slice(0, cap) : whole, cut: whole.length > cap };
}

/** JSON text of a secret field's key (SECRET_JSON_FIELDS), as it opens a member. */
const SECRET_KEY_TEXT = new RegExp(`"(?:${[...SECRET_JSON_FIELDS].join('|')})"\\s*:`);
/** A character JSON text may escape: a secret holding one may not appear in the text as it is. */
const JSON_ESCAPED = /["\\\u0000-\u001f]/;

/**
 * Whether `redactJson(JSON.parse(text), extraFields)` could differ from the parsed value, and
 * `redactString(text)` from the text, judged on the text alone: false only when the text holds no
 * registered secret, no JWT or PEM marker, no key of a secret field, and no `\u` or `\/` escape that
 * could spell any of them (a registered secret JSON escapes is looked for in its escaped form). Conservative:
 * true sends the caller the whole way.
 */
export function jsonTextMayHoldSecret(text: string, extraFields: readonly string[] = []): boolean {
  if (holdsJose(text) || text.includes('PRIVATE KEY-----') || text.includes('\\u') || text.includes('\\/') || SECRET_KEY_TEXT.test(text)) return true;
  for (const f of extraFields) if (text.includes(`"${f}"`)) return true;
  const registered = pattern();
  if (!registered) return false;
  // A secret holding a character JSON escapes appears in the text in its escaped form: JSON has one
  // short form for a quote, a backslash, \n and the like; the other forms use \u or \/ (sent the whole way above).
  for (const s of secrets) if (JSON_ESCAPED.test(s) && text.includes(JSON.stringify(s).slice(1, -1))) return true;
  return text.search(registered) !== -1;
}

/** Replaces registered secrets, JOSE objects of the JWT shape (`isJose`) and PEM private key blocks. */
export function redactString(s: string): string {
  let out = s;
  const registered = pattern();
  if (registered) out = out.replace(registered, '[redacted]');
  if (out.includes('eyJ')) out = out.replace(JWT, (shaped) => (isJose(shaped) ? '[redacted-jwt]' : shaped));
  if (out.includes('PRIVATE KEY-----')) out = out.replace(PEM_PRIVATE_KEY, '[redacted-private-key]');
  return out;
}

/**
 * Redacts a parsed JSON value: the secret fields (plus `extraFields`) become
 * `"[redacted]"`, every other string goes through `redactString`.
 * Returns the same reference when nothing changed (cheap to compare).
 */
export function redactJson(value: unknown, extraFields: readonly string[] = [], opts: { keep?: number } = {}): unknown {
  const extra = extraFields.length > 0 ? new Set(extraFields) : undefined;
  return redactValue(value, extra, opts.keep);
}

/**
 * `keep`: only the first `keep` characters of the serialized value will be kept (an evidence
 * excerpt), so a longer string needs only its head redacted (`redactedPrefix`): a 30 MiB base64
 * attachment is not scanned whole. It stays the same reference when its head holds no secret.
 */
function redactValue(value: unknown, extra: Set<string> | undefined, keep?: number): unknown {
  if (typeof value === 'string') {
    if (keep === undefined || value.length <= keep) return redactString(value);
    const head = redactedPrefix(value, keep).text;
    return value.startsWith(head) ? value : head;
  }
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((item) => {
      const r = redactValue(item, extra, keep);
      if (r !== item) changed = true;
      return r;
    });
    return changed ? out : value;
  }
  if (value !== null && typeof value === 'object') {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const secret = (SECRET_JSON_FIELDS.has(key) || extra?.has(key)) && item !== null && item !== '[redacted]';
      const r = secret ? '[redacted]' : redactValue(item, extra, keep);
      if (r !== item) changed = true;
      out[key] = r;
    }
    return changed ? out : value;
  }
  return value;
}

/** Redacts header values: bearer tokens become `Bearer $TOKEN`, credentials headers `[redacted]`. */
export function redactHeaders(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(h)) {
    const lower = name.toLowerCase();
    if (lower === 'authorization') out[name] = redactAuthorization(value);
    else if (SECRET_HEADERS.has(lower)) out[name] = '[redacted]';
    else out[name] = redactString(value);
  }
  return out;
}

function redactAuthorization(value: string): string {
  const m = /^(\S+)\s+\S/.exec(value);
  if (!m) return value.trim() === '' ? value : '[redacted]';
  return /^bearer$/i.test(m[1]) ? `${m[1]} $TOKEN` : `${m[1]} [redacted]`;
}

/** Redacts a form-encoded body: `client_assertion` and `secretFields` values become `[redacted]`. */
export function redactForm(body: string, secretFields: readonly string[] = []): string {
  const hidden = new Set(['client_assertion', ...secretFields]);
  return body
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = decodeFormName(eq < 0 ? pair : pair.slice(0, eq));
      return hidden.has(name) && eq >= 0 ? `${pair.slice(0, eq)}=[redacted]` : redactString(pair);
    })
    .join('&');
}

function decodeFormName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}
