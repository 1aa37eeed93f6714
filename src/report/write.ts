/**
 * Writes reports/<run>/{report.json,junit.xml,report.html,summary.md} and
 * points reports/latest at that directory: a relative symlink, replaced
 * atomically by rename; where symlinks are not allowed, a copy.
 */
import { cp, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join, relative, resolve, isAbsolute } from 'node:path';
import type { RunResult } from '../engine/types.js';
import { ConformanceError } from '../errors.js';
import { buildReport } from './build.js';
import { renderHtml } from './html.js';
import { renderJunit } from './junit.js';
import { renderMarkdown } from './markdown.js';
import { maskPhi } from './phi.js';
import type { ReportDocument } from './types.js';

export type ReportFormat = 'json' | 'junit' | 'html' | 'md';
export const REPORT_FILES: Record<ReportFormat, string> = {
  json: 'report.json',
  junit: 'junit.xml',
  html: 'report.html',
  md: 'summary.md',
};

export interface WriteReportsOptions {
  reportsRoot: string;
  /** Directory name under reportsRoot; default: the run id. */
  runDirName?: string;
  redactPhi?: boolean;
  /** Extra patient ids to mask with redactPhi. */
  patientIds?: string[];
}

function isReportDocument(value: RunResult | ReportDocument): value is ReportDocument {
  return typeof (value as ReportDocument).formatVersion === 'string';
}

/** A run id made safe as one path segment. */
export function runDirName(runId: string): string {
  const safe = runId.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^\.+/, '_');
  if (safe === '') return 'run';
  return safe === 'latest' ? 'run-latest' : safe;
}

export async function writeReports(
  result: RunResult | ReportDocument,
  opts: WriteReportsOptions,
): Promise<{ dir: string; files: Record<ReportFormat, string> }> {
  let doc = isReportDocument(result) ? result : buildReport(result);
  if (opts.redactPhi) doc = maskPhi(doc, opts.patientIds);
  const root = resolve(opts.reportsRoot);
  const name = runDirName(opts.runDirName ?? doc.run.runId);
  const dir = join(root, name);
  const files = {
    json: join(dir, REPORT_FILES.json),
    junit: join(dir, REPORT_FILES.junit),
    html: join(dir, REPORT_FILES.html),
    md: join(dir, REPORT_FILES.md),
  };
  const where = relative(process.cwd(), files.html);
  const location = where.startsWith('..') || isAbsolute(where) ? files.html : where;
  try {
    await mkdir(dir, { recursive: true });
    await Promise.all([
      writeFile(files.json, `${JSON.stringify(doc, null, 2)}\n`),
      writeFile(files.junit, renderJunit(doc)),
      writeFile(files.html, renderHtml(doc)),
      writeFile(files.md, renderMarkdown(doc, { location })),
    ]);
    await pointLatest(root, name);
  } catch (e) {
    throw new ConformanceError('ERR_REPORT', `cannot write reports to ${dir}: ${(e as Error).message}`, {
      fix: 'check that the reports directory is writable (--reports-dir)',
      cause: e,
    });
  }
  return { dir, files };
}

async function pointLatest(root: string, name: string): Promise<void> {
  const latest = join(root, 'latest');
  const temp = join(root, `.latest-${process.pid}-${Date.now()}`);
  try {
    await symlink(name, temp, 'dir');
    try {
      await rename(temp, latest);
    } catch {
      // `latest` is a real directory (an earlier copy): rename cannot replace it.
      await rm(latest, { recursive: true, force: true });
      await rename(temp, latest);
    }
  } catch {
    await rm(temp, { recursive: true, force: true });
    await rm(latest, { recursive: true, force: true });
    await cp(join(root, name), latest, { recursive: true });
  }
}
