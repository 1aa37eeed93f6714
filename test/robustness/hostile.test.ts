/**
 * The real CLI against hostile targets: it must neither crash nor hang past its
 * deadline, and still write every report file.
 * - A target the run cannot work with at all (refused, unresolvable, TLS failure,
 *   no answer, every answer a 5xx or not JSON): the preflight stops before any
 *   check, within 30 s, exit 3, one paragraph of what to fix, a report whose
 *   setupError says so and a summary that is not green.
 * - A target that answers but misbehaves: the run goes on; the affected checks get
 *   `error` verdicts with a one-line reason, exit 3 (1 where the target also broke
 *   a rule the spec states).
 * Memory stays bounded (bodies capped).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createReferenceServer } from '../../src/reference/index.js';
import type { ReferenceServer } from '../../src/reference/server.js';
import type { CheckResult } from '../../src/engine/types.js';
import { readFile, writeFile } from 'node:fs/promises';
import { REPORT_FILES, readLatestReport, runCli, tempDir, writeTargetConfig } from '../cli/cli.js';
import { CLIENT_ID_PLACEHOLDER } from '../../src/config/init.js';
import { patchJson, refusedUrl, startProxy, startSelfSignedTls, startTransportHostile, type Hostile, type ProxyRules } from './hostile.js';
import type { CliRun } from '../cli/cli.js';

const REQUEST_MS = 1500;
const MB = 1024 * 1024;

interface Case {
  name: string;
  /** Base URL (and token URL) of the hostile target; `hostile` when a server of ours plays it. */
  start: (reference: string) => Promise<{ url: string; tokenUrl?: string; hostile?: Hostile }>;
  /** Exit code: 3 when only errors were possible; 1 when the target also broke a stated rule. */
  code: 1 | 3;
  /** The one-line reason a person reads on the affected checks (a run that goes on). */
  reason?: RegExp;
  /** The preflight's paragraph (report.json setupError): the run stops before any check. */
  stop?: RegExp;
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
const document =
  (path: string, body: string, type = 'application/json') =>
  (_m: string, p: string) =>
    p === path ? { status: 200, headers: { 'content-type': type }, body } : undefined;
const THROTTLED = JSON.stringify({
  resourceType: 'OperationOutcome',
  issue: [{ severity: 'error', code: 'throttled', diagnostics: 'HPB-00105: Rate limit exceeded' }],
});

const DISCOVERY = '^discovery\\.';
const CASES: Case[] = [
  // The run cannot work at all: the preflight stops it before any check (exit 3, setupError).
  {
    name: 'connection refused',
    start: async () => ({ url: await refusedUrl() }),
    code: 3,
    stop: /^Cannot run: the target is unreachable: connection refused by 127\.0\.0\.1:\d+\. .*Check the scheme, host and port of baseUrl/,
  },
  {
    name: 'host does not resolve (.invalid)',
    start: async () => ({ url: 'http://conformance-target.invalid' }),
    code: 3,
    stop: /^Cannot run: cannot resolve host conformance-target\.invalid\. Check the host name/,
  },
  {
    name: 'TLS with a self-signed certificate',
    start: async () => {
      const hostile = await startSelfSignedTls();
      return { url: hostile.url, hostile };
    },
    code: 3,
    stop: /^Cannot run: TLS handshake with 127\.0\.0\.1:\d+ failed: self-signed certificate.*Set tls\.ca/,
  },
  {
    name: 'accepts and never answers',
    start: transport('silent'),
    code: 3,
    stop: /^Cannot run: the target accepted connections .* no complete answer within 1\.5 s .*\(no response within 1\.5 s\)/,
  },
  {
    name: 'a body that trickles for minutes',
    start: transport('trickle'),
    code: 3,
    stop: /no complete answer within 1\.5 s .*\(response body not complete within 1\.5 s \(\d+ bytes received\)\)/,
  },
  {
    name: 'a body cut off mid-JSON',
    start: transport('cut-off'),
    code: 3,
    stop: /^Cannot run: the target does not speak HTTP as expected at .*: connection closed mid-body by 127\.0\.0\.1:\d+ after \d+ bytes/,
  },
  // A gateway's 502 page is an outage, not the service.
  {
    name: 'an HTML error page where JSON was expected',
    start: transport('html'),
    code: 3,
    stop: /^Cannot run: .* answers, but only with server errors \(GET \/openapi\.json: 502 text\/html, not JSON;/,
  },
  {
    name: 'a 50 MB body',
    start: transport('huge'),
    code: 3,
    stop: /not as the service: no discovery document came back as JSON \(GET \/openapi\.json: 200 application\/fhir\+json, body over the size cap/,
  },
  // Redirects are never followed (the bearer token must not travel elsewhere): a wrong baseUrl, not a verdict.
  {
    name: 'a redirect loop',
    start: transport('redirect-loop'),
    code: 3,
    stop: /not as the service: .*GET \/openapi\.json: 302 no content type, redirect to \/openapi\.json\?hop=1.*check baseUrl/,
  },
  {
    name: 'a storm of 500s',
    start: transport('500-storm'),
    code: 3,
    stop: /answers, but only with server errors \(GET \/openapi\.json: 500 application\/fhir\+json;/,
  },
  {
    name: '503 with Retry-After',
    start: transport('503-retry-after'),
    code: 3,
    stop: /answers, but only with server errors \(GET \/openapi\.json: 503 application\/fhir\+json;/,
  },
  {
    name: '503 without Retry-After',
    start: transport('503-no-retry-after'),
    code: 3,
    stop: /answers, but only with server errors \(GET \/openapi\.json: 503 application\/fhir\+json;/,
  },
  {
    name: 'no status line and no headers (raw socket)',
    start: transport('no-headers'),
    code: 3,
    stop: /^Cannot run: the target does not speak HTTP as expected at .*: no valid HTTP response from 127\.0\.0\.1:\d+: Response does not match the HTTP\/1\.1 protocol/,
  },
  // The token endpoint is down while discovery works: no client can get a token.
  {
    name: 'a token endpoint that answers 503 to everyone',
    start: proxied({
      answer: (_m, p) =>
        p.startsWith('/auth/token') ? { status: 503, headers: { 'content-type': 'text/html' }, body: '<h1>Service Unavailable</h1>' } : undefined,
    }),
    code: 3,
    stop: /^Cannot run: the token endpoint .*\/auth\/token issued no token to any client \(HTTP 503 "<h1>Service Unavailable<\/h1>"\)\. The discovery documents answered/,
  },
  // The run goes on: the target answers, and what it answers is for the checks to judge.
  // Valid HTTP with no header at all: the documents it serves break stated rules (real failures, exit 1).
  {
    name: 'a status line and no headers (raw socket)',
    start: transport('status-line-only'),
    code: 1,
    reason: /^ERR_DISCOVERY: no R4 .+ known: discovery failed \(\/openapi\.json has no "openapi" version field/,
    only: '^(discovery|medication-request\\.read-fixture)',
  },
  // The wrong media type on every FHIR answer breaks "Payload media type for FHIR calls: application/fhir+json" (exit 1).
  {
    name: 'the wrong content type',
    start: proxied({ tokenDirect: true, alter: (_p, res) => void (res.headers['content-type'] = 'text/plain') }),
    code: 1,
    reason: /^FHIR response is not application\/fhir\+json/,
    only: '^(invariants|discovery\\.metadata)',
  },
  // The published documents are the spec's own subject (OpenAPI 3.0.3, R4 CapabilityStatement): real failures.
  {
    name: 'an invalid OpenAPI document',
    start: proxied({ tokenDirect: true, answer: document('/openapi.json', '{"openapi":"3.0.3","info":{"title":"x"},"paths":42}') }),
    code: 1,
    reason: /is not a valid OpenAPI document/,
    only: DISCOVERY,
  },
  {
    name: 'an OpenAPI document of the wrong version',
    start: proxied({ tokenDirect: true, alter: (p, res) => p === '/openapi.json' && patchJson(res, (d) => void (d.openapi = '3.1.0')) }),
    code: 1,
    reason: /\/openapi\.json is OpenAPI 3\.1\.0, expected 3\.0\.3/,
    only: DISCOVERY,
  },
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
    start: proxied({
      answer: (_m, p) => (p.startsWith('/auth/token') ? { status: 200, headers: { 'content-type': 'text/html' }, body: '<html>\u0000junk{{' } : undefined),
    }),
    code: 1,
    reason: /no access_token/,
    only: '^(auth\\.token-issued|scopes\\.)',
  },
  {
    name: 'a Retry-After of one hour',
    start: proxied({
      tokenDirect: true,
      answer: (_m, p) =>
        /^\/fhir\/R[45]\/(?!metadata)/.test(p)
          ? { status: 429, headers: { 'content-type': 'application/fhir+json', 'retry-after': '3600' }, body: THROTTLED }
          : undefined,
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

  test.each(CASES)(
    '$name',
    async (c) => {
      const target = await c.start(reference.url);
      const dir = await tempDir('hostile');
      const runMs = c.runMs ?? 8000;
      try {
        const config = await writeTargetConfig(dir, { baseUrl: target.url, tokenUrl: target.tokenUrl, requestMs: REQUEST_MS, runMs });
        const run = await runCli(['run', '--config', config, '--profile', 'quick', '--only', c.only ?? DISCOVERY, '--report-dir', dir], {
          timeoutMs: runMs + 30_000,
        });

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
        if (c.name === 'a 50 MB body') {
          // Bodies are capped: the target was never read to the end, memory stays bounded.
          expect(target.hostile!.bytesSent()).toBeLessThan((target.hostile!.requests.length * 50 * MB) / 2);
          expect(run.peakRssKb ?? 0).toBeLessThan(1024 * 1024);
        }
        if (c.stop) {
          await expectStopped(run, dir, c.stop);
          return;
        }
        expect(report.run.setupError).toBeUndefined();
        const errors = report.checks.filter((x) => x.outcome === 'error');
        const failures = report.checks.filter((x) => x.outcome === 'fail');
        for (const e of errors) expectOneLineReason(e);
        const reasons = [...errors, ...failures].map((x) => x.message ?? '');
        expect(
          reasons.some((m) => c.reason!.test(m)),
          reasons.slice(0, 5).join('\n'),
        ).toBe(true);
        if (c.code === 3) {
          expect(errors.length).toBeGreaterThan(0);
          expect(failures).toEqual([]);
        } else expect(failures.length).toBeGreaterThan(0);
      } finally {
        await target.hostile?.close();
      }
    },
    60_000,
  );
});

function expectOneLineReason(c: Pick<CheckResult, 'id' | 'message'>): void {
  const m = c.message ?? '';
  expect(m, c.id).not.toBe('');
  expect(m, c.id).not.toContain('\n');
  expect(m, c.id).not.toMatch(/\bat .+\.ts:\d+/);
}

/**
 * A run the preflight stopped: no check ran; the paragraph is on stderr, in
 * report.json's setupError and in summary.md; the verdict line (last line) and the
 * summary's heading are not green.
 */
async function expectStopped(run: CliRun, dir: string, paragraph: RegExp): Promise<void> {
  const report = await readLatestReport(dir);
  expect(report.checks).toEqual([]);
  expect(report.run.setupError ?? '', run.stderr.slice(-1500)).toMatch(paragraph);
  expect(report.run.setupError).not.toContain('\n');
  expect(run.stderr).toContain(report.run.setupError!);
  expect(run.stderr).not.toMatch(/^▸ /m);
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines.at(-1)).toMatch(new RegExp(`^⛔ Not run: .* \\(exit ${report.run.exitCode}\\)$`));
  expect(lines.at(-2)).toBe(`reports: ${join(dir, report.run.runId)}`);
  const summary = await readFile(join(dir, 'latest', 'summary.md'), 'utf8');
  expect(summary).toMatch(new RegExp(`^## ⛔ FHIR conformance: .* · exit ${report.run.exitCode}\n`));
  expect(summary).not.toContain('✅ FHIR');
  expect(summary).toContain('> ⛔ Cannot run: ');
}

/**
 * The early stop at the default timeouts (15 s per request, a 1 h run): a vendor's
 * first mistakes end in seconds, not minutes, with what to fix.
 */
describe.concurrent('the preflight stops a run that cannot work, within 30 s', () => {
  let reference: ReferenceServer;
  beforeAll(async () => {
    reference = await createReferenceServer({ port: 0, limits: { perKeyPerWindow: 1000, perOrgPerWindow: 5000, tokenIssuancePerWindow: 1000 } });
  });
  afterAll(() => reference.close());

  /** A target config at the default timeouts (none declared). */
  const configAt = async (dir: string, url: string, edit: (doc: { clients: Array<Record<string, unknown>> }) => void = () => {}) => {
    const path = await writeTargetConfig(dir, { baseUrl: url, requestMs: 1, runMs: 1 });
    const doc = JSON.parse(await readFile(path, 'utf8')) as { clients: Array<Record<string, unknown>>; timeouts?: unknown };
    delete doc.timeouts;
    edit(doc);
    await writeFile(path, JSON.stringify(doc, null, 2));
    return path;
  };
  const runIt = (config: string, dir: string) => runCli(['run', '--config', config, '--profile', 'quick', '--report-dir', dir], { timeoutMs: 60_000 });

  test.each([
    { name: 'a closed port', kind: undefined, stop: /^Cannot run: the target is unreachable: connection refused/ },
    {
      name: 'a target that accepts connections and never answers',
      kind: 'silent',
      stop: /^Cannot run: the target accepted connections .* no complete answer within 12 s/,
    },
    {
      name: 'a target that answers every request with an HTML 500 page',
      kind: 'html-500',
      stop: /^Cannot run: .* answers, but only with server errors \(GET \/openapi\.json: 500 text\/html, not JSON;/,
    },
  ])(
    '$name: exit 3',
    async ({ kind, stop }) => {
      const hostile = kind ? await startTransportHostile(kind) : undefined;
      try {
        const dir = await tempDir('early-stop');
        const run = await runIt(await configAt(dir, hostile?.url ?? (await refusedUrl())), dir);
        expect(run.code, run.stderr.slice(-1500)).toBe(3);
        expect(run.ms).toBeLessThan(30_000);
        await expectStopped(run, dir, stop);
        // The target was asked for its discovery documents, once each, and nothing else.
        if (hostile) expect(hostile.requests.length).toBeLessThanOrEqual(3);
      } finally {
        await hostile?.close();
      }
    },
    70_000,
  );

  test("init's placeholder client id: exit 2 before any request, naming the field", async () => {
    const dir = await tempDir('early-stop');
    const proxy = await startProxy(reference.url, { tokenDirect: true });
    try {
      const config = await configAt(dir, proxy.url, (doc) => void (doc.clients[0]!.clientId = CLIENT_ID_PLACEHOLDER));
      const run = await runIt(config, dir);
      expect(run.code, run.stderr.slice(-1500)).toBe(2);
      expect(run.ms).toBeLessThan(15_000);
      await expectStopped(
        run,
        dir,
        /^Cannot run: clients\[0\] \(role "main"\) still has the client id "REPLACE-WITH-CLIENT-ID" in .*target\.json\. Register the public key set/,
      );
      expect(proxy.requests).toEqual([]);
    } finally {
      await proxy.close();
    }
  }, 70_000);

  test('a client the token endpoint refuses (unknown id, wrong key): exit 2 naming the client and what to check', async () => {
    const dir = await tempDir('early-stop');
    const config = await configAt(dir, reference.url, (doc) => {
      doc.clients[1]!.clientId = 'conformance-org-x';
      // The production client signs with another client's key (of its own algorithm): its assertion does not verify.
      doc.clients[2]!.privateKey = doc.clients[1]!.privateKey;
    });
    const run = await runIt(config, dir);
    expect(run.code, run.stderr.slice(-1500)).toBe(2);
    expect(run.ms).toBeLessThan(30_000);
    await expectStopped(
      run,
      dir,
      /^Cannot run: the token endpoint http:\/\/127\.0\.0\.1:\d+\/auth\/token refused the client assertion of client "conformance-org-x" \(clients\[1\], role second-org, .*HTTP 401 "HPB-00106: .*iss is not a registered client"; client "conformance-production" \(clients\[2\], role production, .*HTTP 401 "HPB-00106: .*\. For each, check in .*target\.json: the clientId is the id the target assigned; the registered public key/,
    );
    expect((await readLatestReport(dir)).run.setupError).not.toContain('conformance-main"');
  }, 70_000);
});
