/** Public API of the reports: build, render, write, read, diff, mask. */
export { REPORT_FORMAT_VERSION } from './types.js';
export type { DiffItem, OutcomeCounts, ReportDiff, ReportDocument, ReportObservation, ReportSummary, RequirementOutcome } from './types.js';
export { buildReport } from './build.js';
export { rollupRequirement } from './rollup.js';
export { renderJunit } from './junit.js';
export { renderHtml } from './html.js';
export { renderMarkdown, runPassed } from './markdown.js';
export { writeReports, REPORT_FILES } from './write.js';
export type { ReportFormat, WriteReportsOptions } from './write.js';
export { readReport, reportSchemaErrors, REPORT_SCHEMA_URL } from './read.js';
export { diffReports, renderDiff, hasRegressions } from './diff.js';
export { maskPhi } from './phi.js';
