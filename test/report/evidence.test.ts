import { afterAll, describe, expect, test } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Exchange, RunResult } from '../../src/engine/types.js';
import { curlCommand } from '../../src/http/evidence.js';
import {
  BODY_REF_MIN,
  FAILING_BODY_CAP,
  PASSING_BODY_CAP,
  buildReport,
  checkCurl,
  evidenceOf,
  maskPhi,
  readReport,
  renderJson,
  reportSchemaErrors,
} from '../../src/report/index.js';
import { internBodies } from '../../src/report/evidence.js';
import type { ReportDocument } from '../../src/report/types.js';
import { CURP, PATIENT_ID, syntheticRun } from './synthetic-run.js';

const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');
const root = await mkdtemp(join(tmpdir(), 'report-evidence-'));
afterAll(() => rm(root, { recursive: true, force: true }));

/** A body as a real target sends it: a Bundle page of `n` MedicationRequests. */
function page(n: number, extra = ''): string {
  const entry = Array.from({ length: n }, (_, i) => ({
    resource: { resourceType: 'MedicationRequest', id: `mr-${i}`, subject: { reference: `Patient/${PATIENT_ID}` }, note: [{ text: extra }] },
  }));
  return JSON.stringify({ resourceType: 'Bundle', type: 'searchset', total: n, entry });
}

function withCurl(x: Exchange): Exchange {
  const body = x.request.body === undefined ? undefined : { body: x.request.body, truncated: !!x.request.bodyTruncated };
  return { ...x, curl: curlCommand({ ...x.request, body }) };
}

/** 12 checks; x-100001's response (a 20 KiB page) is the evidence of a passing and a failing check; one POST with a big body. */
function sharedRun(): RunResult {
  const run = syntheticRun(12);
  for (const c of run.checks) c.evidence = c.evidence.map(withCurl);
  const big = withCurl({ ...run.checks[0]!.evidence[0]!, id: 'x-100001' });
  big.response = { ...big.response!, body: page(60), bodyBytes: 20_000 };
  const capability = JSON.stringify({ resourceType: 'CapabilityStatement', rest: [{ resource: Array.from({ length: 60 }, (_, i) => ({ type: `T${i}` })) }] });
  const post = withCurl({
    ...run.checks[0]!.evidence[0]!,
    id: 'x-100002',
    request: {
      method: 'POST',
      url: 'https://fhir.example.test/fhir/R4/MedicationRequest',
      headers: { 'content-type': 'application/fhir+json' },
      body: 'y'.repeat(10_000),
    },
  });
  // Checks 0 (pass) and 4 (fail) share x-100001 (an exchange attached to both, as ctx.attach does).
  run.checks[0]!.evidence = [big, withCurl({ ...run.checks[0]!.evidence[0]!, response: { ...run.checks[0]!.evidence[0]!.response!, body: capability } })];
  run.checks[4]!.evidence = [big];
  run.checks[4]!.findings[0]!.exchange = 'x-100001';
  run.checks[4]!.curl = big.curl;
  run.checks[1]!.evidence = [post, post];
  run.checks[1]!.curl = post.curl;
  // The same CapabilityStatement body, in another exchange of another passing check.
  run.checks[2]!.evidence = [withCurl({ ...run.checks[2]!.evidence[0]!, response: { ...run.checks[2]!.evidence[0]!.response!, body: capability } })];
  return run;
}

describe('evidence stored once (format 2.x)', () => {
  const run = sharedRun();
  const doc = buildReport(run);
  const byId = (id: string) => doc.checks.find((c) => c.id === id)!;

  test('an exchange cited by several checks is stored once; checks cite it by id', () => {
    expect(Object.keys(doc.exchanges).filter((id) => id === 'x-100001')).toHaveLength(1);
    expect(byId(run.checks[0]!.id).evidence).toContain('x-100001');
    expect(byId(run.checks[4]!.id).evidence).toEqual(['x-100001']);
    // Attached twice to one check: listed once.
    expect(byId(run.checks[1]!.id).evidence).toEqual(['x-100002']);
    for (const c of doc.checks) for (const id of c.evidence) expect(doc.exchanges[id]?.id).toBe(id);
    expect(reportSchemaErrors(JSON.parse(JSON.stringify(doc)))).toEqual([]);
  });

  test('bodies of BODY_REF_MIN characters or more are stored once, keyed by the sha256 of their text', () => {
    const capabilityRefs = Object.values(doc.exchanges)
      .map((x) => x.response?.bodyRef)
      .filter((ref) => ref !== undefined && doc.bodies[ref]!.startsWith('{"resourceType":"CapabilityStatement"'));
    expect(capabilityRefs.length).toBe(2);
    expect(new Set(capabilityRefs).size).toBe(1);
    for (const [key, text] of Object.entries(doc.bodies)) {
      expect(key).toBe(sha256(text));
      expect(text.length).toBeGreaterThanOrEqual(BODY_REF_MIN);
    }
    for (const x of Object.values(doc.exchanges)) {
      for (const part of [x.request, x.response]) {
        if (part?.body !== undefined) expect(part.body.length).toBeLessThan(BODY_REF_MIN);
        expect(part?.body !== undefined && part?.bodyRef !== undefined).toBe(false);
      }
    }
  });

  test('a body in the evidence of a failed check is kept as recorded; one only passing checks cite is cut at PASSING_BODY_CAP', () => {
    const shared = doc.exchanges['x-100001']!.response!;
    expect(doc.bodies[shared.bodyRef!]).toBe(page(60));
    expect(page(60).length).toBeGreaterThan(PASSING_BODY_CAP);
    expect(page(60).length).toBeLessThan(FAILING_BODY_CAP);
    expect(shared.bodyTruncated).toBeUndefined();
    const post = doc.exchanges['x-100002']!.request;
    expect(doc.bodies[post.bodyRef!]).toBe('y'.repeat(PASSING_BODY_CAP));
    expect(post.bodyTruncated).toBe(true);
  });

  test('curls a reader rebuilds are left out; evidenceOf and checkCurl give them back exactly', () => {
    expect(Object.values(doc.exchanges).every((x) => x.curl === undefined)).toBe(true);
    const failing = byId(run.checks[4]!.id);
    expect(failing.curl).toBeUndefined();
    expect(failing.curlExchange).toBe('x-100001');
    expect(checkCurl(doc, failing)).toBe(run.checks[4]!.curl);
    expect(evidenceOf(doc, failing)).toEqual([JSON.parse(JSON.stringify(run.checks[4]!.evidence[0]))]);
    // A cut request body: the curl is rebuilt from the cut body and says so.
    const post = evidenceOf(doc, byId(run.checks[1]!.id))[0]!;
    expect(post.curl).toBe(
      `${curlCommand({ ...post.request, body: { body: 'y'.repeat(PASSING_BODY_CAP), truncated: false } })}  # request body truncated in evidence`,
    );
    expect(checkCurl(doc, byId(run.checks[1]!.id))).toBe(post.curl);
  });

  test('a curl that is not the rebuilt one is kept as recorded', () => {
    const odd = syntheticRun(3);
    const x = odd.checks[0]!.evidence[0]!;
    x.curl = 'curl --data-binary @body.bin  # binary request body not recorded';
    odd.checks[0]!.curl = 'curl https://elsewhere.example.test/';
    const d = buildReport(odd);
    expect(d.exchanges[x.id]!.curl).toBe(x.curl);
    const c = d.checks.find((k) => k.id === odd.checks[0]!.id)!;
    expect(c.curl).toBe('curl https://elsewhere.example.test/');
    expect(c.curlExchange).toBeUndefined();
  });

  test('two different exchanges under one id are kept apart, and the findings follow', () => {
    const clash = syntheticRun(6);
    const other = { ...clash.checks[4]!.evidence[0]!, id: clash.checks[0]!.evidence[0]!.id };
    clash.checks[4]!.evidence = [other];
    clash.checks[4]!.findings[0]!.exchange = other.id;
    const d = buildReport(clash);
    const failing = d.checks.find((c) => c.id === clash.checks[4]!.id)!;
    expect(failing.evidence).toEqual([`${other.id}~2`]);
    expect(failing.findings[0]!.exchange).toBe(`${other.id}~2`);
    expect(d.exchanges[`${other.id}~2`]!.response!.status).toBe(500);
    expect(d.exchanges[other.id]!.response!.status).toBe(200);
  });

  test('storing is idempotent', () => {
    expect(internBodies(doc)).toEqual(doc);
  });

  test('secret scrubbing scans the shared bodies, and their keys hash the scrubbed text', () => {
    const jwt = 'eyJhbGciOiJFUzM4NCJ9.eyJzdWIiOiJjb25mb3JtYW5jZS1tYWluIn0.c2lnbmF0dXJlLXZhbHVl';
    const leaky = sharedRun();
    leaky.checks[4]!.evidence[0]!.response!.body = page(10, `token ${jwt}`);
    const d = buildReport(leaky);
    const text = JSON.stringify(d);
    expect(text).not.toContain(jwt);
    const ref = d.exchanges['x-100001']!.response!.bodyRef!;
    expect(d.bodies[ref]).toContain('[redacted]');
    expect(ref).toBe(sha256(d.bodies[ref]!));
  });

  test('--redact-phi masks PHI in the shared bodies; the keys hash the masked text', () => {
    const phi = sharedRun();
    phi.checks[4]!.evidence[0]!.response!.body = page(10, `CURP ${CURP}`);
    const original = buildReport(phi);
    const masked = maskPhi(original);
    const text = JSON.stringify(masked);
    expect(text).not.toContain(CURP);
    expect(text.toLowerCase()).not.toContain(PATIENT_ID);
    expect(Object.keys(masked.bodies).length).toBeGreaterThan(0);
    for (const [key, body] of Object.entries(masked.bodies)) expect(key).toBe(sha256(body));
    // No key is the hash of an unmasked body.
    for (const key of Object.keys(original.bodies)) if (/CURP|[0-9a-f]{8}-[0-9a-f]{4}/.test(original.bodies[key]!)) expect(masked.bodies[key]).toBeUndefined();
    expect(reportSchemaErrors(JSON.parse(text))).toEqual([]);
    expect(maskPhi(masked)).toEqual(masked);
  });
});

describe('report.json text', () => {
  const doc = buildReport(sharedRun());
  const text = renderJson(doc);

  test('parses back to the document; one line per check, requirement, exchange and body', () => {
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(doc)));
    const lines = text.split('\n');
    for (const c of doc.checks) expect(lines.filter((l) => l.includes(`{"id":${JSON.stringify(c.id)},`))).toHaveLength(1);
    for (const id of Object.keys(doc.exchanges)) expect(lines.filter((l) => l.startsWith(`    ${JSON.stringify(id)}: {`))).toHaveLength(1);
    for (const key of Object.keys(doc.bodies)) expect(lines.filter((l) => l.startsWith(`    "${key}": "`))).toHaveLength(1);
    expect(lines[1]).toBe(`  "formatVersion": "${doc.formatVersion}",`);
  });
});

describe('readReport', () => {
  const run = sharedRun();
  const current = buildReport(run);

  /** The same run in format 1.0: every check with its evidence (and curl) inline. */
  function formatOne(doc: ReportDocument): unknown {
    // 1.x had no timeline (2.1).
    const { exchanges: _x, bodies: _b, timeline: _t, ...rest } = doc;
    return {
      ...rest,
      formatVersion: '1.0',
      checks: doc.checks.map(({ curlExchange: _c, ...c }) => {
        const curl = checkCurl(doc, { curlExchange: _c, curl: c.curl });
        return { ...c, evidence: evidenceOf(doc, c), ...(curl === undefined ? {} : { curl }) };
      }),
    };
  }

  test('reads a 1.x report (evidence inline) into the current model', async () => {
    const v1 = formatOne(current);
    expect(reportSchemaErrors(v1)).toEqual([]);
    const path = join(root, 'report-1.0.json');
    await writeFile(path, JSON.stringify(v1, null, 2));
    const { timeline: _t, ...withoutTimeline } = current;
    expect(await readReport(path)).toEqual(JSON.parse(JSON.stringify(withoutTimeline)));
  });

  test('reads back a 2.x report, and names broken references', async () => {
    const path = join(root, 'report-2.json');
    await writeFile(path, renderJson(current));
    expect(await readReport(path)).toEqual(JSON.parse(await readFile(path, 'utf8')));
    const broken = JSON.parse(renderJson(current));
    broken.checks[0].evidence.push('x-999999');
    const ref = broken.exchanges['x-100001'].response.bodyRef;
    delete broken.bodies[ref];
    const errors = reportSchemaErrors(broken);
    expect(errors).toContain(`checks.0.evidence.2: no exchange 'x-999999' in exchanges`);
    expect(errors).toContain(`exchanges.x-100001.response.bodyRef: no body '${ref}' in bodies`);
  });
});
