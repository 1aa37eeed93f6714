/** Realistic synthetic RunResults for the report tests and bench/reports.ts. */
import type { CheckResult, Exchange, Outcome, RequirementVerdict, RunResult, RunTimeline } from '../../src/engine/types.js';

export const PATIENT_ID = '3f2b8c1e-9a4d-4e7b-8c21-5d6e7f8a9b0c';
export const OTHER_PATIENT_ID = 'a1b2c3d4-e5f6-4711-8899-aabbccddeeff';
export const CURP = 'GOMC800101HDFRRR09';
/** Text a hostile target might put anywhere. */
export const TRICKY = 'x</script><script>alert(1)</script> & ]]> <!-- \u0001\u001b[31m "quote" \'apos\' José Pérez 診療 ✓';

const AREAS = ['auth', 'errors', 'medication-request', 'encounter', 'pagination', 'limits', 'versioning', 'discovery'];
const TITLES: Record<string, string[]> = {
  auth: [
    'Token issued for a valid client assertion',
    'Expired access token gives 401 HPB-00107',
    'Missing bearer token gives 401 SVC-00004',
    'Token without the scope gives 403 HPB-00104',
  ],
  errors: ['Errors are OperationOutcome with issue[0].code', 'Catalog errors carry details.coding', 'Validation error gives 400 HPB-00101 with code invalid'],
  'medication-request': [
    'Create defaults status to active',
    'Update of a signed prescription gives 409',
    'Changing subject on update gives 422',
    "Read of another organization's id gives 404",
  ],
  encounter: [
    'Encounter read has the documented shape',
    'Search by status filters results',
    'Search by date prefix ge/lt',
    'Diagnosis rank 1 marks the primary',
  ],
  pagination: [
    'next link absent on the last page',
    '_count above 100 is capped',
    'Empty search is a valid Bundle with total 0',
    'Paging follows next links as given',
  ],
  limits: ['Rate-limit headers on every response', '429 carries Retry-After', 'Token issuance limited to 20 per minute'],
  versioning: ['Reads return ETag and Last-Modified', 'Stale If-Match gives 409 HPB-00103', 'meta.versionId changes on update'],
  discovery: ['CapabilityStatement served without authentication', 'OpenAPI operations carry x-service-scope', 'SMART configuration lists token_endpoint'],
};
const SPEC_SHA = 'a'.repeat(64);

function exchange(n: number, opts: { status?: number; body?: string; url?: string } = {}): Exchange {
  const url = opts.url ?? `https://fhir.example.test/fhir/R4/MedicationRequest?patient=${PATIENT_ID}&_count=20`;
  return {
    id: `x-${String(n).padStart(6, '0')}`,
    startedAt: '2025-03-01T10:00:01.000Z',
    durationMs: 12 + (n % 7),
    client: 'main',
    request: { method: 'GET', url, headers: { accept: 'application/fhir+json', authorization: 'Bearer $TOKEN' } },
    response: {
      status: opts.status ?? 200,
      headers: { 'content-type': 'application/fhir+json', 'x-correlation-id': `corr-${n}` },
      body:
        opts.body ??
        JSON.stringify({
          resourceType: 'Bundle',
          type: 'searchset',
          total: 1,
          link: [{ relation: 'self', url }],
          entry: [
            {
              resource: {
                resourceType: 'MedicationRequest',
                id: `mr-${n}`,
                subject: { reference: `Patient/${PATIENT_ID}`, display: 'José Pérez' },
                note: [{ text: TRICKY }],
              },
            },
          ],
        }),
      bodyBytes: 512,
    },
    curl: `curl -sS -H 'Authorization: Bearer $TOKEN' -H 'Accept: application/fhir+json' '${url}'`,
  };
}

function check(i: number, outcome: Outcome, extra: Partial<CheckResult> = {}): CheckResult {
  const area = AREAS[i % AREAS.length]!;
  const base: CheckResult = {
    id: `${area}.check-${String(i).padStart(4, '0')}`,
    title: TITLES[area]![Math.floor(i / AREAS.length) % TITLES[area]!.length]!,
    area,
    requirements: [`REQ-${String((i % 40) + 1).padStart(3, '0')}`],
    level: outcome === 'observation' ? 'observation' : i % 5 === 0 ? 'SHOULD' : 'MUST',
    outcome,
    findings: [],
    observations: [],
    evidence: [exchange(i)],
    curl: `curl -sS -H 'Authorization: Bearer $TOKEN' 'https://fhir.example.test/fhir/R4/Patient/${PATIENT_ID}'`,
    startedAt: '2025-03-01T10:00:00.000Z',
    durationMs: 20 + (i % 50),
  };
  if (outcome === 'fail') {
    const errorBody = JSON.stringify({
      resourceType: 'OperationOutcome',
      issue: [{ severity: 'error', code: 'processing', diagnostics: `CURP ${CURP} rejected: ${TRICKY}` }],
    });
    base.evidence = [exchange(i, { status: 500, body: errorBody })];
    base.message = `expected 404 with HPB-00102, got 500${i % 24 === 4 ? ` ${TRICKY}` : ''}`;
    base.expected = { status: 404, code: 'HPB-00102' };
    base.actual = { status: 500, diagnostics: `CURP ${CURP}` };
    base.findings = [{ message: 'status differs', requirement: base.requirements[0], expected: 404, actual: 500, exchange: base.evidence[0]!.id }];
  } else if (outcome === 'error') {
    base.message = `ERR_TIMEOUT: no response within 15000 ms${i % 24 === 9 ? ` ${TRICKY}` : ''}`;
    base.evidence = [{ ...exchange(i), response: undefined, error: 'timeout after 15000 ms' }];
  } else if (outcome === 'skip') {
    base.message = i % 2 === 0 ? 'no second organization configured' : 'excluded by profile quick';
    base.evidence = [];
  } else if (outcome === 'observation') {
    base.message = 'create success status observed';
    base.observations = [{ key: 'create.success-status', value: 201, note: 'spec: not shown' }];
  }
  return { ...base, ...extra };
}

const PATTERN: readonly Outcome[] = ['pass', 'pass', 'pass', 'pass', 'fail', 'pass', 'skip', 'observation', 'pass', 'error', 'pass', 'skip'];

export function syntheticRun(count: number): RunResult {
  const checks = Array.from({ length: count }, (_, i) => check(i, PATTERN[i % PATTERN.length]!));
  const requirements: RequirementVerdict[] = Array.from({ length: 45 }, (_, i) => ({
    id: `REQ-${String(i + 1).padStart(3, '0')}`,
    level: i % 7 === 0 ? 'observation' : 'MUST',
    text: `Requirement ${i + 1}: ${i === 3 ? TRICKY : 'the service answers as the spec says'}`,
    section: 'Endpoints',
    testable: i < 42,
    ...(i >= 42 ? { reason: 'not observable through the public API' } : {}),
    checks: [],
    outcome: 'untested',
  }));
  return {
    info: {
      runId: '2025-03-01T10-00-00Z-ab12',
      toolVersion: '0.1.0',
      specSha256: SPEC_SHA,
      target: { baseUrl: 'https://fhir.example.test', embedded: false },
      profile: 'full',
      config: { baseUrl: 'https://fhir.example.test', clients: [{ role: 'main', privateKey: '[redacted]' }] },
      deviations: ['token lifetime 600 s instead of 5 minutes'],
      startedAt: '2025-03-01T10:00:00.000Z',
      endedAt: '2025-03-01T10:04:30.500Z',
      interrupted: false,
    },
    checks,
    requirements,
    ledger: [
      {
        resourceType: 'MedicationRequest',
        id: '0b6f1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d',
        url: 'https://fhir.example.test/fhir/R4/MedicationRequest/0b6f1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d',
        createdBy: checks[0]?.id ?? 'none',
        at: '2025-03-01T10:00:02.000Z',
      },
    ],
    divergences: [`GET /fhir/R4/Observation in OpenAPI, absent from CapabilityStatement ${TRICKY}`],
    timeline: syntheticTimeline(checks),
  };
}

/**
 * A run timeline like a rate-limit episode's: the main key sends 70 requests 400 ms apart against a
 * ceiling of 60 per 60 s (the last 10 answered 429 with Retry-After: 30, then the suite waits), one
 * 401; the token endpoint issues 6 tokens of 120 s and refuses 2 (429); 3 requests without a key.
 * The first check of the `limits` area rests on the main key's stretch.
 */
export function syntheticTimeline(checks: readonly CheckResult[]): RunTimeline {
  const requests: RunTimeline['requests'] = [];
  const id = (n: number) => `x-${String(n).padStart(6, '0')}`;
  let n = 0;
  for (let k = 0; k < 70; k++) requests.push([1000 + k * 400, 20 + (k % 5), 0, k === 5 ? 401 : k >= 60 ? 429 : 200, id(n++)]);
  for (let k = 0; k < 8; k++) requests.push([500 + k * 9000, 40, 1, k >= 6 ? 429 : 200, id(n++)]);
  for (let k = 0; k < 3; k++) requests.push([200 + k * 100, 5, 2, 200, id(n++)]);
  requests.push([60_000, 15_000, 0, 0, id(n++)]);
  const limits = checks.find((c) => c.area === 'limits');
  return {
    version: 1,
    startedAt: '2025-03-01T10:00:00.000Z',
    requests,
    retryAfter: requests.filter((r) => r[3] === 429).map((r) => [r[0] + r[1], r[2], 30_000, r[4]]),
    waits: [
      [29_100, 0, 30_000, 'retry-after'],
      [2_000, 0, 350, 'pacing'],
      [80_000, -1, 5_000, 'check'],
    ],
    tokens: requests.filter((r) => r[2] === 1 && r[3] === 200).map((r) => [r[0], 0, r[0] + 120_000, r[4]]),
    lanes: [
      { name: 'main', kind: 'key', ceiling: 60, windowSec: 60 },
      { name: 'token endpoint', kind: 'token-endpoint', ceiling: 20, windowSec: 60 },
      { name: 'no key', kind: 'none' },
    ],
    tokenLifetimeSec: 120,
    checks: limits ? { [limits.id]: { from: 1000, to: 28_625, lanes: [0] } } : {},
  };
}
