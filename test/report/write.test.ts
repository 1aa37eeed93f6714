import { afterAll, describe, expect, test } from 'vitest';
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConformanceError } from '../../src/errors.js';
import { buildReport, readReport, writeReports } from '../../src/report/index.js';
import { syntheticRun } from './synthetic-run.js';

const root = await mkdtemp(join(tmpdir(), 'report-write-'));
afterAll(() => rm(root, { recursive: true, force: true }));

describe('writeReports', () => {
  test('writes the four files under reports/<run id> and points latest at them', async () => {
    const result = syntheticRun(30);
    const { dir, files } = await writeReports(result, { reportsRoot: root });
    expect(dir).toBe(join(root, result.info.runId));
    for (const f of Object.values(files)) expect(existsSync(f)).toBe(true);
    expect(lstatSync(join(root, 'latest')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(root, 'latest'))).toBe(result.info.runId);
    expect(await readFile(join(root, 'latest', 'summary.md'), 'utf8')).toContain(`${result.info.runId}/report.html`);
  });

  test('a later run moves latest; a re-render from a ReportDocument goes to its own directory', async () => {
    const doc = buildReport(syntheticRun(10));
    await writeReports(doc, { reportsRoot: root, runDirName: 'rerender/../x' });
    expect(readlinkSync(join(root, 'latest'))).toBe('rerender_.._x');
    expect(JSON.parse(await readFile(join(root, 'latest', 'report.json'), 'utf8'))).toEqual(JSON.parse(JSON.stringify(doc)));
  });

  test('redactPhi masks the written files', async () => {
    const { files } = await writeReports(syntheticRun(10), { reportsRoot: root, runDirName: 'masked', redactPhi: true });
    const text = await readFile(files.html, 'utf8');
    expect(text).not.toContain('3f2b8c1e-9a4d-4e7b-8c21-5d6e7f8a9b0c');
    expect(text).toContain('redacted-patient-1');
  });
});

describe('readReport', () => {
  test('reads back what writeReports wrote', async () => {
    const { files } = await writeReports(syntheticRun(20), { reportsRoot: root, runDirName: 'roundtrip' });
    const doc = await readReport(files.json);
    expect(doc).toEqual(JSON.parse(JSON.stringify(buildReport(syntheticRun(20)))));
  });

  async function readError(content: string | undefined): Promise<ConformanceError> {
    const path = join(root, `bad-${Math.random().toString(36).slice(2)}.json`);
    if (content !== undefined) await writeFile(path, content);
    const error = await readReport(path).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(ConformanceError);
    expect((error as ConformanceError).code).toBe('ERR_REPORT');
    return error as ConformanceError;
  }

  test('missing file, not JSON, schema violation and other major version are clear ERR_REPORT errors', async () => {
    expect((await readError(undefined)).message).toMatch(/cannot read report .*: file not found/);
    expect((await readError('{"formatVersion": ')).message).toMatch(/is not JSON/);
    const doc = JSON.parse(JSON.stringify(buildReport(syntheticRun(3))));
    doc.checks[1].outcome = 'passed';
    const invalid = await readError(JSON.stringify(doc));
    expect(invalid.message).toMatch(/is not a valid report: checks\.1\.outcome: must be equal to one of the allowed values \(pass, fail, skip, error, observation\)/);
    expect(invalid.field).toBe('checks.1.outcome');
    expect((await readError(JSON.stringify({ ...doc, formatVersion: '3.0' }))).message).toMatch(/formatVersion 3\.0; this tool reads 1\.x and 2\.x/);
  });
});
