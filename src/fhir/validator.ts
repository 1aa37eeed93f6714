import { ReleaseCompiler } from './compiler.js';
import { pointerToPath, toSchemaIssues } from './issues.js';
import { loadReleaseSchema } from './schema-source.js';
import type { FhirValidator, Release, SchemaIssue } from './types.js';

/** Resource types validated when no `types` option is given. */
export const DEFAULT_TYPES: Readonly<Record<Release, readonly string[]>> = {
  R4: [
    'MedicationRequest',
    'Encounter',
    'Bundle',
    'OperationOutcome',
    'CapabilityStatement',
    'Condition',
    'ClinicalImpression',
    'CarePlan',
    'Patient',
    'Practitioner',
    'DocumentReference',
  ],
  R5: ['DocumentReference', 'Bundle', 'OperationOutcome', 'CapabilityStatement', 'Patient'],
};

/** Issues returned per `validate` call at most; the last one then says how many were left out. */
export const MAX_ISSUES = 20;
/** Nesting depth of resources in resources (Bundle in Bundle, contained) followed at most. */
const MAX_DEPTH = 8;

export interface FhirValidatorOptions {
  /** Resource types per release; a release left out keeps its `DEFAULT_TYPES`. */
  types?: Partial<Record<Release, string[]>>;
}

/**
 * One compiler per release for the process: validators with other type lists (the suite's, the
 * reference's write types) share what is compiled, and a process running many runs (the mutation
 * runner) compiles each type once.
 */
const compilers = new Map<Release, ReleaseCompiler>();
function compilerFor(release: Release): ReleaseCompiler {
  let compiler = compilers.get(release);
  if (!compiler) {
    compiler = new ReleaseCompiler(loadReleaseSchema(release));
    compilers.set(release, compiler);
  }
  return compiler;
}

/** Creates a validator; each (release, type) is compiled on first use, once per process. Schema files are read once per process. */
export function createFhirValidator(opts: FhirValidatorOptions = {}): FhirValidator {
  const configured: Record<Release, ReadonlySet<string>> = {
    R4: new Set(opts.types?.R4 ?? DEFAULT_TYPES.R4),
    R5: new Set(opts.types?.R5 ?? DEFAULT_TYPES.R5),
  };

  const supports = (release: Release, resourceType: string): boolean =>
    configured[release].has(resourceType) && loadReleaseSchema(release).resourceTypes.has(resourceType);

  const validateAt = (release: Release, resource: unknown, prefix: string, depth: number, issues: SchemaIssue[]): void => {
    if (typeof resource !== 'object' || resource === null || Array.isArray(resource)) {
      issues.push({ path: prefix, message: `must be a JSON object (a FHIR resource), got ${describe(resource)}` });
      return;
    }
    const resourceType = (resource as Record<string, unknown>).resourceType;
    const typePath = prefix === '' ? 'resourceType' : `${prefix}.resourceType`;
    if (typeof resourceType !== 'string') {
      issues.push({ path: typePath, message: resourceType === undefined ? 'required property missing' : 'must be a string' });
      return;
    }
    if (!supports(release, resourceType)) {
      issues.push({ path: typePath, message: unsupportedMessage(release, resourceType, configured[release]) });
      return;
    }
    const { errors, nested } = compilerFor(release).check(resourceType)(resource);
    issues.push(...toSchemaIssues(errors, prefix, loadReleaseSchema(release).primitiveByPattern));
    for (const inner of nested) {
      const innerPrefix = pointerToPath(inner.pointer, prefix);
      if (depth >= MAX_DEPTH) {
        issues.push({ path: innerPrefix, message: `nested deeper than ${MAX_DEPTH} resources; not validated` });
      } else {
        validateAt(release, inner.resource, innerPrefix, depth + 1, issues);
      }
    }
  };

  return {
    supports,
    validate(release, resource) {
      const issues: SchemaIssue[] = [];
      validateAt(release, resource, '', 0, issues);
      return capIssues(issues);
    },
  };
}

function capIssues(issues: SchemaIssue[]): SchemaIssue[] {
  if (issues.length <= MAX_ISSUES) return issues;
  const kept = issues.slice(0, MAX_ISSUES - 1);
  return [...kept, { path: '', message: `${issues.length - kept.length} more issues not shown` }];
}

function unsupportedMessage(release: Release, resourceType: string, configured: ReadonlySet<string>): string {
  const name = JSON.stringify(resourceType);
  if (!loadReleaseSchema(release).resourceTypes.has(resourceType)) return `unsupported resourceType ${name}: not a FHIR ${release} resource type`;
  return `unsupported resourceType ${name}: not among the types validated for ${release} (${[...configured].join(', ')})`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}
