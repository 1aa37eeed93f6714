import { afterAll, describe, expect, test } from 'vitest';
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConformanceError } from '../../src/errors.js';
import { RUN_DIR_NAME, buildReport, pruneReports, readReport, writeReports } from '../../src/report/index.js';
import { newRunId } from '../../src/run/index.js';
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
    const error = await readReport(path).then(
      () => undefined,
      (e: unknown) => e,
    );
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
    expect(invalid.message).toMatch(
      /is not a valid report: checks\.1\.outcome: must be equal to one of the allowed values \(pass, fail, skip, error, observation\)/,
    );
    expect(invalid.field).toBe('checks.1.outcome');
    expect((await readError(JSON.stringify({ ...doc, formatVersion: '3.0' }))).message).toMatch(/formatVersion 3\.0; this tool reads 1\.x and 2\.x/);
  });
});

describe('pruneReports (run --keep N)', () => {
  async function runDir(reports: string, name: string, files = ['report.json', 'junit.xml', 'report.html', 'summary.md']): Promise<void> {
    await mkdir(join(reports, name), { recursive: true });
    for (const f of files) await writeFile(join(reports, name, f), '{}');
  }

  test('run ids, as the run names its directory, look like run directories', () => {
    for (let i = 0; i < 20; i++) expect(newRunId(new Date())).toMatch(RUN_DIR_NAME);
    expect('latest').not.toMatch(RUN_DIR_NAME);
  });

  test('run ids of runs started within one second sort in the order the runs started', () => {
    const second = Date.parse('2026-11-30T08:03:17Z');
    for (let i = 0; i < 20; i++) {
      const ids = [0, 1, 9, 10, 99, 100, 998, 999].map((ms) => newRunId(new Date(second + ms)));
      expect([...ids].sort()).toEqual(ids);
    }
  });

  test('keeps the newest N run directories and touches nothing else', async () => {
    const reports = await mkdtemp(join(root, 'prune-'));
    const runs = ['20250101T000000Z-aaaaaa', '20250102T000000Z-bbbbbb', '20250103T000000Z-cccccc', '20250104T000000Z-dddddd', '20250105T000000Z-eeeeee'];
    for (const r of runs) await runDir(reports, r);
    // Look like runs but are not ours to remove: an extra file, no report.json, a symlink.
    await runDir(reports, '20240101T000000Z-extra1', ['report.json', 'notes.txt']);
    await runDir(reports, '20240101T000000Z-noreport', ['junit.xml']);
    await symlink(runs[0]!, join(reports, '20240101T000000Z-symlnk'), 'dir');
    // Not run names at all.
    await runDir(reports, 'my-reports');
    await runDir(reports, 'rerender');
    await writeFile(join(reports, '.gitkeep'), '');
    await symlink(runs[4]!, join(reports, 'latest'), 'dir');

    const removed = await pruneReports(reports, 2, join(reports, runs[4]!));
    expect(removed.map((d) => d.slice(reports.length + 1)).sort()).toEqual(runs.slice(0, 3));
    expect((await readdir(reports)).sort()).toEqual(
      [
        '.gitkeep',
        '20240101T000000Z-extra1',
        '20240101T000000Z-noreport',
        '20240101T000000Z-symlnk',
        runs[3]!,
        runs[4]!,
        'latest',
        'my-reports',
        'rerender',
      ].sort(),
    );
    expect(readlinkSync(join(reports, 'latest'))).toBe(runs[4]);
    expect(await readdir(join(reports, '20240101T000000Z-extra1'))).toEqual(['notes.txt', 'report.json']);
  });

  test('never removes the current run or the one latest points at; 0 keeps everything', async () => {
    const reports = await mkdtemp(join(root, 'prune-'));
    const runs = ['20250101T000000Z-aaaaaa', '20250102T000000Z-bbbbbb', '20250103T000000Z-cccccc'];
    for (const r of runs) await runDir(reports, r);
    await symlink(runs[0]!, join(reports, 'latest'), 'dir');
    expect(await pruneReports(reports, 0)).toEqual([]);
    expect(await readdir(reports)).toHaveLength(4);
    await pruneReports(reports, 1, join(reports, runs[1]!));
    expect((await readdir(reports)).sort()).toEqual([runs[0]!, runs[1]!, 'latest'].sort());
    await expect(pruneReports(reports, -1)).rejects.toThrow(/whole number/);
  });

  test('a run written by writeReports is pruned like the others', async () => {
    const reports = await mkdtemp(join(root, 'prune-'));
    for (const day of ['01', '02', '03']) {
      const result = syntheticRun(3);
      result.info.runId = `202501${day}T000000Z-abc${day}`;
      const { dir } = await writeReports(result, { reportsRoot: reports });
      await pruneReports(reports, 2, dir);
    }
    expect((await readdir(reports)).sort()).toEqual(['20250102T000000Z-abc02', '20250103T000000Z-abc03', 'latest']);
    expect(readlinkSync(join(reports, 'latest'))).toBe('20250103T000000Z-abc03');
  });
});
