/** Public API of the reports: build, render, write, read, diff, mask. */
export { REPORT_FORMAT_VERSION } from './types.js';
export type {
  DiffItem,
  OutcomeCounts,
  ReportCheck,
  ReportDiff,
  ReportDocument,
  ReportExchange,
  ReportObservation,
  ReportSummary,
  RequirementOutcome,
} from './types.js';
export { buildReport } from './build.js';
export { rollupRequirement } from './rollup.js';
export { renderJunit } from './junit.js';
export { renderHtml } from './html.js';
export { renderMarkdown, runPassed } from './markdown.js';
export { writeReports, pruneReports, REPORT_FILES, RUN_DIR_NAME, DEFAULT_KEEP } from './write.js';
export { renderJson } from './json.js';
export { BODY_REF_MIN, PASSING_BODY_CAP, FAILING_BODY_CAP, bodyKey, bodyOf, checkCurl, curlOf, evidenceOf } from './evidence.js';
export type { ReportFormat, WriteReportsOptions } from './write.js';
export { readReport, reportSchemaErrors, upgradeReport, REPORT_SCHEMA_URL, REPORT_SCHEMA_V1_URL } from './read.js';
export { diffReports, renderDiff, hasRegressions } from './diff.js';
export { maskPhi } from './phi.js';
export { compactTimeline, expandRequests, type ReportTimeline } from './timeline.js';
