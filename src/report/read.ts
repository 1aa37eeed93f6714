/**
 * Loading and validating report.json (for `report` re-render and `diff`).
 * Reads the current format (2.x) and the former one (1.x: every check with its
 * evidence inline), which it converts to the current model.
 */
import { readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { ConformanceError } from '../errors.js';
import { internBodies, storeExchanges } from './evidence.js';
import { REPORT_FORMAT_VERSION } from './types.js';
import type { ReportDocument } from './types.js';
import type { CheckResult } from '../engine/types.js';
import { addFormats, ajvModule } from '../validator-cache.js';

/** ajv-formats is CommonJS: under NodeNext tsc types its default import as the module object. */

/** The schema of the current format. */
export const REPORT_SCHEMA_URL = new URL('./report.schema.json', import.meta.url);
/** The schema of format 1.x, still read. */
export const REPORT_SCHEMA_V1_URL = new URL('./report-1.schema.json', import.meta.url);

const CURRENT_MAJOR = REPORT_FORMAT_VERSION.split('.')[0]!;
const READABLE_MAJORS = ['1', CURRENT_MAJOR];
const validators = new Map<string, ValidateFunction>();

function getValidator(major: string): ValidateFunction {
  let validator = validators.get(major);
  if (!validator) {
    const ajv = new (ajvModule().Ajv)({ allErrors: true, strict: true });
    addFormats(ajv);
    const url = major === '1' ? REPORT_SCHEMA_V1_URL : REPORT_SCHEMA_URL;
    validator = ajv.compile(JSON.parse(readFileSync(url, 'utf8')));
    validators.set(major, validator);
  }
  return validator;
}

/**
 * Readable lines for the schema violations of `value` (empty when valid):
 * against the schema of its format's major version (1.x or the current one),
 * then the references the schema cannot express (evidence ids, body refs).
 */
export function reportSchemaErrors(value: unknown): string[] {
  const version = (value as { formatVersion?: unknown } | null)?.formatVersion;
  const major = typeof version === 'string' && version.split('.')[0] === '1' ? '1' : CURRENT_MAJOR;
  const validate = getValidator(major);
  if (!validate(value)) return (validate.errors ?? []).map(describeSchemaError);
  return major === '1' ? [] : referenceErrors(value as ReportDocument);
}

function referenceErrors(doc: ReportDocument): string[] {
  const errors: string[] = [];
  doc.checks.forEach((c, i) => {
    c.evidence.forEach((id, j) => {
      if (!Object.hasOwn(doc.exchanges, id)) errors.push(`checks.${i}.evidence.${j}: no exchange '${id}' in exchanges`);
    });
    if (c.curlExchange !== undefined && !c.evidence.includes(c.curlExchange))
      errors.push(`checks.${i}.curlExchange: '${c.curlExchange}' is not in the check's evidence`);
  });
  for (const [id, x] of Object.entries(doc.exchanges)) {
    if (x.id !== id) errors.push(`exchanges.${id}.id: must be its key '${id}'`);
    for (const [name, part] of [
      ['request', x.request],
      ['response', x.response],
    ] as const) {
      if (!part) continue;
      if (part.body !== undefined && part.bodyRef !== undefined) errors.push(`exchanges.${id}.${name}: has both body and bodyRef`);
      if (part.bodyRef !== undefined && !Object.hasOwn(doc.bodies, part.bodyRef))
        errors.push(`exchanges.${id}.${name}.bodyRef: no body '${part.bodyRef}' in bodies`);
    }
  }
  return errors;
}

/** A format 1.x document in the current model: exchanges stored once, long bodies in the table. */
export function upgradeReport(v1: Omit<ReportDocument, 'checks' | 'exchanges' | 'bodies'> & { checks: CheckResult[] }): ReportDocument {
  const { checks, exchanges } = storeExchanges(v1.checks);
  const { formatVersion: _old, ...rest } = v1;
  return internBodies({ formatVersion: REPORT_FORMAT_VERSION, ...rest, checks, exchanges, bodies: {} });
}

function describeSchemaError(e: ErrorObject): string {
  const where = e.instancePath === '' ? '(root)' : e.instancePath.slice(1).replace(/\//g, '.');
  const extra =
    e.keyword === 'additionalProperties'
      ? ` '${String((e.params as { additionalProperty: string }).additionalProperty)}'`
      : e.keyword === 'enum'
        ? ` (${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')})`
        : '';
  return `${where}: ${e.message ?? e.keyword}${extra}`;
}

export async function readReport(path: string): Promise<ReportDocument> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ConformanceError('ERR_REPORT', `cannot read report ${path}: ${code === 'ENOENT' ? 'file not found' : String(code ?? e)}`, {
      fix: 'pass the path of a report.json written by `fhir-conformance run` (e.g. reports/latest/report.json)',
      cause: e,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ConformanceError('ERR_REPORT', `${path} is not JSON: ${(e as Error).message}`, { cause: e });
  }
  const version = (value as { formatVersion?: unknown } | null)?.formatVersion;
  if (typeof version === 'string' && !READABLE_MAJORS.includes(version.split('.')[0]!)) {
    throw new ConformanceError('ERR_REPORT', `${path} has formatVersion ${version}; this tool reads ${READABLE_MAJORS.map((m) => `${m}.x`).join(' and ')}`, {
      fix: 'use the fhir-conformance version that wrote the report',
    });
  }
  const errors = reportSchemaErrors(value);
  if (errors.length > 0) {
    const shown = errors.slice(0, 5).join('; ');
    const more = errors.length > 5 ? ` (and ${errors.length - 5} more)` : '';
    throw new ConformanceError('ERR_REPORT', `${path} is not a valid report: ${shown}${more}`, {
      field: errors[0]!.split(':')[0],
    });
  }
  if (typeof version === 'string' && version.startsWith('1.')) return upgradeReport(value as Parameters<typeof upgradeReport>[0]);
  return value as ReportDocument;
}
