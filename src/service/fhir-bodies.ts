/**
 * Run-wide rule: every successful FHIR response is a FHIR resource in JSON
 * that validates against the official HL7 schema of its release (spec: "What
 * the service does"; issue: every returned resource validates).
 */
import type { Exchange, Finding } from '../engine/types.js';
import type { FhirValidator } from '../fhir/index.js';

export const FHIR_BODY_REQUIREMENT = 'general.fhir-json-resources';

export function fhirBodyValidator(validator: FhirValidator) {
  return (res: { path: string; status: number; json: unknown; truncated: boolean }, ex: Exchange): Finding[] => {
    const release = /^\/fhir\/(R4|R5)\//.exec(res.path)?.[1] as 'R4' | 'R5' | undefined;
    if (!release || res.status < 200 || res.status >= 300 || res.truncated) return [];
    const body = res.json as { resourceType?: unknown } | undefined;
    if (typeof body !== 'object' || body === null || typeof body.resourceType !== 'string') {
      return [
        {
          message: `a ${res.status} from ${res.path} is not a FHIR resource in JSON`,
          requirement: FHIR_BODY_REQUIREMENT,
          expected: 'a JSON object with resourceType',
          actual: ex.response?.body?.slice(0, 120),
          exchange: ex.id,
        },
      ];
    }
    if (!validator.supports(release, body.resourceType)) return [];
    const issues = validator.validate(release, body);
    if (issues.length === 0) return [];
    return [
      {
        message: `${body.resourceType} from ${res.path} is not valid FHIR ${release}: ${issues
          .slice(0, 3)
          .map((i) => (i.path ? `${i.path}: ${i.message}` : i.message))
          .join('; ')}`,
        requirement: FHIR_BODY_REQUIREMENT,
        expected: `valid against the HL7 FHIR ${release} JSON schema`,
        actual: issues.slice(0, 10),
        exchange: ex.id,
      },
    ];
  };
}
