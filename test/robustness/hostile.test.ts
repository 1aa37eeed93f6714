/**
 * The real CLI against hostile targets: it must neither crash nor hang past its
 * deadline, give the affected checks `error` verdicts with a one-line reason,
 * still write every report file, exit 3 (1 where the target also broke a rule
 * the spec states), and keep memory bounded (bodies capped; `bodyTruncated` in
 * the evidence).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createReferenceServer } from '../../src/reference/index.js';
import type { ReferenceServer } from '../../src/reference/server.js';
import type { CheckResult } from '../../src/engine/types.js';
import { REPORT_FILES, readLatestReport, runCli, tempDir, writeTargetConfig } from '../cli/cli.js';
import { patchJson, refusedUrl, startProxy, startSelfSignedTls, startTransportHostile, type Hostile, type ProxyRules } from './hostile.js';

const REQUEST_MS = 1500;
const MB = 1024 * 1024;

interface Case {
  name: string;
  /** Base URL (and token URL) of the hostile target; `hostile` when a server of ours plays it. */
  start: (reference: string) => Promise<{ url: string; tokenUrl?: string; hostile?: Hostile }>;
  /** Exit code: 3 when only errors were possible; 1 when the target also broke a stated rule. */
  code: 1 | 3;
  /** The one-line reason a person reads on the affected checks. */
  reason: RegExp;
  only?: string;
  runMs?: number;
}

const transport = (kind: string) => async () => {
  const hostile = await startTransportHostile(kind);
  return { url: hostile.url, hostile };
};
const proxied = (rules: ProxyRules) => async (reference: string) => {
  const hostile = await startProxy(reference, rules);
  return { url: hostile.url, tokenUrl: hostile.tokenUrl, hostile };
};
const document = (path: string, body: string, type = 'application/json') => (_m: string, p: string) =>
  p === path ? { status: 200, headers: { 'content-type': type }, body } : undefined;
const THROTTLED = JSON.stringify({ resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'throttled', diagnostics: 'HPB-00105: Rate limit exceeded' }] });

const DISCOVERY = '^discovery\\.';
const CASES: Case[] = [
  { name: 'connection refused', start: async () => ({ url: await refusedUrl() }), code: 3, reason: /^ERR_TARGET_UNREACHABLE: connection refused by 127\.0\.0\.1:\d+$/ },
  { name: 'host does not resolve (.invalid)', start: async () => ({ url: 'http://conformance-target.invalid' }), code: 3, reason: /^ERR_DNS: cannot resolve host conformance-target\.invalid$/ },
  {
    name: 'TLS with a self-signed certificate',
    start: async () => {
      const hostile = await startSelfSignedTls();
      return { url: hostile.url, hostile };
    },
    code: 3,
    reason: /^ERR_TLS: TLS handshake with 127\.0\.0\.1:\d+ failed: self-signed certificate/,
  },
  { name: 'accepts and never answers', start: transport('silent'), code: 3, reason: /ERR_TIMEOUT: no response within 1\.5 s/, runMs: 4000 },
  { name: 'a body that trickles for minutes', start: transport('trickle'), code: 3, reason: /ERR_TIMEOUT: response body not complete within 1\.5 s \(\d+ bytes received\)/, runMs: 4000 },
  { name: 'a body cut off mid-JSON', start: transport('cut-off'), code: 3, reason: /^ERR_PROTOCOL: connection closed mid-body by 127\.0\.0\.1:\d+ after \d+ bytes$/ },
  // A gateway's 502 page is an outage: retried per the spec's 5xx rule, then no verdict.
  { name: 'an HTML error page where JSON was expected', start: transport('html'), code: 3, reason: /GET \/openapi\.json answered 502, expected 200|kept answering 502 to GET .+ after the spec.s retries/, runMs: 4000 },
  { name: 'a 50 MB body', start: transport('huge'), code: 3, reason: /^the response to GET .+ was cut at the 2 MiB body cap; no verdict/ },
  // Redirects are never followed (the bearer token must not travel elsewhere): a wrong baseUrl, not a verdict.
  { name: 'a redirect loop', start: transport('redirect-loop'), code: 3, reason: /^the target redirected GET .+ to .+\?hop=1 \(redirects are not followed; check baseUrl\); no verdict/ },
  { name: 'a storm of 500s', start: transport('500-storm'), code: 3, reason: /GET \/openapi\.json answered 500, expected 200|kept answering 500 to GET .+ after the spec.s retries/, runMs: 4000 },
  { name: '503 with Retry-After', start: transport('503-retry-after'), code: 3, reason: /GET \/openapi\.json answered 503, expected 200|kept answering 503 to GET .+ after the spec.s retries/, runMs: 4000 },
  { name: '503 without Retry-After', start: transport('503-no-retry-after'), code: 3, reason: /GET \/openapi\.json answered 503, expected 200|kept answering 503 to GET .+ after the spec.s retries/, runMs: 4000 },
  { name: 'no status line and no headers (raw socket)', start: transport('no-headers'), code: 3, reason: /^ERR_PROTOCOL: no valid HTTP response from 127\.0\.0\.1:\d+: Response does not match the HTTP\/1\.1 protocol/ },
  // Valid HTTP with no header at all: the documents it serves break stated rules (real failures, exit 1).
  { name: 'a status line and no headers (raw socket)', start: transport('status-line-only'), code: 1, reason: /^ERR_DISCOVERY: no R4 .+ known: discovery failed \(\/openapi\.json has no "openapi" version field/, only: '^(discovery|medication-request\\.read-fixture)' },
  // The wrong media type on every FHIR answer breaks "Payload media type for FHIR calls: application/fhir+json" (exit 1).
  {
    name: 'the wrong content type',
    start: proxied({ tokenDirect: true, alter: (_p, res) => void (res.headers['content-type'] = 'text/plain') }),
    code: 1,
    reason: /^FHIR response is not application\/fhir\+json/,
    only: '^(invariants|discovery\\.metadata)',
  },
  // The published documents are the spec's own subject (OpenAPI 3.0.3, R4 CapabilityStatement): real failures.
  { name: 'an invalid OpenAPI document', start: proxied({ tokenDirect: true, answer: document('/openapi.json', '{"openapi":"3.0.3","info":{"title":"x"},"paths":42}') }), code: 1, reason: /is not a valid OpenAPI document/, only: DISCOVERY },
  { name: 'an OpenAPI document of the wrong version', start: proxied({ tokenDirect: true, alter: (p, res) => p === '/openapi.json' && patchJson(res, (d) => void (d.openapi = '3.1.0')) }), code: 1, reason: /\/openapi\.json is OpenAPI 3\.1\.0, expected 3\.0\.3/, only: DISCOVERY },
  {
    name: 'a CapabilityStatement of the wrong version',
    start: proxied({ tokenDirect: true, alter: (p, res) => p.startsWith('/fhir/R4/metadata') && patchJson(res, (d) => void (d.fhirVersion = '5.0.0')) }),
    code: 1,
    reason: /\/fhir\/R4\/metadata declares fhirVersion 5\.0\.0, expected 4\.0\.x/,
    only: DISCOVERY,
  },
  // "The response carries access_token": a junk answer is a real failure of the token check; the rest cannot get a token.
  {
    name: 'a token endpoint that returns junk',
    start: proxied({ answer: (_m, p) => (p.startsWith('/auth/token') ? { status: 200, headers: { 'content-type': 'text/html' }, body: '<html>\u0000junk{{' } : undefined) }),
    code: 1,
    reason: /no access_token/,
    only: '^(auth\\.token-issued|scopes\\.)',
  },
  {
    name: 'a Retry-After of one hour',
    start: proxied({
      tokenDirect: true,
      answer: (_m, p) => (/^\/fhir\/R[45]\/(?!metadata)/.test(p) ? { status: 429, headers: { 'content-type': 'application/fhir+json', 'retry-after': '3600' }, body: THROTTLED } : undefined),
    }),
    code: 3,
    reason: /^the target asked to wait 3600 s \(Retry-After\) before GET .+, longer than the run allows; no verdict/,
    only: '^scopes\\.',
  },
];

/** A stack frame line, as printed by node for an uncaught error. */
const STACK_FRAME = /^\s+at .+(:\d+:\d+\)?|\(native\))$/m;

describe.concurrent('hostile targets: the CLI survives and reports', () => {
  let reference: ReferenceServer;
  beforeAll(async () => {
    reference = await createReferenceServer({ port: 0, limits: { perKeyPerWindow: 1000, perOrgPerWindow: 5000, tokenIssuancePerWindow: 1000 } });
  });
  afterAll(() => reference.close());

  test.each(CASES)('$name', async (c) => {
    const target = await c.start(reference.url);
    const dir = await tempDir('hostile');
    const runMs = c.runMs ?? 8000;
    try {
      const config = await writeTargetConfig(dir, { baseUrl: target.url, tokenUrl: target.tokenUrl, requestMs: REQUEST_MS, runMs });
      const run = await runCli(['run', '--config', config, '--profile', 'quick', '--only', c.only ?? DISCOVERY, '--report-dir', dir], { timeoutMs: runMs + 30_000 });

      // Neither crashed nor hung: ended on its own, by its deadline plus start-up and report writing.
      expect(run.timedOut, run.stderr).toBe(false);
      expect(run.signal).toBeNull();
      expect(run.ms).toBeLessThan(runMs + 20_000);
      expect(run.code, run.stderr.slice(-2000)).toBe(c.code);
      expect(run.stderr).not.toMatch(STACK_FRAME);

      // The report is still written, complete.
      for (const f of REPORT_FILES) expect(existsSync(join(dir, 'latest', f)), f).toBe(true);
      const report = await readLatestReport(dir);
      expect(report.run.exitCode).toBe(c.code);
      const errors = report.checks.filter((x) => x.outcome === 'error');
      const failures = report.checks.filter((x) => x.outcome === 'fail');
      for (const e of errors) expectOneLineReason(e);
      const reasons = [...errors, ...failures].map((x) => x.message ?? '');
      expect(reasons.some((m) => c.reason.test(m)), reasons.slice(0, 5).join('\n')).toBe(true);
      if (c.code === 3) {
        expect(errors.length).toBeGreaterThan(0);
        expect(failures).toEqual([]);
      } else expect(failures.length).toBeGreaterThan(0);

      if (c.name === 'a 50 MB body') {
        // Bodies are capped and the cap shows in the evidence; the target was never read to the end.
        const cut = Object.values(report.exchanges).filter((x) => x.response?.bodyTruncated);
        expect(cut.length).toBeGreaterThan(0);
        for (const x of cut) expect(x.response!.bodyBytes).toBeLessThanOrEqual(20 * MB);
        expect(target.hostile!.bytesSent()).toBeLessThan((target.hostile!.requests.length * 50 * MB) / 2);
        expect(run.peakRssKb ?? 0).toBeLessThan(1024 * 1024);
      }
    } finally {
      await target.hostile?.close();
    }
  }, 60_000);
});

function expectOneLineReason(c: Pick<CheckResult, 'id' | 'message'>): void {
  const m = c.message ?? '';
  expect(m, c.id).not.toBe('');
  expect(m, c.id).not.toContain('\n');
  expect(m, c.id).not.toMatch(/\bat .+\.ts:\d+/);
}
