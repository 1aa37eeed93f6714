import type { ErrorObject } from 'ajv';
import type { SchemaIssue } from './types.js';

/** Enum values listed in a message before it is cut with `…`. */
const MAX_LISTED_VALUES = 8;
const MAX_PATTERN_CHARS = 60;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Turns a JSON pointer (`/entry/3/resource`) into a path (`entry[3].resource`) appended to `prefix`. */
export function pointerToPath(pointer: string, prefix = ''): string {
  let path = prefix;
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    path = appendSegment(path, segment);
  }
  return path;
}

function appendSegment(path: string, segment: string): string {
  if (/^(0|[1-9][0-9]*)$/.test(segment)) return `${path}[${segment}]`;
  if (!IDENTIFIER.test(segment)) return `${path}[${JSON.stringify(segment)}]`;
  return path === '' ? segment : `${path}.${segment}`;
}

/** One readable issue per ajv error, deduplicated. `primitiveByPattern` names the FHIR type of a failed pattern. */
export function toSchemaIssues(errors: ErrorObject[], prefix: string, primitiveByPattern: ReadonlyMap<string, string>): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    const issue = toSchemaIssue(error, prefix, primitiveByPattern);
    const key = `${issue.path}\u0000${issue.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      issues.push(issue);
    }
  }
  return issues;
}

function toSchemaIssue(error: ErrorObject, prefix: string, primitiveByPattern: ReadonlyMap<string, string>): SchemaIssue {
  const path = pointerToPath(error.instancePath, prefix);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { path: appendSegment(path, String(params.missingProperty)), message: 'required property missing' };
    case 'additionalProperties':
      return { path: appendSegment(path, String(params.additionalProperty)), message: 'unknown property (not defined by the FHIR schema)' };
    case 'enum':
      return { path, message: `must be equal to one of the allowed values (${listValues(params.allowedValues as unknown[])})` };
    case 'const':
      return { path, message: `must be ${JSON.stringify(params.allowedValue)}` };
    case 'type':
      return { path, message: `must be ${article(String(params.type))}` };
    case 'pattern':
      return { path, message: patternMessage(String(params.pattern), primitiveByPattern) };
    default:
      return { path, message: error.message ?? `fails the "${error.keyword}" rule` };
  }
}

function listValues(values: unknown[]): string {
  const listed = values.slice(0, MAX_LISTED_VALUES).map(String).join(', ');
  return values.length > MAX_LISTED_VALUES ? `${listed}, …` : listed;
}

function article(type: string): string {
  if (type === 'object' || type === 'array' || type === 'integer') return `an ${type}`;
  if (type === 'string' || type === 'number' || type === 'boolean') return `a ${type}`;
  return type;
}

function patternMessage(pattern: string, primitiveByPattern: ReadonlyMap<string, string>): string {
  const primitive = primitiveByPattern.get(pattern);
  if (primitive) return `must be a valid FHIR ${primitive}`;
  const shown = pattern.length > MAX_PATTERN_CHARS ? `${pattern.slice(0, MAX_PATTERN_CHARS)}…` : pattern;
  return `must match pattern ${shown}`;
}

/** `path: message`, or the message alone for an issue about the resource itself. */
export function formatIssue(issue: SchemaIssue): string {
  return issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`;
}
