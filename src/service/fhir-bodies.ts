/**
 * Run-wide rule: every successful FHIR response is a FHIR resource in JSON
 * that validates against the official HL7 schema of its release (spec: "What
 * the service does"; issue: every returned resource validates).
 */
import type { Exchange, Finding } from '../engine/types.js';
import type { FhirValidator, SchemaIssue } from '../fhir/index.js';

export const FHIR_BODY_REQUIREMENT = 'general.fhir-json-resources';

/** Characters of JSON text the validation memo keeps (its oldest entries leave first). */
const MEMO_MAX_CHARS = 8_000_000;

export function fhirBodyValidator(validator: FhirValidator) {
  // The same body often comes back again (a record read by several checks, the same search): about
  // 45 % of a quick run's validations. Equal texts parse to equal values, so they validate alike:
  // the key is the text the body was parsed from, else (no text given) its JSON text, which is
  // exact for a parsed value (JSON.parse makes no undefined or NaN).
  const memo = new Map<string, readonly SchemaIssue[]>();
  let memoChars = 0;
  const validate = (release: 'R4' | 'R5', body: object, text: string | undefined): readonly SchemaIssue[] => {
    const key = `${release}\0${text ?? JSON.stringify(body)}`;
    const known = memo.get(key);
    if (known) return known;
    const issues = validator.validate(release, body);
    if (key.length > MEMO_MAX_CHARS / 8) return issues;
    memo.set(key, issues);
    memoChars += key.length;
    for (const [old] of memo) {
      if (memoChars <= MEMO_MAX_CHARS) break;
      memo.delete(old);
      memoChars -= old.length;
    }
    return issues;
  };
  return (res: { path: string; status: number; json: unknown; text?: string | undefined; truncated: boolean }, ex: Exchange): Finding[] => {
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
    const issues = validate(release, body, res.text);
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
