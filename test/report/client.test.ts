/**
 * Functions of the page script (src/report/assets/report.client.js) that must
 * agree with the server side, run here in Node: the curl a report leaves out
 * is rebuilt in the page exactly as src/http/evidence.ts builds it.
 */
import { describe, expect, test } from 'vitest';
import { readFileSync } from 'node:fs';
import { curlCommand } from '../../src/http/evidence.js';

const SCRIPT = readFileSync(new URL('../../src/report/assets/report.client.js', import.meta.url), 'utf8');

/** The text of `function name(...) { ... }` from the script (its body ends at the first line `  }`). */
function source(name: string): string {
  const m = new RegExp(`\\n  function ${name}\\([^)]*\\) \\{[\\s\\S]*?\\n  \\}\\n`).exec(SCRIPT);
  if (!m) throw new Error(`no function ${name} in report.client.js`);
  return m[0];
}

const pageCurl = new Function(`${source('shellQuote')}${source('curlCommand')}; return curlCommand;`)() as (
  req: { method: string; url: string; headers: Record<string, string> },
  body: string | undefined,
  truncated: boolean,
) => string;
const indentJson = new Function(`${source('indentJson')}; return indentJson;`)() as (text: string) => string;

describe('the page rebuilds curl commands as the HTTP layer builds them', () => {
  const requests: Array<{ method: string; url: string; headers: Record<string, string> }> = [
    {
      method: 'GET',
      url: 'https://fhir.example.test/fhir/R4/Encounter?patient=p&_count=5',
      headers: { accept: 'application/fhir+json', authorization: 'Bearer $TOKEN' },
    },
    {
      method: 'POST',
      url: "https://t.example/it's",
      headers: { 'content-type': 'application/fhir+json', host: 'x', 'content-length': '12', 'x-odd': 'a\'b"c $HOME `x`' },
    },
    { method: 'PUT', url: 'https://t.example/a', headers: { authorization: 'Basic $TOKEN', 'if-match': 'W/"1"' } },
    { method: 'DELETE', url: 'https://t.example/a', headers: { authorization: 'Bearer abc' } },
  ];
  const bodies: Array<[string | undefined, boolean]> = [
    [undefined, false],
    ['{"resourceType":"Encounter","note":"it\'s \\"quoted\\"\\n$x"}', false],
    ['grant_type=client_credentials&client_assertion=[redacted]', false],
    ['y'.repeat(100), true],
    ['', false],
  ];
  test.each(requests.flatMap((r) => bodies.map(([b, t]) => [r, b, t] as const)))('%j body %j truncated %s', (req, body, truncated) => {
    const expected = curlCommand({ ...req, body: body === undefined ? undefined : { body, truncated } });
    expect(pageCurl(req, body, truncated)).toBe(expected);
  });
});

describe('indentJson (bodies cut in the evidence)', () => {
  test('indents what parses up to the cut, and changes nothing but whitespace outside strings', () => {
    const cut = JSON.stringify({ a: [], b: {}, c: [1, { d: 'x,y:{"[ ' }], e: 'cut here' }).slice(0, -7);
    const out = indentJson(cut);
    expect(out).toBe('{\n  "a": [],\n  "b": {},\n  "c": [\n    1,\n    {\n      "d": "x,y:{\\"[ "\n    }\n  ],\n  "e": "cut');
    const squeeze = (s: string) => s.replace(/("(?:\\.|[^"\\])*"?)|\s+/g, (_m, str: string | undefined) => str ?? '');
    expect(squeeze(out)).toBe(squeeze(cut));
  });
});
