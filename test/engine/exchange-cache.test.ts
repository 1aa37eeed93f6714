/**
 * The run's shared exchanges (src/engine/exchange-cache.ts): every check receives its own copy of
 * a shared answer's parsed body, equal to the answer, so a check that edits it (an update body)
 * changes no other's. The first sender keeps the body as the client parsed it (every copy is parsed
 * from the text, which nothing edits); a copy is made when first read.
 */
import { describe, expect, it } from 'vitest';
import { ExchangeCache } from '../../src/engine/exchange-cache.js';
import type { Exchange, HttpResponse } from '../../src/http/types.js';

const URL_ = 'http://127.0.0.1:1/fhir/R4/Encounter/9b3e7c11-5a2f-4d8e-b6c0-1f2a3b4c5d6e';
const BODY = { resourceType: 'Encounter', id: '9b3e7c11-5a2f-4d8e-b6c0-1f2a3b4c5d6e', status: 'finished', period: { start: '2024-05-02T10:00:00Z' } };

function answer(id: string): HttpResponse {
  const text = JSON.stringify(BODY);
  return { status: 200, headers: { etag: 'W/"1"' }, text, json: JSON.parse(text), bodyTruncated: false, exchange: { id } as Exchange };
}

describe('ExchangeCache copies', () => {
  it("each check gets an equal copy of the shared body, which it may edit without changing another check's", async () => {
    const cache = new ExchangeCache();
    let sent = 0;
    const send = async () => answer(`x-${++sent}`);
    let original: HttpResponse | undefined;
    const first = await cache.get(
      'k',
      URL_,
      async () => (original = await send()),
      () => true,
      () => false,
    );
    expect(first.res.json).toBe(original!.json);
    expect(first.res.headers).not.toBe(original!.headers);
    const second = await cache.get(
      'k',
      URL_,
      send,
      () => true,
      () => false,
    );
    expect(sent).toBe(1);
    expect(second.shared).toBe(true);
    expect(second.res.json).toEqual(BODY);
    expect(second.res.json).not.toBe(first.res.json);
    (first.res.json as { status: string }).status = 'cancelled';
    (second.res.json as { period: { start: string } }).period.start = 'edited';
    const third = await cache.get(
      'k',
      URL_,
      send,
      () => true,
      () => false,
    );
    expect(third.res.json).toEqual(BODY);
    expect(third.res.headers).toEqual({ etag: 'W/"1"' });
    expect(third.res.headers).not.toBe(second.res.headers);
    expect({ ...third.res }.json).toEqual(BODY);
    third.res.json = { replaced: true };
    expect(third.res.json).toEqual({ replaced: true });
  });

  it('a body its text does not give (not JSON text) is cloned instead', async () => {
    const cache = new ExchangeCache();
    const odd: HttpResponse = { ...answer('x-1'), text: 'not json' };
    await cache.get(
      'k',
      URL_,
      async () => odd,
      () => true,
      () => false,
    );
    const hit = await cache.get(
      'k',
      URL_,
      async () => odd,
      () => true,
      () => false,
    );
    expect(hit.shared).toBe(true);
    expect(hit.res.json).toEqual(BODY);
    expect(hit.res.json).not.toBe(odd.json);
  });
});
