/**
 * Writes reports/<run>/{report.json,junit.xml,report.html,summary.md} and
 * points reports/latest at that directory: a relative symlink, replaced
 * atomically by rename; where symlinks are not allowed, a copy.
 * pruneReports removes the oldest run directories beyond a number to keep.
 */
import { cp, lstat, mkdir, readdir, readlink, rename, rm, rmdir, symlink, writeFile } from 'node:fs/promises';
import { join, relative, resolve, isAbsolute } from 'node:path';
import type { RunResult } from '../engine/types.js';
import { ConformanceError } from '../errors.js';
import { buildReport } from './build.js';
import { renderHtml } from './html.js';
import { renderJunit } from './junit.js';
import { renderMarkdown } from './markdown.js';
import { renderJson } from './json.js';
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
      writeFile(files.json, renderJson(doc)),
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

/** The name of a run directory `run` writes: the run id, `<UTC yyyymmddThhmmssZ>-<random>`. */
export const RUN_DIR_NAME = /^\d{8}T\d{6}Z-[a-z0-9]{1,12}$/;
/** Default number of run directories `run` keeps under the reports root. */
export const DEFAULT_KEEP = 10;

/**
 * Removes the oldest run directories under `reportsRoot` so that `keep` remain
 * (0: keep all). Only directories named like a run (RUN_DIR_NAME) that hold
 * nothing but the four report files are candidates; anything else, `latest`
 * and what it points at, and `current` are never touched. Newest by name
 * (names start with the run's start time). Returns the directories removed.
 */
export async function pruneReports(reportsRoot: string, keep: number, current?: string): Promise<string[]> {
  if (!Number.isInteger(keep) || keep < 0) throw new ConformanceError('ERR_USAGE', `keep must be a whole number >= 0, got ${keep}`, { field: 'keep' });
  if (keep === 0) return [];
  const root = resolve(reportsRoot);
  const latest = await readlink(join(root, 'latest')).catch(() => undefined);
  const keepNames = new Set([latest, current === undefined ? undefined : relative(root, resolve(current))].filter((n): n is string => !!n));
  const names = (await readdir(root))
    .filter((n) => RUN_DIR_NAME.test(n))
    .sort()
    .reverse();
  const runs: string[] = [];
  for (const name of names) if (await isRunDir(join(root, name))) runs.push(name);
  // The protected ones count first, so the newest `keep` include them.
  const ordered = [...runs.filter((n) => keepNames.has(n)), ...runs.filter((n) => !keepNames.has(n))];
  const removed: string[] = [];
  for (const name of ordered.slice(keep)) {
    if (keepNames.has(name)) continue;
    const dir = join(root, name);
    for (const f of Object.values(REPORT_FILES)) await rm(join(dir, f), { force: true });
    await rmdir(dir);
    removed.push(dir);
  }
  return removed;
}

const OUR_FILES = new Set(Object.values(REPORT_FILES));

/** A real directory (not a symlink) holding report.json and nothing but report files. */
async function isRunDir(dir: string): Promise<boolean> {
  try {
    if (!(await lstat(dir)).isDirectory()) return false;
    const entries = await readdir(dir);
    return entries.includes(REPORT_FILES.json) && entries.every((e) => OUR_FILES.has(e));
  } catch {
    return false;
  }
}
