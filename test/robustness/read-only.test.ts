/**
 * `--profile read-only` through a recording proxy in front of the reference:
 * no POST or PUT reaches the FHIR endpoints (token requests go to the token
 * endpoint, the only write allowed), the stored data is unchanged, and the
 * profile still checks discovery, auth, scopes, pagination, headers, errors
 * on reads and tenancy.
 */
import { describe, expect, test } from 'vitest';
import { readLatestReport, runCli, tempDir, writeReferenceConfig } from '../cli/cli.js';
import { proxiedReference } from './hostile.js';

const AREAS_STILL_CHECKED = ['discovery', 'auth', 'scopes', 'pagination', 'headers', 'errors', 'tenancy'];

describe('read-only profile', () => {
  const target = proxiedReference();

  test('sends no POST or PUT except to the token endpoint, and still checks the read surface', async () => {
    const { reference, proxy } = target;
    const before = JSON.stringify(reference.resources.snapshot());
    const dir = await tempDir('read-only');
    const config = await writeReferenceConfig(dir, reference, { baseUrl: proxy.url, tokenUrl: proxy.tokenUrl, requestMs: 10_000, runMs: 120_000 });
    const run = await runCli(['run', '--config', config, '--profile', 'read-only', '--report-dir', dir, '--quiet'], { timeoutMs: 150_000 });
    expect(run.timedOut).toBe(false);
    const report = await readLatestReport(dir);
    expect(report.run.profile).toBe('read-only');

    // The token endpoint is POST /auth/token on the base address (the spec); discovery checks it there too.
    const writes = proxy.requests.filter((r) => !['GET', 'HEAD', 'OPTIONS'].includes(r.method) && r.path !== '/auth/token');
    expect(writes).toEqual([]);
    expect(proxy.requests.length).toBeGreaterThan(100);
    expect(JSON.stringify(reference.resources.snapshot())).toBe(before);
    expect(report.ledger).toEqual([]);

    for (const area of AREAS_STILL_CHECKED) {
      expect(report.checks.filter((c) => c.area === area && c.outcome === 'pass').length, area).toBeGreaterThan(0);
    }
    // Reads and searches with scopes, and pagination, went through the proxy.
    expect(proxy.requests.some((r) => r.method === 'GET' && /\/fhir\/R4\/MedicationRequest\?.*_cursor=/.test(r.path))).toBe(true);
    expect(report.checks.filter((c) => c.outcome === 'fail' || c.outcome === 'error').map((c) => `${c.id}: ${c.message}`)).toEqual([]);
    expect(run.code).toBe(0);
  }, 180_000);
});
