/**
 * A refused oversized body (413) is drained, not cut off: a client still sending when
 * the 413 goes out reads the response and can go on using the connection
 * (RFC 9112 section 9.6). Closing with unread data resets the connection, and a
 * client still writing then sees EPIPE instead of the 413.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ReferenceServer } from '../../../src/reference/server.js';
import { accessToken, startStub } from './helpers.js';

let server: ReferenceServer;
let token: string;
beforeAll(async () => {
  server = await startStub({ limits: { documentMaxBytes: 100_000, maxBodyBytes: 100_000 } });
  token = await accessToken(server);
});
afterAll(() => server.close());

/** Sends `head` and `size` body bytes in small slices, then a second request on the same connection. */
function sendThenReuse(head: string, size: number): Promise<{ statuses: string[]; error?: string }> {
  const u = new URL(server.url);
  return new Promise((done) => {
    const sock = connect(Number(u.port), u.hostname);
    let response = '';
    let error: string | undefined;
    sock.on('data', (d: Buffer) => (response += d.toString('latin1')));
    sock.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    sock.on('close', () => done({ statuses: response.match(/HTTP\/1\.1 \d{3}/g) ?? [], error }));
    sock.on('connect', async () => {
      sock.write(head);
      const slice = Buffer.alloc(64 * 1024, 0x25);
      for (let sent = 0; sent < size && !sock.destroyed; sent += slice.length) {
        await new Promise((r) => setTimeout(r, 1));
        if (!sock.write(slice.subarray(0, Math.min(slice.length, size - sent)))) await new Promise((r) => sock.once('drain', r));
      }
      if (!sock.destroyed) sock.write(`GET /fhir/R5/metadata HTTP/1.1\r\nHost: ${u.host}\r\nConnection: close\r\n\r\n`);
    });
  });
}

const head = (path: string, type: string, size: number, framing: 'length' | 'chunked' = 'length') =>
  `POST ${path} HTTP/1.1\r\nHost: ${new URL(server.url).host}\r\nAuthorization: Bearer ${token}\r\nContent-Type: ${type}\r\n` +
  `${framing === 'length' ? `Content-Length: ${size}` : 'Transfer-Encoding: chunked'}\r\n\r\n`;

test.each([
  ['$upload over documentMaxBytes (Content-Length known)', '/fhir/R5/DocumentReference/d1/$upload', 'application/pdf'],
  ['a JSON write over maxBodyBytes', '/fhir/R4/MedicationRequest', 'application/fhir+json'],
])(
  '%s: 413, the rest of the body is read, the connection stays usable',
  async (_name, path, type) => {
    const size = 2_000_000;
    const r = await sendThenReuse(head(path, type, size), size);
    expect(r.error).toBeUndefined();
    expect(r.statuses).toEqual(['HTTP/1.1 413', 'HTTP/1.1 200']);
  },
  30_000,
);
