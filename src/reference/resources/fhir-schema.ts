/**
 * Structural validation of write bodies against the HL7 FHIR JSON schemas, for
 * "Body must match the FHIR R4 schema" (HPB-00101): the project's validator
 * (src/fhir), configured for every resource type a write may carry.
 */
import { createFhirValidator, type FhirValidator, type Release } from '../../fhir/index.js';

const WRITE_TYPES: Record<Release, string[]> = {
  R4: [
    'MedicationRequest',
    'Encounter',
    'Condition',
    'ClinicalImpression',
    'CarePlan',
    'Observation',
    'Patient',
    'Practitioner',
    'CapabilityStatement',
    'DocumentReference',
  ],
  R5: ['DocumentReference', 'CapabilityStatement'],
};

let validator: FhirValidator | undefined;

/**
 * The first schema violation of `resource` as `<Type>.<path> <message>`, or undefined when it conforms.
 * Issues at the `unchecked` top-level fields are passed over (planted faults only).
 */
export function schemaProblem(release: Release, resourceType: string, resource: unknown, unchecked: readonly string[] = []): string | undefined {
  validator ??= createFhirValidator({ types: WRITE_TYPES });
  if (!validator.supports(release, resourceType)) return `${resourceType} is not a resource type this server accepts`;
  const body = typeof resource === 'object' && resource !== null ? { ...(resource as object), resourceType } : resource;
  const at = (path: string, field: string) => path === field || path.startsWith(`${field}.`) || path.startsWith(`${field}[`);
  const issue = validator.validate(release, body).find((i) => !unchecked.some((f) => at(i.path, f)));
  return issue ? `${resourceType}${issue.path ? `.${issue.path}` : ''} ${issue.message}` : undefined;
}
