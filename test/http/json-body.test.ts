/** A JSON body in parts (src/http/json-body.ts): what is sent is exactly JSON.stringify(value). */
import { describe, expect, it } from 'vitest';
import { jsonBody, LONG_STRING_CHARS } from '../../src/http/json-body.js';

const sent = (body: ReturnType<typeof jsonBody>) => (typeof body === 'string' ? body : Buffer.concat(body.chunks).toString('utf8'));
const isParts = (body: ReturnType<typeof jsonBody>) => typeof body !== 'string';

describe('jsonBody', () => {
  const doc = Buffer.alloc(LONG_STRING_CHARS, 0x25).toString('base64');

  it('a long string that needs no escape goes as its own part; the bytes are JSON.stringify of the value', () => {
    const value = { resourceType: 'DocumentReference', content: [{ attachment: { contentType: 'application/pdf', data: doc } }] };
    const body = jsonBody(value);
    expect(isParts(body)).toBe(true);
    expect(sent(body)).toBe(JSON.stringify(value));
  });

  it('the same text again (another string of equal content) goes in parts too; a long text JSON must escape does not', () => {
    const again = `${doc.slice(0, 10)}${doc.slice(10)}`;
    const body = jsonBody({ data: again });
    expect(isParts(body)).toBe(true);
    expect(sent(body)).toBe(JSON.stringify({ data: again }));
    const quoted = `"${doc.slice(1)}`;
    const escaped = jsonBody({ data: quoted });
    expect(isParts(escaped)).toBe(false);
    expect(escaped).toBe(JSON.stringify({ data: quoted }));
    const short = jsonBody({ data: 'abc' });
    expect(short).toBe('{"data":"abc"}');
  });
});
