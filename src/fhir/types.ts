/** FHIR releases served by the target: R4 under `/fhir/R4`, R5 under `/fhir/R5`. */
export type Release = 'R4' | 'R5';

/** One schema problem. `path` is relative to the validated resource, e.g. `entry[3].resource.subject.reference`; `''` is the resource itself. */
export interface SchemaIssue {
  path: string;
  message: string;
}

export interface FhirValidator {
  /**
   * Validates `resource` against the official HL7 JSON schema of `release`, dispatching on `resourceType`.
   * Resources nested where the schema allows any resource (`contained`, Bundle `entry[].resource`,
   * `entry[].response.outcome`) are validated by their own type, with paths prefixed. `[]` means valid.
   */
  validate(release: Release, resource: unknown): SchemaIssue[];
  /** True when `resourceType` is configured for `release` and defined by its schema. */
  supports(release: Release, resourceType: string): boolean;
}
