/**
 * `serve --mtls` end to end: the reference over HTTPS with the CA, server and client certificates
 * it generates, and the `tls` block `--config-out` writes. A run with that config passes over
 * mutual TLS; the same config without the client certificate stops at the preflight naming
 * tls.cert, and without the CA naming tls.ca. Real processes, real TLS on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CLI, readLatestReport, readReportFiles, runCli, tempDir } from './cli.js';
import { PROJECT_ROOT } from '../../src/paths.js';

/** A token request and one FHIR read: enough to prove the token endpoint and FHIR calls go over the same TLS. */
const REQUIREMENTS = 'auth.client-credentials,medication-request.read-returns-resource';
/** Proxy variables of the machine must not reroute these runs. */
const NO_PROXY_ENV = { HTTP_PROXY: undefined, HTTPS_PROXY: undefined, http_proxy: undefined, https_proxy: undefined };

describe('serve --mtls', () => {
  let dir: string;
  let serve: ChildProcess;
  let servedOut = '';
  let served: Record<string, unknown> & { baseUrl: string; tls: Record<string, { file: string }> };

  beforeAll(async () => {
    dir = await tempDir('mtls');
    serve = spawn(
      process.execPath,
      [CLI, 'serve', '--mtls', '--port', '0', '--limits', 'short', '--tls-dir', join(dir, 'pki'), '--config-out', join(dir, 'served.json')],
      { cwd: PROJECT_ROOT, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    serve.stdout!.setEncoding('utf8').on('data', (s: string) => (servedOut += s));
    serve.stderr!.setEncoding('utf8').on('data', (s: string) => (servedOut += s));
    const started = Date.now();
    while (!servedOut.includes('Wrote the target config')) {
      if (Date.now() - started > 60_000 || serve.exitCode !== null) throw new Error(`serve did not start: ${servedOut}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    served = JSON.parse(await readFile(join(dir, 'served.json'), 'utf8'));
  }, 90_000);

  afterAll(() => {
    if (serve?.pid !== undefined && serve.exitCode === null) process.kill(serve.pid, 'SIGTERM');
  });

  test('prints the generated files and writes the matching tls block', () => {
    const pki = join(dir, 'pki');
    expect(servedOut).toContain(`TLS: CA certificate ${pki}/ca.pem (trust it: tls.ca in the target config, or curl --cacert)\n`);
    expect(servedOut).toContain(`TLS: client certificates required; client certificate ${pki}/client.pem, key ${pki}/client.key.pem\n`);
    expect(served.baseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(served.tls).toEqual({ ca: { file: `${pki}/ca.pem` }, cert: { file: `${pki}/client.pem` }, key: { file: `${pki}/client.key.pem` } });
  });

  test('a run with the written config passes over mutual TLS; the client key never reaches the report', async () => {
    const reports = join(dir, 'reports');
    const run = await runCli(
      ['run', '--config', join(dir, 'served.json'), '--profile', 'quick', '--requirements', REQUIREMENTS, '--report-dir', reports, '--quiet'],
      {
        timeoutMs: 90_000,
        env: NO_PROXY_ENV,
      },
    );
    expect(run.stderr).toContain('Conformant for this run: 2 passed, 0 skipped, 0 observations of 2 checks (exit 0)');
    expect(run.code).toBe(0);
    const report = await readLatestReport(reports);
    expect(report.summary.byOutcome.error).toBe(0);
    expect(report.summary.byOutcome.pass).toBeGreaterThan(0);
    expect((report.run.config as { tls: unknown }).tls).toEqual({
      ca: { file: join(dir, 'pki/ca.pem') },
      cert: { file: join(dir, 'pki/client.pem') },
      key: '[redacted]',
      keySource: { file: join(dir, 'pki/client.key.pem') },
    });
    // Every exchange went to the HTTPS target: the token endpoint and the FHIR calls.
    const urls = Object.values(report.exchanges).map((x) => x.request.url);
    expect(urls.length).toBeGreaterThan(0);
    expect(urls.every((u) => u.startsWith(served.baseUrl))).toBe(true);
    const keyBody = (await readFile(join(dir, 'pki/client.key.pem'), 'utf8')).split('\n')[1]!;
    for (const [name, text] of Object.entries(await readReportFiles(reports)))
      expect({ name, leaked: text.includes(keyBody) }).toEqual({ name, leaked: false });
  }, 120_000);

  test('without the client certificate the preflight names tls.cert and tls.key', async () => {
    const { cert: _c, key: _k, ...caOnly } = served.tls;
    const path = join(dir, 'no-client-cert.json');
    await writeFile(path, JSON.stringify({ ...served, tls: caOnly }));
    const run = await runCli(['run', '--config', path, '--profile', 'quick', '--requirements', REQUIREMENTS, '--report-dir', join(dir, 'r2'), '--quiet'], {
      timeoutMs: 60_000,
      env: NO_PROXY_ENV,
    });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('it requires a client certificate (mutual TLS). Set tls.cert and tls.key in ');
  }, 90_000);

  test('without the CA the preflight names tls.ca', async () => {
    const path = join(dir, 'no-ca.json');
    const { tls: _t, ...withoutTls } = served;
    await writeFile(path, JSON.stringify(withoutTls));
    const run = await runCli(['run', '--config', path, '--profile', 'quick', '--requirements', REQUIREMENTS, '--report-dir', join(dir, 'r3'), '--quiet'], {
      timeoutMs: 60_000,
      env: NO_PROXY_ENV,
    });
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/TLS handshake with 127\.0\.0\.1:\d+ failed: self-signed certificate in certificate chain \(SELF_SIGNED_CERT_IN_CHAIN\)/);
    expect(run.stderr).toContain("The target's certificate is signed by a CA this run does not trust (a private CA). Set tls.ca in ");
  }, 90_000);
});
