import { describe, expect, it } from 'vitest';
import { jsonTextMayHoldSecret, redactForm, redactHeaders, redactJson, redactString, redactedPrefix, registerSecret, unregisterSecret } from '../src/redact.js';

const JWT = 'eyJhbGciOiJFUzM4NCIsImtpZCI6ImsxIn0.eyJpc3MiOiJjb25mb3JtYW5jZS1tYWluIn0.MEUCIQDabc-_def';

describe('redact', () => {
  it('replaces registered secrets and ignores short values', () => {
    registerSecret('s3cr3t-value-xyz');
    registerSecret('short');
    expect(redactString('a s3cr3t-value-xyz b s3cr3t-value-xyz')).toBe('a [redacted] b [redacted]');
    expect(redactString('short stays')).toBe('short stays');
  });

  it("a secret unregistered (a run's own, once its reports are written) is no longer replaced; the others still are", () => {
    registerSecret('http://127.0.0.1:4000/run-one-secret');
    registerSecret('http://127.0.0.1:4001/run-two-secret');
    expect(redactString('http://127.0.0.1:4000/run-one-secret/x')).toBe('[redacted]/x');
    unregisterSecret('http://127.0.0.1:4000/run-one-secret');
    expect(redactString('http://127.0.0.1:4000/run-one-secret/x')).toBe('http://127.0.0.1:4000/run-one-secret/x');
    expect(redactString('http://127.0.0.1:4001/run-two-secret')).toBe('[redacted]');
    expect(jsonTextMayHoldSecret('{"u":"http://127.0.0.1:4000/run-one-secret"}')).toBe(false);
  });

  it('treats regex characters in secrets literally', () => {
    registerSecret('a.b*c+d?(e)');
    expect(redactString('x a.b*c+d?(e) y aXbbc')).toBe('x [redacted] y aXbbc');
  });

  it('redacts JWT-shaped strings, including a truncated one', () => {
    expect(redactString(`token ${JWT} end`)).toBe('token [redacted-jwt] end');
    expect(redactString('cut eyJhbGciOiJFUzM4NCJ9.eyJpc3')).toBe('cut [redacted-jwt]');
    expect(redactString('plain eyJ text')).toBe('plain eyJ text');
  });

  it('keeps a string of the JWT shape that is no JOSE object (a search cursor: base64url JSON without alg, a dot, a tag)', () => {
    const cursor = `${Buffer.from(JSON.stringify({ org: 'org-a', snapshot: 591, afterTime: 1736366400000 })).toString('base64url')}.QkZvVXNRLTZWa2pY`;
    const link = `https://h/fhir/R4/MedicationRequest?patient=p&_cursor=${cursor}`;
    expect(redactString(link)).toBe(link);
    const page = JSON.stringify({ resourceType: 'Bundle', link: [{ relation: 'next', url: link }] });
    expect(jsonTextMayHoldSecret(page)).toBe(false);
    expect(jsonTextMayHoldSecret(page.replace('"next"', `"${JWT}"`))).toBe(true);
    // Registered, such a string is a secret like any other.
    const opaque = `${Buffer.from('{"sid":"s-1"}').toString('base64url')}.c2lnbmF0dXJl`;
    registerSecret(opaque);
    expect(redactString(`token=${opaque}`)).toBe('token=[redacted]');
    unregisterSecret(opaque);
  });

  it('a registered token that is a whole JWT is redacted by its shape wherever it appears; a five-part JWE is kept whole', () => {
    registerSecret(JWT);
    expect(redactString(`a ${JWT} b`)).toBe('a [redacted-jwt] b');
    expect(redactString(`?token=${JWT}&x=1`)).toBe('?token=[redacted-jwt]&x=1');
    expect(redactJson({ note: `was ${JWT}` })).toEqual({ note: 'was [redacted-jwt]' });
    // Five parts: the JWT shape would leave the last two visible, so the value itself is registered.
    const jwe = 'eyJhbGciOiJSU0EtT0FFUCJ9.a2V5LWVuY3J5cHRlZA.aXYtdmFsdWUx.Y2lwaGVydGV4dC1ib2R5.dGFnLXZhbHVl';
    registerSecret(jwe);
    expect(redactString(`t=${jwe};`)).toBe('t=[redacted];');
  });

  it('redacts PEM private key blocks but not certificates', () => {
    const pem = '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49\n-----END PRIVATE KEY-----';
    const ec = '-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----';
    expect(redactString(`k=${pem};${ec}`)).toBe('k=[redacted-private-key];[redacted-private-key]');
    const cert = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
    expect(redactString(cert)).toBe(cert);
  });

  it('redacts JSON secret fields and strings, keeping the reference when clean', () => {
    const jwk = { kty: 'EC', crv: 'P-384', x: 'abc', y: 'def', d: 'private-scalar' };
    expect(redactJson({ keys: [jwk], access_token: 'opaque', token_type: 'bearer', nested: { id_token: JWT, note: `see ${JWT}` } })).toEqual({
      keys: [{ kty: 'EC', crv: 'P-384', x: 'abc', y: 'def', d: '[redacted]' }],
      access_token: '[redacted]',
      token_type: 'bearer',
      nested: { id_token: '[redacted]', note: 'see [redacted-jwt]' },
    });
    const clean = { resourceType: 'Encounter', id: 'e1', participant: [{ individual: { reference: 'Practitioner/1' } }] };
    expect(redactJson(clean)).toBe(clean);
    expect(redactJson({ api_secret: 'v', other: 'w' }, ['api_secret'])).toEqual({ api_secret: '[redacted]', other: 'w' });
  });

  it('redacts headers: bearer to $TOKEN, other credentials to [redacted]', () => {
    expect(redactHeaders({ Authorization: 'Bearer abc.def', cookie: 'sid=1', 'x-other': `v ${JWT}`, accept: 'application/fhir+json' })).toEqual({
      Authorization: 'Bearer $TOKEN',
      cookie: '[redacted]',
      'x-other': 'v [redacted-jwt]',
      accept: 'application/fhir+json',
    });
    expect(redactHeaders({ authorization: 'Basic dXNlcjpwYXNz' }).authorization).toBe('Basic [redacted]');
    expect(redactHeaders({ authorization: 'garbage' }).authorization).toBe('[redacted]');
  });

  it('redacts form fields by name', () => {
    expect(redactForm('grant_type=client_credentials&client_assertion=abc&pw=hunter2&scope=x', ['pw'])).toBe(
      'grant_type=client_credentials&client_assertion=[redacted]&pw=[redacted]&scope=x',
    );
  });

  it('is fast on a large clean body', () => {
    const big = JSON.stringify({ entry: Array.from({ length: 5000 }, (_, i) => ({ resource: { id: `id-${i}`, text: 'lorem ipsum dolor' } })) });
    const parsed: unknown = JSON.parse(big);
    expect(redactJson(parsed)).toBe(parsed);
    expect(redactString(big)).toBe(big);
  });

  it('redactJson with keep redacts only the head of a long string, the rest never reaching an excerpt', () => {
    const keep = 1000;
    const clean = { data: 'A'.repeat(200_000) };
    expect(redactJson(clean, [], { keep })).toBe(clean);
    const leaky = { data: `${'A'.repeat(100)} ${JWT} ${'B'.repeat(200_000)}` };
    const out = redactJson(leaky, [], { keep }) as { data: string };
    expect(out.data).not.toContain(JWT);
    expect(out.data).toContain('[redacted-jwt]');
    expect(out.data.length).toBeLessThanOrEqual(keep);
    // Short strings are redacted whole, as without keep.
    expect(redactJson({ t: JWT }, [], { keep })).toEqual({ t: '[redacted-jwt]' });
  });

  describe('redactedPrefix', () => {
    const SECRET = 'prefix-secret-0123456789';
    registerSecret(SECRET);
    const CAP = 1000;

    it('redacts a secret inside the cap of a long text and cuts at the cap', () => {
      const text = `${'a'.repeat(500)}${SECRET}${'b'.repeat(1_000_000)}`;
      expect(redactedPrefix(text, CAP)).toEqual({ text: `${'a'.repeat(500)}[redacted]${'b'.repeat(490)}`, cut: true });
    });

    it('gives what redactString gives, cut, for a short text', () => {
      const text = `${SECRET} and ${'c'.repeat(20)}`;
      expect(redactedPrefix(text, CAP)).toEqual({ text: `[redacted] and ${'c'.repeat(20)}`, cut: false });
      expect(redactedPrefix(text, 12)).toEqual({ text: '[redacted] a', cut: true });
    });

    it('shows no part of a secret cut at the end of the scanned head, even when redactions before it shrink the text', () => {
      // Many secrets (each 24 characters -> 10) shorten the head by more than the margin: the whole text is redacted.
      const many = SECRET.repeat(10_000);
      const text = `${many}${'d'.repeat(1_000_000)}`;
      const out = redactedPrefix(text, CAP);
      expect(out.text).toBe('[redacted]'.repeat(100));
      expect(out.text).not.toContain('prefix-secret');
    });
  });
});

describe('jsonTextMayHoldSecret: the evidence fast path for JSON bodies', () => {
  const jwt = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln';
  registerSecret('opaque-token-1234');
  registerSecret('opaque/token-5678');
  /** The texts and whether redaction changes them: each `false` exactly, each `true` a text redaction does change. */
  const cases: Array<[string, string, boolean]> = [
    ['a plain FHIR resource', '{"resourceType":"Encounter","id":"e1","status":"finished"}', false],
    ['narrative with ordinary escapes', '{"resourceType":"Patient","text":{"div":"<div>a\\nb \\"q\\"</div>"}}', false],
    ['a JWT in a value', `{"resourceType":"Basic","note":"${jwt}"}`, true],
    ['a registered opaque token', '{"x":"Bearer opaque-token-1234"}', true],
    ['an access_token member', '{"access_token":"abc","token_type":"Bearer"}', true],
    ['a private JWK member, spaced', '{"kty":"EC","d" : "secretbits"}', true],
    ['a key spelled with a unicode escape', '{"kty":"EC","\\u0064":"secretbits"}', true],
    ['a registered secret behind an escaped slash (absent from the text as written)', '{"x":"opaque\\/token-5678"}', true],
    ['a PEM private key', '{"key":"-----BEGIN PRIVATE KEY-----\\nMIIB\\n-----END PRIVATE KEY-----"}', true],
  ];
  it.each(cases)('%s', (_name, text, expected) => {
    expect(jsonTextMayHoldSecret(text)).toBe(expected);
    if (!expected) {
      const parsed = JSON.parse(text) as unknown;
      expect(redactJson(parsed)).toBe(parsed);
      expect(redactString(text)).toBe(text);
    } else {
      const parsed = JSON.parse(text) as unknown;
      expect(redactJson(parsed) !== parsed || redactString(text) !== text).toBe(true);
    }
  });

  it('a field the caller names is a secret too; a registered secret JSON escapes is found in its escaped form', () => {
    expect(jsonTextMayHoldSecret('{"resourceType":"Basic","client_secret":"x"}', ['client_secret'])).toBe(true);
    const secret = 'pass"word\\with\nescapes';
    registerSecret(secret);
    expect(jsonTextMayHoldSecret('{"resourceType":"Basic"}')).toBe(false);
    const text = JSON.stringify({ resourceType: 'Basic', note: `x ${secret} y` });
    expect(jsonTextMayHoldSecret(text)).toBe(true);
    expect(JSON.stringify(redactJson(JSON.parse(text) as unknown))).not.toContain('with');
  });
});
