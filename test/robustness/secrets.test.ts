/**
 * Secrets never reach output: every output of real runs (the four report
 * files, stdout and stderr) holds no access token or client assertion (no
 * JWT at all), no private key material (the test keys' private members, PEM
 * blocks); with --redact-phi, no patient fixture id and no CURP-shaped value.
 * Also on an error path: a token endpoint that fails and echoes the assertion.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createReferenceServer } from '../../src/reference/index.js';
import type { ReferenceServer } from '../../src/reference/server.js';
import { KEYS_DIR, readLatestReport, readReportFiles, referenceFixtures, runCli, tempDir, writeTargetConfig, type CliRun } from '../cli/cli.js';
import { startProxy, type Hostile } from './hostile.js';

/** A compact JWS (header.payload.signature, JSON header): what tokens and assertions look like. */
const JWT = /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}/g;
const PEM = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;
const CURP = /[A-Z]{4}\d{6}[HM][A-Z]{5}[A-Z0-9]\d/;

/** The private members of the reference's test keys (EC `d`; RSA `d`, `p`, `q`, `dp`, `dq`, `qi`). */
function privateKeyMaterial(): string[] {
  return readdirSync(KEYS_DIR).flatMap((f) => {
    const jwk = JSON.parse(readFileSync(join(KEYS_DIR, f), 'utf8')) as Record<string, unknown>;
    return ['d', 'p', 'q', 'dp', 'dq', 'qi'].map((k) => jwk[k]).filter((v): v is string => typeof v === 'string');
  });
}

async function outputsOf(run: CliRun, reportDir: string): Promise<Record<string, string>> {
  return { stdout: run.stdout, stderr: run.stderr, ...(await readReportFiles(reportDir)) };
}

function expectNoSecrets(outputs: Record<string, string>, extra: string[] = []): void {
  const keys = privateKeyMaterial();
  expect(keys.length).toBeGreaterThanOrEqual(4);
  for (const [name, text] of Object.entries(outputs)) {
    expect(text.match(JWT) ?? [], `JWT in ${name}`).toEqual([]);
    expect(text, name).not.toMatch(PEM);
    for (const k of [...keys, ...extra]) expect(text.includes(k), `secret in ${name}`).toBe(false);
  }
}

describe('secrets never reach output', () => {
  test('a quick run against the embedded reference, with --redact-phi', async () => {
    const dir = await tempDir('secrets');
    const run = await runCli(['run', '--profile', 'quick', '--redact-phi', '--report-dir', dir], { timeoutMs: 120_000 });
    expect(run.code, run.stderr.slice(-1500)).toBe(0);
    const outputs = await outputsOf(run, dir);
    // The run did authenticate: many exchanges carried a bearer token, shown as $TOKEN.
    expect(outputs['report.json']!.match(/Bearer \$TOKEN/g)?.length ?? 0).toBeGreaterThan(50);
    expectNoSecrets(outputs);

    const report = await readLatestReport(dir);
    expect(report.phiMasked).toBe(true);
    const patients = Object.entries(referenceFixtures())
      .filter(([k]) => /^(patient|otherOrgPatient)/.test(k))
      .map(([, id]) => id);
    expect(patients.length).toBeGreaterThanOrEqual(5);
    for (const [name, text] of Object.entries(outputs)) {
      for (const id of patients) expect(text.includes(id), `patient id ${id} in ${name}`).toBe(false);
      expect(text, name).not.toMatch(CURP);
    }
  }, 150_000);

  describe('a token endpoint that fails and echoes the assertion back', () => {
    let reference: ReferenceServer;
    let proxy: Hostile;
    const echoed: string[] = [];
    beforeAll(async () => {
      reference = await createReferenceServer({ port: 0, limits: { perKeyPerWindow: 1000, tokenIssuancePerWindow: 1000 } });
      proxy = await startProxy(reference.url, {
        answer: (_method, path, body) => {
          if (!path.startsWith('/auth/token')) return undefined;
          const assertion = new URLSearchParams(body).get('client_assertion') ?? '';
          echoed.push(assertion);
          return {
            status: 401,
            headers: { 'content-type': 'application/json', 'www-authenticate': `Bearer error="invalid_client", assertion="${assertion}"` },
            body: JSON.stringify({
              error: 'invalid_client',
              error_description: `assertion rejected: ${assertion}`,
              access_token: 'eyJhbGciOiJIUzI1NiJ9.eyJsZWFrZWQiOiJ0b2tlbiJ9.c2lnbmF0dXJlLW9mLWEtbGVha2Vk',
            }),
          };
        },
      });
    });
    afterAll(async () => {
      await proxy.close();
      await reference.close();
    });

    test('no assertion, token or key in any output', async () => {
      const dir = await tempDir('secrets-error');
      const config = await writeTargetConfig(dir, { baseUrl: proxy.url, requestMs: 2000, runMs: 15_000 });
      const run = await runCli(['run', '--config', config, '--profile', 'quick', '--only', '^(auth|scopes)\\.', '--report-dir', dir], { timeoutMs: 60_000 });
      // Every client refused with 401: the preflight stops the run (exit 2) and quotes the answer, redacted.
      expect(run.code, run.stderr.slice(-1500)).toBe(2);
      expect(echoed.length).toBeGreaterThan(0);
      const outputs = await outputsOf(run, dir);
      expect((await readLatestReport(dir)).run.setupError).toMatch(
        /refused the client assertion of client "conformance-main" .*HTTP 401 "invalid_client: assertion rejected: /,
      );
      expectNoSecrets(outputs, echoed);
    }, 90_000);
  });
});
