/** Loading and validating report.json (for `report` re-render and `diff`). */
import { readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ConformanceError } from '../errors.js';
import { REPORT_FORMAT_VERSION } from './types.js';
import type { ReportDocument } from './types.js';

/** ajv-formats is CommonJS: under NodeNext tsc types its default import as the module object. */
const addFormats = addFormatsModule.default;

export const REPORT_SCHEMA_URL = new URL('./report.schema.json', import.meta.url);

let validator: ValidateFunction | undefined;

function getValidator(): ValidateFunction {
  if (!validator) {
    const ajv = new Ajv({ allErrors: true, strict: true });
    addFormats(ajv);
    validator = ajv.compile(JSON.parse(readFileSync(REPORT_SCHEMA_URL, 'utf8')));
  }
  return validator;
}

/** Readable lines for the schema violations of `value` (empty when valid). */
export function reportSchemaErrors(value: unknown): string[] {
  const validate = getValidator();
  if (validate(value)) return [];
  return (validate.errors ?? []).map(describeSchemaError);
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
  if (typeof version === 'string' && version.split('.')[0] !== REPORT_FORMAT_VERSION.split('.')[0]) {
    throw new ConformanceError(
      'ERR_REPORT',
      `${path} has formatVersion ${version}; this tool reads ${REPORT_FORMAT_VERSION.split('.')[0]}.x`,
      { fix: 'use the fhir-conformance version that wrote the report' },
    );
  }
  const errors = reportSchemaErrors(value);
  if (errors.length > 0) {
    const shown = errors.slice(0, 5).join('; ');
    const more = errors.length > 5 ? ` (and ${errors.length - 5} more)` : '';
    throw new ConformanceError('ERR_REPORT', `${path} is not a valid report: ${shown}${more}`, {
      field: errors[0]!.split(':')[0],
    });
  }
  return value as ReportDocument;
}
