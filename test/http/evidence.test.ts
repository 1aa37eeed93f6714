import { describe, expect, it } from 'vitest';
import { bodyExcerpt, decodeBody, EVIDENCE_BODY_CAP, isText, parseJson } from '../../src/http/evidence.js';

const fatal = (buf: Buffer) => new TextDecoder('utf-8', { fatal: true }).decode(buf, { stream: true });

describe('decodeBody', () => {
  it('decodes valid UTF-8 as the fatal decoder does: multi-byte characters kept, a leading BOM dropped', () => {
    for (const text of ['{"a":"é ü 中 😀"}', '\uFEFF{"bom":true}', '', 'x\uFEFFy']) {
      const buf = Buffer.from(text, 'utf8');
      expect(decodeBody(buf)).toEqual({ text: fatal(buf), binary: false });
    }
    expect(decodeBody(Buffer.from('\uFEFF{"bom":true}', 'utf8')).text).toBe('{"bom":true}');
  });

  it('tolerates a body cut inside its last character (the cap), and reads other invalid bytes as binary', () => {
    const cut = Buffer.from('{"a":"中', 'utf8').subarray(0, -1);
    expect(decodeBody(cut)).toEqual({ text: fatal(cut), binary: false });
    expect(isText(cut)).toBe(true);
    const invalid = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    expect(decodeBody(invalid).binary).toBe(true);
    expect(isText(invalid)).toBe(false);
  });
});

describe('parseJson', () => {
  it('parses any JSON text; an empty or whitespace-only body and a text that is not JSON give undefined', () => {
    expect(parseJson(' {"a":[1,null]}\n')).toEqual({ a: [1, null] });
    expect(parseJson('0')).toBe(0);
    for (const text of ['', ' \n\t\r', '\u00a0\ufeff\u2028', '{"a":', 'not json']) expect(parseJson(text), JSON.stringify(text)).toBeUndefined();
  });
});

describe('bodyExcerpt of a JSON body longer than the cap', () => {
  const page = (note: string) =>
    JSON.stringify({
      resourceType: 'Bundle',
      entry: Array.from({ length: 2000 }, (_, i) => ({ resource: { id: `id-${i}`, note: i === 3 ? note : 'lorem ipsum dolor sit amet' } })),
    });

  it('keeps the head of a page holding no secret, cut at the cap, as the walk of its value would', () => {
    const text = page('plain');
    expect(text.length).toBeGreaterThan(EVIDENCE_BODY_CAP);
    expect(bodyExcerpt(text, { json: JSON.parse(text) })).toEqual({ body: text.slice(0, EVIDENCE_BODY_CAP), truncated: true });
  });

  it('redacts a token in its head, and a secret field', () => {
    const jwt = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLXZhbHVl';
    const text = page(`token ${jwt}`);
    const excerpt = bodyExcerpt(text, { json: JSON.parse(text) });
    expect(excerpt.truncated).toBe(true);
    expect(excerpt.body).not.toContain(jwt);
    expect(excerpt.body).toContain('[redacted-jwt]');
    const withField = page('x').replace('"note":"x"', '"note":"x","access_token":"opaque-secret-value"');
    expect(bodyExcerpt(withField, { json: JSON.parse(withField) }).body).not.toContain('opaque-secret-value');
  });
});
